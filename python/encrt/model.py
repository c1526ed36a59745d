"""encrt.Model: a model file mapped once, its sessions, its tokenizer, and the text-in helpers
(encode like SentenceTransformer.encode, classify, ner, rerank)."""
import ctypes
import os
import threading
import weakref
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _lib
from ._handle import Handle
from ._text import one_text, text_list
from .session import Session
from .tasks import Classifier, Reranker, Tagger, task_options
from .tokenizer import Tokenizer


_DTYPE_NAMES = {"f32": "fp32", "f16": "fp16", "i8": "int8"}  # the file's weight_type -> --dtype


class ModelDims(NamedTuple):
    vocab_size: int
    hidden_size: int
    num_heads: int
    num_layers: int
    max_seq_len: int


class HeadInfo(NamedTuple):
    kind: str            # "sequence_classification" | "token_classification"
    problem_type: str    # "single_label" | "multi_label" | "regression"
    score_function: str  # "softmax" | "sigmoid" | "identity": how "scores" come from "logits"
    pooling: str         # sequence classification: the pooling the classifier reads
    labels: Tuple[str, ...]


def _aligned_copy(data):
    """The bytes of `data` (bytes, bytearray, memoryview or a numpy array) in a 64-byte-aligned
    numpy buffer of their own."""
    view = memoryview(data).cast("B")
    if view.nbytes == 0:
        raise ValueError("Model.from_bytes: no bytes")
    block = np.empty(view.nbytes + 64, dtype=np.uint8)
    start = (-block.ctypes.data) % 64
    out = block[start:start + view.nbytes]
    out[:] = np.frombuffer(view, dtype=np.uint8)
    return out


class _ModelHandle(Handle):
    """The encrt_model itself. Everything that borrows it (sessions, the tokenizer, tasks) holds a
    reference to this object, not to the Model: so the C model is freed only after the last of
    them, and no reference cycle leaves the order of frees to the garbage collector."""
    _free = _lib.lib.encrt_model_free
    _name = "Model"

    def __init__(self, path=None, data=None, verify=False):
        super().__init__()
        self.children = weakref.WeakSet()
        options = _lib.LoadOptions()
        _lib.lib.encrt_load_options_init(ctypes.byref(options))
        options.verify_checksums = 1 if verify else 0
        ptr = ctypes.c_void_p()
        if data is None:
            _lib.check(_lib.lib.encrt_model_load_ex(os.fsencode(path), ctypes.byref(options), ctypes.byref(ptr)),
                       f"Model({path!r})")
        else:
            # The C API uses the bytes in place (no copy) and wants them 64-byte aligned and alive
            # until the model is freed: this handle keeps its own aligned copy for as long as it lives.
            self._bytes = _aligned_copy(data)
            _lib.check(_lib.lib.encrt_model_load_from_memory(self._bytes.ctypes.data, self._bytes.nbytes,
                                                             ctypes.byref(options), ctypes.byref(ptr)),
                       "Model.from_bytes")
        self._ptr = ptr.value
        dims = [ctypes.c_int() for _ in range(5)]
        _lib.check(_lib.lib.encrt_model_dims(self._ptr, *[ctypes.byref(d) for d in dims]))
        self.dims = ModelDims(*(d.value for d in dims))
        self.head = self._read_head()
        self.labels = list(self.head.labels) if self.head else []

    def adopt(self, child):
        self.children.add(child)

    def close(self):
        for child in list(self.children):
            child.close()
        super().close()

    def _read_head(self) -> Optional[HeadInfo]:
        has = ctypes.c_int()
        _lib.check(_lib.lib.encrt_model_has_head(self._ptr, ctypes.byref(has)))
        if not has.value:
            return None
        info = _lib.HeadInfo()
        info.struct_size = ctypes.sizeof(_lib.HeadInfo)
        _lib.check(_lib.lib.encrt_model_head(self._ptr, ctypes.byref(info)))
        labels = []
        for i in range(info.num_labels):
            label = ctypes.c_char_p()
            _lib.check(_lib.lib.encrt_model_head_label(self._ptr, i, ctypes.byref(label)))
            labels.append(label.value.decode())
        return HeadInfo(_lib.HEAD_KINDS.get(info.kind, str(info.kind)), info.problem_type.decode(),
                        info.score_function.decode(), info.pooling.decode(), tuple(labels))

    def metadata(self, key):
        c_key = key.encode()
        length = ctypes.c_size_t()
        buf = ctypes.create_string_buffer(256)
        status = _lib.lib.encrt_model_metadata(self._handle(), c_key, buf, len(buf), ctypes.byref(length))
        if status != _lib.OK and length.value >= len(buf):
            buf = ctypes.create_string_buffer(length.value + 1)
            status = _lib.lib.encrt_model_metadata(self._ptr, c_key, buf, len(buf), ctypes.byref(length))
        if status != _lib.OK:
            return None  # the only other failure: no such entry
        return buf.value.decode("utf-8", "replace")


class Model:
    """A .encrt file, mapped read-only (weights used in place). `threads`, `backend` and
    `backend_options` are the defaults of its sessions and of the sessions that encode, classify,
    ner and rerank keep (one each, planned once, serialized by a lock; for parallel runs make one
    Session per thread with model.session(...)).

    close() (or leaving a `with` block) frees the model and closes every session, tokenizer and
    task made from it. Without close(), the model is freed when the Model and everything made from
    it are gone."""

    def __init__(self, path, threads=1, backend=None, backend_options=None, verify=False, _data=None):
        """verify=True checks every checksum the file carries (each tensor's and the structure's)
        before the model is used: a damaged file is an InvalidModelError naming the first damaged
        tensor, and a file without checksums is refused too (README "Model integrity")."""
        self._lock = threading.RLock()
        self._tasks = {}
        self._tokenizer = None
        self._encode_session = None
        self.path = os.fspath(path) if _data is None else path
        self.threads = int(threads)
        self.backend = backend
        self.backend_options = backend_options
        self._h = _ModelHandle(self.path, verify=verify) if _data is None else _ModelHandle(data=_data, verify=verify)
        self.dims = self._h.dims
        self.head = self._h.head
        self.labels = self._h.labels
        # The converter's --dtype: fp32, fp16 or int8 (an int8 model may keep some layers in fp16:
        # metadata("layer_weight_types") tells which).
        weight_type = self._h.metadata("weight_type")
        self.dtype = _DTYPE_NAMES.get(weight_type, weight_type)

    @classmethod
    def from_bytes(cls, data, threads=1, backend=None, backend_options=None, verify=False):
        """A model from the bytes of a .encrt file in memory (e.g. received over the network), with
        no temporary file: the model keeps one 64-byte-aligned copy of them while it lives."""
        return cls("<bytes>", threads=threads, backend=backend, backend_options=backend_options, verify=verify,
                   _data=data)

    def __repr__(self):
        state = "closed" if self.closed else f"{self.dtype}, hidden {self.hidden_size}, {self.num_layers} layers"
        return f"encrt.Model({self.path!r}: {state})"

    def __enter__(self):
        self._h._handle()
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._h.closed

    def close(self):
        """Closes every session, tokenizer and task made from this model, then the model. Idempotent."""
        with self._lock:
            self._tasks.clear()
            self._tokenizer = None
            self._encode_session = None
            self._h.close()

    def __del__(self):
        # Only what this object keeps for itself; sessions the caller holds keep the C model alive.
        try:
            for child in [self._tokenizer, self._encode_session, *self._tasks.values()]:
                if child is not None:
                    child.close()
        except Exception:
            pass

    @property
    def vocab_size(self):
        return self.dims.vocab_size

    @property
    def hidden_size(self):
        return self.dims.hidden_size

    @property
    def num_heads(self):
        return self.dims.num_heads

    @property
    def num_layers(self):
        return self.dims.num_layers

    @property
    def max_seq_len(self):
        return self.dims.max_seq_len

    def metadata(self, key):
        """The file's metadata entry `key` (as `encrt inspect` lists them), or None when absent."""
        return self._h.metadata(key)

    # ---- sessions and the tokenizer
    def session(self, batch=1, seq=None, threads=None, backend=None, backend_options=None, attention_layer=None,
                src_mask=False, padding="auto"):
        """A Session planned for at most `batch` rows of `seq` tokens (None: 128, or the model's
        max_seq_len if smaller). padding: "auto" (pack the real tokens of a padded batch where the
        session can), "packed" or "padded" (README "Packed batches")."""
        return Session(self._h, batch=batch, seq=seq, threads=self.threads if threads is None else threads,
                       backend=self.backend if backend is None else backend,
                       backend_options=self.backend_options if backend_options is None else backend_options,
                       attention_layer=attention_layer, src_mask=src_mask, padding=padding)

    def tune(self, batch=1, seq=None, threads=None, backend=None, backend_options=None):
        """Which of the backend's options run this model fastest on this machine at (batch, seq)
        (README "Tuning"): each candidate checked against the defaults' hidden state and timed side
        by side with the best so far. Returns Tuned(options, default_ms, tuned_ms): options is a
        dict to pass as backend_options (to model.session(), or to Model(...) for every session);
        the times are per run (GPU time where the backend has a clock, else wall time)."""
        options = _lib.SessionOptions()
        _lib.lib.encrt_session_options_init(ctypes.byref(options))
        options.threads = int(self.threads if threads is None else threads)
        backend = self.backend if backend is None else backend
        backend_options = self.backend_options if backend_options is None else backend_options
        if backend is not None:
            options.backend = str(backend).encode()
        if backend_options is not None:
            options.backend_options = str(_options_text(backend_options)).encode()
        seq = int(min(128, self.max_seq_len) if seq is None else seq)
        length, default_ms, tuned_ms = ctypes.c_size_t(), ctypes.c_double(), ctypes.c_double()
        buffer = ctypes.create_string_buffer(1024)
        for _ in range(2):  # once more with the length asked for, if 1024 bytes were too few
            status = _lib.lib.encrt_tune_backend_options(
                self._h._handle(), ctypes.byref(options), int(batch), seq, buffer, len(buffer), ctypes.byref(length),
                ctypes.byref(default_ms), ctypes.byref(tuned_ms))
            if status == 0 or length.value < len(buffer):
                break
            buffer = ctypes.create_string_buffer(length.value + 1)
        _lib.check(status, "Model.tune")
        text = buffer.value.decode()
        pairs = dict(item.split("=", 1) for item in text.split(",")) if text else {}
        return Tuned(pairs, default_ms.value, tuned_ms.value)

    @property
    def tokenizer(self):
        """The model file's tokenizer (UnsupportedError when the file has no vocabulary)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = Tokenizer(self._h)
            return self._tokenizer

    def tokenize(self, texts, pairs=None, **options):
        """model.tokenizer(texts, pairs, ...): int32 [batch, seq] input_ids, attention_mask,
        token_type_ids (see Tokenizer.__call__ for the options)."""
        return self.tokenizer(texts, pairs, **options)

    # ---- sentence embeddings
    def encode(self, sentences, batch_size=32, normalize_embeddings=False, max_length=None):
        """Sentence embeddings as SentenceTransformer.encode gives them: float32 [n, hidden] for a
        list of str, [hidden] for one str. They are the model's `pooled` output (its pooling, and
        the L2 normalization of a sentence-transformers package with a Normalize module);
        normalize_embeddings=True scales each to unit length as well. Texts are cut at max_length
        tokens (None: the model's max_seq_len; sentence-transformers' own max_seq_length, 256 for
        all-MiniLM-L6-v2, is not stored in the file: pass it for the same cut on longer texts).
        Texts are sorted by length and run batch_size at a time, each batch padded to its longest.
        ValueError for an empty list or anything but str."""
        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        text_list(texts, "sentences")  # every one a str, and at least one
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        batch_size = min(int(batch_size), len(texts))
        # Longest first, by characters, as sentence-transformers orders them: batches of similar
        # lengths pad little, and the first batch plans the session for the rest.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.hidden_size), dtype=np.float32)
        with self._lock:
            for first in range(0, len(texts), batch_size):
                rows = order[first:first + batch_size]
                tokens = self.tokenize([texts[i] for i in rows], max_length=max_length)
                session = self._session_for(batch_size, tokens["input_ids"].shape[1])
                out[rows] = session.run(tokens["input_ids"], tokens["attention_mask"], tokens["token_type_ids"],
                                        outputs=("pooled",))["pooled"]
        if normalize_embeddings:
            # As torch.nn.functional.normalize (what sentence-transformers calls): x / max(|x|, 1e-12).
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), np.float32(1e-12))
        return out[0] if single else out

    def _session_for(self, batch, seq):
        """The encode session, planned again only when a call needs more rows or tokens than it
        has (its seq grows in steps of 64, up to the model's maximum)."""
        s = self._encode_session
        if s is None or s.closed or s.batch < batch or s.seq < seq:
            if s is not None:
                s.close()
            seq = min(self.max_seq_len, max(seq, -(-seq // 64) * 64, 0 if s is None else s.seq))
            batch = max(batch, 0 if s is None else s.batch)
            self._encode_session = s = self.session(batch=batch, seq=seq)
        return s

    # ---- task heads
    def _task(self, cls, batch_size, max_length):
        key = (int(batch_size), max_length)
        task = self._tasks.get(cls)
        if task is None or task.closed or task._key != key:
            if task is not None:
                task.close()
            if int(batch_size) < 1:
                raise ValueError(f"batch_size must be >= 1, not {batch_size}")
            options = task_options(batch_size, max_length, True, self.threads, self.backend,
                                   _options_text(self.backend_options))
            task = cls(self._h, options, self.labels)
            task._key = key
            self._tasks[cls] = task
        return task

    def classify(self, texts, pairs=None, batch_size=16, max_length=None):
        """Sequence classification of a str (a dict), or of a list of str (a list of dicts), or of
        pairs (texts[i] with pairs[i], e.g. premise and hypothesis): {"label", "label_id",
        "score", "scores": {label: score}}; scores are the head's softmax, sigmoid (multi-label,
        one-logit heads) or the logits (regression). UnsupportedError for a model without a
        sequence classification head."""
        single = isinstance(texts, str)
        if single and isinstance(pairs, str):
            pairs = [pairs]
        items = [texts] if single else list(texts)
        text_list(items)  # bad input is refused before the classifier is made
        if pairs is not None:
            text_list(pairs, "pairs")
        with self._lock:
            out = self._task(Classifier, batch_size, max_length).classify(items, pairs)
        return out[0] if single else out

    def ner(self, texts, aggregation="simple", batch_size=16, max_length=None):
        """Named entities of a str (a list of dicts), or of each str of a list (a list of lists):
        {"label", "score", "start", "end", "word"}, grouped by Hugging Face's token-classification
        pipeline's strategy `aggregation` ("none", "simple", "first", "average", "max"); the "O"
        label is dropped; text[start:end] == word. UnsupportedError for a model without a token
        classification head."""
        single = isinstance(texts, str)
        items = [texts] if single else list(texts)
        text_list(items)  # bad input is refused before the tagger is made
        with self._lock:
            tagger = self._task(Tagger, batch_size, max_length)
            out = [tagger.tag(t, aggregation) for t in items]
        return out[0] if single else out

    def rerank(self, query, documents, top_k=None, batch_size=16, max_length=None):
        """Documents ordered by a cross-encoder's relevance to query ([CLS] query [SEP] document
        [SEP]): [{"index", "score", "text"}], most relevant first, the top_k of them (None: all);
        score is the one logit's sigmoid. UnsupportedError for a model without a one-logit head."""
        one_text(query, "query")  # bad input is refused before the reranker is made
        text_list(documents, "documents")
        with self._lock:
            ranked = self._task(Reranker, batch_size, max_length).rank(query, documents)
        return ranked if top_k is None else ranked[:int(top_k)]


class Tuned(NamedTuple):
    """Model.tune()'s result: the backend options to use and the time per run, in ms, of the
    defaults and of those options, measured side by side."""
    options: dict
    default_ms: float
    tuned_ms: float


def _options_text(options):
    if isinstance(options, dict):
        return ",".join(f"{k}={v}" for k, v in options.items())
    return options
