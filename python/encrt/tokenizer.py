"""The model's own tokenizer (BERT WordPiece, the ids Hugging Face's BertTokenizerFast gives), over
encrt_tokenizer_encode_batch: texts, or pairs, padded with [PAD] to the longest."""
import ctypes

import numpy as np

from . import _lib
from ._handle import Handle
from ._text import text_list

_I32 = ctypes.POINTER(ctypes.c_int32)


def _pointer(array, ctype):
    return array.ctypes.data_as(ctypes.POINTER(ctype))


class Tokenizer(Handle):
    """Made by Model.tokenizer; thread-safe (the C++ tokenizer is immutable after creation)."""
    _free = _lib.lib.encrt_tokenizer_free

    def __init__(self, owner):
        super().__init__()
        self._owner = owner  # an encrt.model._ModelHandle: kept alive while this tokenizer lives
        ptr = ctypes.c_void_p()
        _lib.check(_lib.lib.encrt_tokenizer_create(owner._handle(), ctypes.byref(ptr)), "Tokenizer")
        self._ptr = ptr.value
        owner.adopt(self)

    def __call__(self, texts, pairs=None, max_length=None, truncation="longest_first", truncate=True,
                 return_details=False):
        """Tokenizes texts (a str or a list of str) and, when pairs is given (the same count), the
        pairs [CLS] text [SEP] pair [SEP]. Returns a dict of int32 [batch, seq] arrays: input_ids,
        attention_mask, token_type_ids and, with return_details, special_tokens_mask, word_ids,
        sequence_ids (-1 where Hugging Face says None) and offsets ([batch, seq, 2], UTF-8 byte
        offsets into each token's own text, as the C API gives them). max_length: tokens per text
        or pair, specials included (None: the model's max_seq_len); longer ones are cut by
        `truncation` ("longest_first", "only_first", "only_second"), or are an error when
        truncate is False."""
        single = isinstance(texts, str)
        encoded, c_texts = text_list([texts] if single else texts)
        c_pairs = None
        if pairs is not None:
            if isinstance(pairs, str) and single:
                pairs = [pairs]
            _, c_pairs = text_list(pairs, "pairs")
            if len(c_pairs) != len(c_texts):
                raise ValueError(f"{len(c_texts)} texts but {len(c_pairs)} pairs")
        if truncation not in _lib.TRUNCATIONS:
            raise ValueError(f"unknown truncation {truncation!r} (one of {', '.join(_lib.TRUNCATIONS)})")
        limit = self._owner.dims.max_seq_len if max_length is None else int(max_length)
        if limit <= 0:
            raise ValueError(f"max_length must be >= 1, not {max_length}")
        options = _lib.EncodeOptions()
        _lib.lib.encrt_encode_options_init(ctypes.byref(options))
        options.max_length = 0 if max_length is None else limit
        options.truncate = 1 if truncate else 0
        options.truncation = _lib.TRUNCATIONS[truncation]
        batch = len(encoded)
        # Truncated rows never exceed the limit (an untruncated longer one is an error), so one
        # call with room for batch x limit tokens always suffices.
        capacity = batch * limit
        names = ["input_ids", "attention_mask", "token_type_ids"]
        if return_details:
            names += ["special_tokens_mask", "word_ids", "sequence_ids"]
        buffers = {name: np.empty(capacity, dtype=np.int32) for name in names}
        arrays = _lib.TokenArrays()
        _lib.lib.encrt_token_arrays_init(ctypes.byref(arrays))
        arrays.capacity = capacity
        fields = {"input_ids": "ids"}
        for name, buf in buffers.items():
            setattr(arrays, fields.get(name, name), _pointer(buf, ctypes.c_int32))
        offsets = None
        if return_details:
            offsets = np.empty(2 * capacity, dtype=np.uintp)
            arrays.offsets = _pointer(offsets, ctypes.c_size_t)
        seq = ctypes.c_size_t()
        _lib.check(_lib.lib.encrt_tokenizer_encode_batch(self._handle(), c_texts, c_pairs, batch,
                                                         ctypes.byref(options), ctypes.byref(arrays),
                                                         ctypes.byref(seq)), "tokenize")
        n = batch * seq.value
        out = {name: buf[:n].reshape(batch, seq.value).copy() for name, buf in buffers.items()}
        if offsets is not None:
            out["offsets"] = offsets[:2 * n].reshape(batch, seq.value, 2).astype(np.int64)
        return out
