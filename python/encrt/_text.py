"""Python strings to the NUL-terminated UTF-8 arrays the C API takes."""
import ctypes


def one_text(text, what="text"):
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    if "\0" in text:
        raise ValueError(f"{what} contains a NUL character (the C API takes NUL-terminated strings)")
    return text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError (a ValueError)


def text_list(texts, what="texts"):
    """A list (or tuple) of str, not empty, as (encoded bytes list, char* array)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what} must be a list of str")
    texts = list(texts)
    if not texts:
        raise ValueError(f"{what} is empty")
    encoded = [one_text(t, f"{what}[{i}]") for i, t in enumerate(texts)]
    array = (ctypes.c_char_p * len(encoded))(*encoded)
    return encoded, array


def byte_to_char_offsets(text):
    """at[b] = the index in `text` of the character that starts at UTF-8 byte b (and at the end)."""
    at = {}
    b = 0
    for i, ch in enumerate(text):
        at[b] = i
        b += len(ch.encode("utf-8"))
    at[b] = len(text)
    return at
