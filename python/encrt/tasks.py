"""The task heads of encrt/tasks.h: a classifier, a cross-encoder reranker and an entity tagger
over a model with the matching head, each with its own session planned once for
(max_batch, max_seq). Results are plain Python structures, as the CLI's --json prints them, except
that entity offsets index the Python str (the C API's are UTF-8 bytes)."""
import ctypes

from . import _lib
from ._handle import Handle
from ._text import byte_to_char_offsets, one_text, text_list


def task_options(max_batch, max_seq, truncate, threads, backend, backend_options):
    options = _lib.TaskOptions()
    _lib.lib.encrt_task_options_init(ctypes.byref(options))
    options.max_batch = int(max_batch)
    options.max_seq = 0 if max_seq is None else int(max_seq)
    options.truncate = 1 if truncate else 0
    options.threads = int(threads)
    if backend is not None:
        options.backend = str(backend).encode()
    if backend_options is not None:
        options.backend_options = str(backend_options).encode()
    return options


class _Task(Handle):
    _create = None

    def __init__(self, owner, options, labels):
        super().__init__()
        self._owner = owner  # an encrt.model._ModelHandle: kept alive while this task lives
        self._labels = labels
        ptr = ctypes.c_void_p()
        _lib.check(type(self)._create(owner._handle(), ctypes.byref(options), ctypes.byref(ptr)))
        self._ptr = ptr.value
        owner.adopt(self)


class Classifier(_Task):
    _create = _lib.lib.encrt_classifier_create
    _free = _lib.lib.encrt_classifier_free

    def classify(self, texts, pairs=None):
        """[{"label", "label_id", "score", "scores": {label: score}}] per text (or pair)."""
        encoded, c_texts = text_list(texts)
        c_pairs = None
        if pairs is not None:
            _, c_pairs = text_list(pairs, "pairs")
            if len(c_pairs) != len(c_texts):
                raise ValueError(f"{len(c_texts)} texts but {len(c_pairs)} pairs")
        labels = self._labels
        n, k = len(encoded), len(labels)
        label_ids = (ctypes.c_int * n)()
        scores = (ctypes.c_float * (n * k))()
        _lib.check(_lib.lib.encrt_classifier_classify(self._handle(), c_texts, c_pairs, n, label_ids, scores, n * k),
                   "classify")
        out = []
        for i in range(n):
            row = scores[i * k:(i + 1) * k]
            best = label_ids[i]
            out.append({"label": labels[best], "label_id": best, "score": row[best],
                        "scores": dict(zip(labels, row))})
        return out


class Reranker(_Task):
    _create = _lib.lib.encrt_reranker_create
    _free = _lib.lib.encrt_reranker_free

    def rank(self, query, passages):
        """[{"index", "score", "text"}], most relevant first."""
        c_query = one_text(query, "query")
        encoded, c_passages = text_list(passages, "documents")
        n = len(encoded)
        order = (ctypes.c_size_t * n)()
        scores = (ctypes.c_float * n)()
        _lib.check(_lib.lib.encrt_reranker_rank(self._handle(), c_query, c_passages, n, order, scores), "rerank")
        passages = list(passages)
        return [{"index": order[i], "score": scores[i], "text": passages[order[i]]} for i in range(n)]


AGGREGATIONS = ("none", "simple", "first", "average", "max")


class Tagger(_Task):
    _create = _lib.lib.encrt_tagger_create
    _free = _lib.lib.encrt_tagger_free

    def tag(self, text, aggregation="simple"):
        """[{"label", "score", "start", "end", "word"}] of one text; start/end index the str, so
        text[start:end] == word (Hugging Face's pipeline counts the same way)."""
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r} (one of {', '.join(AGGREGATIONS)})")
        c_text = one_text(text)
        count = ctypes.c_size_t()
        capacity = 64
        while True:
            entities = (_lib.Entity * capacity)()
            status = _lib.lib.encrt_tagger_tag(self._handle(), c_text, aggregation.encode(), entities, capacity,
                                               ctypes.byref(count))
            if status != _lib.OK and count.value > capacity:
                capacity = count.value  # the tagger said how many there are: once more with room
                continue
            _lib.check(status, "ner")
            break
        at = byte_to_char_offsets(text)
        out = []
        for e in entities[:count.value]:
            start, end = at[e.start], at[e.end]
            out.append({"label": e.label.decode("utf-8", "replace"), "score": e.score, "start": start, "end": end,
                        "word": text[start:end]})
        return out
