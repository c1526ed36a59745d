"""Bad input is an exception with a message (the C API's own where it decides), never a crash;
closing is deterministic and what borrows a model keeps it alive."""
import gc

import numpy as np
import pytest

import encrt
from conftest import fixture_dir


@pytest.fixture(scope="module")
def plain(convert):
    return convert(fixture_dir("bert_plain"), "--dtype", "fp32")


@pytest.fixture(scope="module")
def minilm(convert, minilm_dir):
    with encrt.Model(convert(minilm_dir)) as model:
        yield model


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(encrt.EncrtIOError, match="cannot open") as e:
        encrt.Model(tmp_path / "missing.encrt")
    assert isinstance(e.value, OSError) and "missing.encrt" in str(e.value)
    junk = tmp_path / "junk.encrt"
    junk.write_bytes(b"not a model file at all" * 10)
    with pytest.raises(encrt.InvalidModelError):
        encrt.Model(junk)


def test_bad_arrays(plain):
    with encrt.Model(plain) as model:
        session = model.session(batch=2, seq=8)
        ids = np.array([[2, 5, 7, 3], [2, 9, 3, 0]])
        with pytest.raises(encrt.InvalidArgumentError, match="outside the vocabulary"):
            session.run(np.array([[2, 500, 3]]))
        with pytest.raises(encrt.InvalidArgumentError, match="-1"):
            session.run(np.array([[2, -1, 3]]))
        with pytest.raises(ValueError, match="outside int32"):
            session.run(np.array([[2, 2 ** 32 + 5, 3]]))  # would wrap to id 5
        with pytest.raises(TypeError, match="integers"):
            session.run(ids.astype(np.float32))
        with pytest.raises(ValueError, match="2-D"):
            session.run(ids[0])
        with pytest.raises(ValueError, match="shape"):
            session.run(ids, attention_mask=np.ones((2, 3), dtype=np.int32))
        with pytest.raises(encrt.InvalidArgumentError, match="max_seq"):
            session.run(np.full((1, 9), 5))
        with pytest.raises(encrt.InvalidArgumentError, match="batch"):
            session.run(np.full((3, 4), 5))
        with pytest.raises(encrt.InvalidArgumentError):
            session.run(np.zeros((0, 4), dtype=np.int32))
        with pytest.raises(encrt.InvalidArgumentError, match="src"):
            session.run(ids, src_mask=np.zeros((4, 4), dtype=bool))  # not planned for one
        with pytest.raises(ValueError, match="no output"):
            session.run(ids, outputs=["logits"])
        assert session.run(ids)["hidden"].shape == (2, 4, 32)  # the session still works
        with pytest.raises(encrt.InvalidArgumentError, match="no_such_backend"):
            model.session(backend="no_such_backend")
        with pytest.raises(encrt.InvalidArgumentError, match="max_seq"):
            model.session(seq=model.max_seq_len + 1)
        with pytest.raises(encrt.UnsupportedError, match="vocabulary"):
            model.encode(["no vocabulary in this file"])
        with pytest.raises(encrt.UnsupportedError, match="head"):
            model.classify(["x"])


def test_src_mask_shapes(convert):
    with encrt.Model(convert(fixture_dir("torch_src_masks"))) as model:
        session = model.session(batch=1, seq=4, src_mask=True)
        ids = np.array([[1, 2, 3, 4]])
        with pytest.raises(ValueError, match="src_mask"):
            session.run(ids, src_mask=np.zeros((3, 3), dtype=bool))
        with pytest.raises(ValueError, match="0 and 1"):
            session.run(ids, src_mask=np.full((4, 4), 2))
        with pytest.raises(encrt.InvalidArgumentError, match="NaN"):
            session.run(ids, src_mask=np.full((4, 4), np.nan, dtype=np.float32))
        causal = np.triu(np.ones((4, 4), dtype=bool), 1)
        assert np.array_equal(session.run(ids, src_mask=causal)["hidden"],
                              session.run(ids, src_mask=causal.astype(np.int64))["hidden"])


def test_bad_texts(minilm):
    for call in (minilm.encode, minilm.classify, minilm.ner, minilm.tokenize):
        with pytest.raises(ValueError, match="empty"):
            call([])
    with pytest.raises(ValueError, match="empty"):
        minilm.rerank("query", [])
    with pytest.raises(TypeError):
        minilm.encode([b"bytes are not text"])
    with pytest.raises(TypeError):
        minilm.rerank(["not", "a str"], ["a document"])
    with pytest.raises(ValueError, match="NUL"):
        minilm.encode(["a\0b"])
    with pytest.raises(ValueError):
        minilm.encode(["\ud800 a lone surrogate"])
    with pytest.raises(ValueError, match="truncation"):
        minilm.tokenize(["x"], truncation="middle")
    with pytest.raises(ValueError, match="pairs"):
        minilm.tokenize(["a", "b"], ["only one"])
    with pytest.raises(encrt.InvalidArgumentError):
        minilm.tokenize(["a " * 40], max_length=8, truncate=False)
    with pytest.raises(ValueError, match="batch_size"):
        minilm.encode(["x"], batch_size=0)
    # Empty and whitespace-only texts are [CLS] [SEP], as Hugging Face tokenizes them: valid.
    assert minilm.encode(["", "  "]).shape == (2, minilm.hidden_size)


def test_close_and_lifetimes(plain):
    model = encrt.Model(plain)
    session = model.session(batch=1, seq=4)
    with model:
        pass
    assert model.closed and session.closed
    with pytest.raises(ValueError, match="closed"):
        session.run(np.array([[2, 3]]))
    with pytest.raises(ValueError, match="closed"):
        model.session()
    model.close()  # idempotent
    # A session outlives the Model object it came from: it keeps the C model alive.
    session = encrt.Model(plain).session(batch=1, seq=4)
    gc.collect()
    assert session.run(np.array([[2, 3, 4]]))["pooled"].shape == (1, 32)
    with session:
        pass
    assert session.closed
