"""A session: one model planned for at most (batch, seq), run on numpy arrays."""
import ctypes

import numpy as np

from . import _lib
from ._handle import Handle

_NUMPY_DTYPES = {_lib.DTYPE_F32: np.float32, _lib.DTYPE_F16: np.float16, _lib.DTYPE_I8: np.int8,
                 _lib.DTYPE_U8: np.uint8, _lib.DTYPE_I32: np.int32}
_INT32 = np.iinfo(np.int32)


def _id_array(value, name, shape=None):
    """An int32 C-contiguous [batch, seq] array: the caller's own memory when it already is one,
    else converted once. Integers outside int32 are refused (a cast would wrap them into ids that
    look valid); floats are refused too (0.9 is not an id)."""
    a = np.asarray(value)
    if a.dtype == np.bool_:
        a = a.astype(np.int32)
    if not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, not {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D [batch, seq], not of shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} has shape {a.shape}, input_ids {shape}")
    if a.dtype != np.int32 and a.size:
        lo, hi = a.min(), a.max()
        if lo < _INT32.min or hi > _INT32.max:
            bad = lo if lo < _INT32.min else hi
            raise ValueError(f"{name} holds {bad}, outside int32")
    return np.ascontiguousarray(a, dtype=np.int32)


def _src_mask_array(value, batch, seq):
    """bool (or 0/1 integers, uint8): 1 = may NOT attend; float: added to the scores. [seq, seq] or
    [batch, seq, seq]."""
    a = np.asarray(value)
    if a.dtype == np.bool_:
        a, kind = np.ascontiguousarray(a, dtype=np.uint8), "bool"
    elif np.issubdtype(a.dtype, np.integer):
        if a.size and (a.min() < 0 or a.max() > 1):
            raise ValueError("an integer src_mask must hold 0 and 1 only (1 = may not attend)")
        a, kind = np.ascontiguousarray(a, dtype=np.uint8), "bool"
    elif np.issubdtype(a.dtype, np.floating):
        a, kind = np.ascontiguousarray(a, dtype=np.float32), "float"
    else:
        raise TypeError(f"src_mask must be bool, integer or float, not {a.dtype}")
    if a.shape == (seq, seq):
        shape = _lib.SRC_MASK_SEQ_SEQ
    elif a.shape == (batch, seq, seq):
        shape = _lib.SRC_MASK_BATCH_SEQ_SEQ
    else:
        raise ValueError(f"src_mask must be [seq, seq] = {(seq, seq)} or [batch, seq, seq] = {(batch, seq, seq)}, "
                         f"not {a.shape}")
    return a, kind, shape


class Session(Handle):
    """Made by Model.session(). A session is not thread-safe: use one per thread (several may run
    on one model at once), or one from different threads in turn."""
    _free = _lib.lib.encrt_session_free

    def __init__(self, owner, batch=1, seq=None, threads=1, backend=None, backend_options=None,
                 attention_layer=None, src_mask=False, padding="auto"):
        super().__init__()
        self._owner = owner  # an encrt.model._ModelHandle: kept alive while this session lives
        options = _lib.SessionOptions()
        _lib.lib.encrt_session_options_init(ctypes.byref(options))
        options.max_batch = int(batch)
        options.max_seq = int(min(128, owner.dims.max_seq_len) if seq is None else seq)
        options.threads = int(threads)
        options.attention_layer = -1 if attention_layer is None else int(attention_layer)
        if backend is not None:
            options.backend = str(backend).encode()
        if backend_options is not None:
            if isinstance(backend_options, dict):
                backend_options = ",".join(f"{k}={v}" for k, v in backend_options.items())
            options.backend_options = str(backend_options).encode()
        options.src_mask = 1 if src_mask else 0
        if padding not in _lib.PADDINGS:
            raise ValueError(f"padding must be one of {', '.join(_lib.PADDINGS)}, got {padding!r}")
        options.padding = _lib.PADDINGS[padding]
        ptr = ctypes.c_void_p()
        _lib.check(_lib.lib.encrt_session_create(owner._handle(), ctypes.byref(options), ctypes.byref(ptr)),
                   "Session")
        self._ptr = ptr.value
        self.batch = options.max_batch
        self.seq = options.max_seq
        owner.adopt(self)
        count = ctypes.c_size_t()
        _lib.check(_lib.lib.encrt_session_output_count(self._ptr, ctypes.byref(count)))
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            _lib.check(_lib.lib.encrt_session_output_name(self._ptr, i, ctypes.byref(name)))
            names.append(name.value.decode())
        self.output_names = tuple(names)

    def run(self, input_ids, attention_mask=None, token_type_ids=None, src_mask=None, outputs=None):
        """Runs [batch, seq] integer arrays (batch and seq at most the session's) and returns a dict
        of numpy arrays, one per output ("hidden" [batch, seq, hidden], "pooled" [batch, hidden],
        and "attention", "logits", "scores", "labels" where the session has them), copied out of
        the session's memory. outputs: names to return (default: all)."""
        ids = _id_array(input_ids, "input_ids")
        batch, seq = ids.shape
        mask = None if attention_mask is None else _id_array(attention_mask, "attention_mask", ids.shape)
        types = None if token_type_ids is None else _id_array(token_type_ids, "token_type_ids", ids.shape)
        names = self.output_names if outputs is None else tuple(outputs)
        unknown = [n for n in names if n not in self.output_names]
        if unknown:
            raise ValueError(f"no output {unknown[0]!r}: this session has {', '.join(self.output_names)}")
        inputs = _lib.RunInputs()
        _lib.lib.encrt_run_inputs_init(ctypes.byref(inputs))
        inputs.batch, inputs.seq = batch, seq
        i32 = ctypes.POINTER(ctypes.c_int32)
        inputs.input_ids = ids.ctypes.data_as(i32)
        if mask is not None:
            inputs.attention_mask = mask.ctypes.data_as(i32)
        if types is not None:
            inputs.token_type_ids = types.ctypes.data_as(i32)
        src = None
        if src_mask is not None:
            src, kind, shape = _src_mask_array(src_mask, batch, seq)
            inputs.src_mask_shape = shape
            if kind == "bool":
                inputs.src_mask_bool = src.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))
            else:
                inputs.src_mask_float = src.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        _lib.check(_lib.lib.encrt_session_run_inputs(self._handle(), ctypes.byref(inputs)), "Session.run")
        # ids, mask, types and src stay referenced until here: the C call reads them.
        del ids, mask, types, src
        return {name: self._copy_output(name) for name in names}

    def _copy_output(self, name):
        info = _lib.TensorInfo()
        info.struct_size = ctypes.sizeof(_lib.TensorInfo)
        c_name = name.encode()
        _lib.check(_lib.lib.encrt_session_output_info(self._ptr, c_name, ctypes.byref(info)), name)
        out = np.empty(tuple(info.shape[:info.rank]), dtype=_NUMPY_DTYPES[info.dtype])
        if out.nbytes != info.bytes:
            raise RuntimeError(f"output {name}: {info.bytes} bytes for shape {out.shape} of {out.dtype}")
        _lib.check(_lib.lib.encrt_session_copy_output(self._ptr, c_name, out.ctypes.data_as(ctypes.c_void_p),
                                                      out.nbytes), name)
        return out
