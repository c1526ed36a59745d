"""libencrt's C API through ctypes: the shared library found beside this package, and the
prototypes of the functions the package calls (runtime/include/encrt/encrt.h and tasks.h).

The structs mirror the C declarations field for field; each is filled by the C API's own *_init
function, which sets struct_size and the defaults, so the library checks the size it was built with.
ctypes releases the GIL during every call, so sessions on different threads run in parallel."""
import ctypes
import os
import sys

from .errors import raise_for_status

c_int = ctypes.c_int
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_float = ctypes.c_float
P = ctypes.POINTER

OK = 0

DTYPE_F32, DTYPE_F16, DTYPE_I8, DTYPE_U8, DTYPE_I32 = range(5)
TRUNCATIONS = {"longest_first": 0, "only_first": 1, "only_second": 2}
SRC_MASK_SEQ_SEQ, SRC_MASK_BATCH_SEQ_SEQ = 0, 1
PADDINGS = {"auto": 0, "packed": 1, "padded": 2}
HEAD_KINDS = {0: "sequence_classification", 1: "token_classification"}


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("max_batch", c_int), ("max_seq", c_int), ("threads", c_int),
                ("attention_layer", c_int), ("arena", c_void_p), ("arena_size", c_size_t),
                ("backend", c_char_p), ("backend_options", c_char_p), ("src_mask", c_int), ("padding", c_int)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("verify_checksums", c_int)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("name", c_char_p), ("dtype", c_int), ("rank", c_int),
                ("shape", ctypes.c_int64 * 8), ("device", c_char_p), ("data", c_void_p), ("bytes", c_size_t)]


class EncodeOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("max_length", c_int), ("truncate", c_int), ("truncation", c_int)]


class TokenArrays(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("capacity", c_size_t), ("ids", P(ctypes.c_int32)),
                ("token_type_ids", P(ctypes.c_int32)), ("attention_mask", P(ctypes.c_int32)),
                ("special_tokens_mask", P(ctypes.c_int32)), ("word_ids", P(ctypes.c_int32)),
                ("sequence_ids", P(ctypes.c_int32)), ("offsets", P(c_size_t))]


class RunInputs(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("batch", c_int), ("seq", c_int), ("input_ids", P(ctypes.c_int32)),
                ("attention_mask", P(ctypes.c_int32)), ("token_type_ids", P(ctypes.c_int32)),
                ("src_mask_bool", P(ctypes.c_uint8)), ("src_mask_float", P(c_float)), ("src_mask_shape", c_int)]


class HeadInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("kind", c_int), ("problem_type", c_char_p),
                ("score_function", c_char_p), ("pooling", c_char_p), ("num_labels", c_int)]


class TaskOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_size_t), ("max_batch", c_int), ("max_seq", c_int), ("truncate", c_int),
                ("threads", c_int), ("backend", c_char_p), ("backend_options", c_char_p)]


class Entity(ctypes.Structure):
    _fields_ = [("label", c_char_p), ("score", c_float), ("start", c_size_t), ("end", c_size_t)]


# (name, result type, argument types); a result type of c_int is an encrt_status.
_PROTOTYPES = [
    ("encrt_version", c_char_p, []),
    ("encrt_last_error", c_char_p, []),
    ("encrt_model_load", c_int, [c_char_p, P(c_void_p)]),
    ("encrt_load_options_init", None, [P(LoadOptions)]),
    ("encrt_model_load_ex", c_int, [c_char_p, P(LoadOptions), P(c_void_p)]),
    ("encrt_model_load_from_memory", c_int, [c_void_p, c_size_t, P(LoadOptions), P(c_void_p)]),
    ("encrt_model_free", None, [c_void_p]),
    ("encrt_model_dims", c_int, [c_void_p, P(c_int), P(c_int), P(c_int), P(c_int), P(c_int)]),
    ("encrt_model_has_head", c_int, [c_void_p, P(c_int)]),
    ("encrt_model_head", c_int, [c_void_p, P(HeadInfo)]),
    ("encrt_model_head_label", c_int, [c_void_p, c_int, P(c_char_p)]),
    ("encrt_model_metadata", c_int, [c_void_p, c_char_p, ctypes.c_char_p, c_size_t, P(c_size_t)]),
    ("encrt_session_options_init", None, [P(SessionOptions)]),
    ("encrt_session_create", c_int, [c_void_p, P(SessionOptions), P(c_void_p)]),
    ("encrt_session_free", None, [c_void_p]),
    ("encrt_tune_backend_options", c_int,
     [c_void_p, P(SessionOptions), c_int, c_int, ctypes.c_char_p, c_size_t, P(c_size_t), P(ctypes.c_double),
      P(ctypes.c_double)]),
    ("encrt_run_inputs_init", None, [P(RunInputs)]),
    ("encrt_session_run_inputs", c_int, [c_void_p, P(RunInputs)]),
    ("encrt_session_output_count", c_int, [c_void_p, P(c_size_t)]),
    ("encrt_session_output_name", c_int, [c_void_p, c_size_t, P(c_char_p)]),
    ("encrt_session_output_info", c_int, [c_void_p, c_char_p, P(TensorInfo)]),
    ("encrt_session_copy_output", c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
    ("encrt_tokenizer_create", c_int, [c_void_p, P(c_void_p)]),
    ("encrt_tokenizer_free", None, [c_void_p]),
    ("encrt_encode_options_init", None, [P(EncodeOptions)]),
    ("encrt_token_arrays_init", None, [P(TokenArrays)]),
    ("encrt_tokenizer_encode_batch", c_int,
     [c_void_p, P(c_char_p), P(c_char_p), c_size_t, P(EncodeOptions), P(TokenArrays), P(c_size_t)]),
    ("encrt_task_options_init", None, [P(TaskOptions)]),
    ("encrt_classifier_create", c_int, [c_void_p, P(TaskOptions), P(c_void_p)]),
    ("encrt_classifier_free", None, [c_void_p]),
    ("encrt_classifier_classify", c_int,
     [c_void_p, P(c_char_p), P(c_char_p), c_size_t, P(c_int), P(c_float), c_size_t]),
    ("encrt_reranker_create", c_int, [c_void_p, P(TaskOptions), P(c_void_p)]),
    ("encrt_reranker_free", None, [c_void_p]),
    ("encrt_reranker_rank", c_int, [c_void_p, c_char_p, P(c_char_p), c_size_t, P(c_size_t), P(c_float)]),
    ("encrt_tagger_create", c_int, [c_void_p, P(TaskOptions), P(c_void_p)]),
    ("encrt_tagger_free", None, [c_void_p]),
    ("encrt_tagger_tag", c_int, [c_void_p, c_char_p, c_char_p, P(Entity), c_size_t, P(c_size_t)]),
]


def _library_path():
    """ENCRT_LIBRARY (a libencrt.so to use instead, e.g. a build tree's), else the one that
    `pip install` put beside this file."""
    override = os.environ.get("ENCRT_LIBRARY")
    if override:
        return override
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libencrt.so", "libencrt.dylib"):
        path = os.path.join(here, name)
        if os.path.exists(path):
            return path
    raise ImportError(f"encrt: libencrt.so is not in {here}: install the package with `pip install .` from "
                      "the encrt checkout, or point ENCRT_LIBRARY at a built libencrt.so")


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(f"encrt: cannot load {path}: {e}") from e
    for name, restype, argtypes in _PROTOTYPES:
        try:
            fn = getattr(lib, name)
        except AttributeError as e:
            raise ImportError(f"encrt: {path} has no {name} (a libencrt.so older than this package?)") from e
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _load()


def last_error():
    message = lib.encrt_last_error()
    return message.decode("utf-8", "replace") if message else ""


def check(status, what=""):
    """Raises the exception of a failed call, with the C API's message (encrt_last_error, which
    belongs to the calling thread, so it is read right after the call)."""
    if status != OK:
        message = last_error()
        raise_for_status(status, f"{what}: {message}" if what and message else (message or what))


def version():
    return lib.encrt_version().decode()


if sys.byteorder != "little":  # the model format and the arrays below assume little-endian hosts
    raise ImportError("encrt: big-endian hosts are not supported")
