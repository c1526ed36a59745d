"""encode() against SentenceTransformer.encode on all-MiniLM-L6-v2, and the tokenizer against
Hugging Face's BertTokenizerFast on the same texts (skipped, with the reason, without the model
package or sentence-transformers)."""
import os
import warnings

import numpy as np
import pytest

import encrt


@pytest.fixture(scope="module")
def minilm(convert, minilm_dir):
    with encrt.Model(convert(minilm_dir, "--dtype", "fp32")) as model:
        yield model


@pytest.fixture(scope="module")
def sentence_transformer(minilm_dir):
    os.environ["HF_HUB_OFFLINE"] = "1"
    warnings.simplefilter("ignore")
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return st.SentenceTransformer(minilm_dir, device="cpu")


def test_encode_equals_sentence_transformers(minilm, sentence_transformer, sentences):
    want = sentence_transformer.encode(sentences, batch_size=16, convert_to_numpy=True)
    got = minilm.encode(sentences, batch_size=16)
    assert got.dtype == np.float32 and got.shape == want.shape == (len(sentences), 384)
    rms = np.sqrt(np.mean(want.astype(np.float64) ** 2))
    assert np.abs(got - want).max() <= 1e-4 * rms
    cosine = np.sum(got * want, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert cosine.min() >= 0.99999
    # The package has a Normalize module: unit length already, and normalize_embeddings keeps it.
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() <= 1e-5
    assert np.abs(minilm.encode(sentences, normalize_embeddings=True) - got).max() <= 1e-6


def test_encode_single_text_and_batch_sizes(minilm, sentence_transformer, sentences):
    one = minilm.encode(sentences[3])
    want = sentence_transformer.encode(sentences[3])
    assert one.shape == want.shape == (384,)
    assert np.abs(one - want).max() <= 1e-4 * np.sqrt(np.mean(want ** 2))
    # Batches of 1, 5 and all: each text's embedding does not depend on what it was padded with.
    base = minilm.encode(sentences[:12], batch_size=12)
    for batch_size in (1, 5):
        assert np.abs(minilm.encode(sentences[:12], batch_size=batch_size) - base).max() <= 1e-6
    assert np.abs(base[3] - one).max() <= 1e-6


def test_encode_truncates_at_max_length(minilm, sentence_transformer):
    text = " ".join(["encoders read long documents"] * 150)  # 600 words: > 512 tokens
    want = sentence_transformer.encode(text)  # sentence-transformers cuts at its max_seq_length, 256
    got = minilm.encode(text, max_length=sentence_transformer.max_seq_length)
    assert np.abs(got - want).max() <= 1e-4 * np.sqrt(np.mean(want ** 2))
    assert minilm.tokenize(text)["input_ids"].shape[1] == minilm.max_seq_len


def test_tokenize_equals_bert_tokenizer_fast(minilm, minilm_dir, sentences):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    hf = transformers.AutoTokenizer.from_pretrained(minilm_dir)
    texts = sentences + ["", "   ", "Ünïcödé café — naïve façade", "日本語のテキスト",
                         "[CLS] written [SEP] inside"]
    want = hf(texts, padding=True, return_tensors="np")
    got = minilm.tokenize(texts)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert got[name].dtype == np.int32
        assert np.array_equal(got[name], want[name]), name
    pairs = texts[1:] + texts[:1]
    want = hf(texts, pairs, padding=True, truncation=True, max_length=24, return_tensors="np",
              return_special_tokens_mask=True)
    got = minilm.tokenize(texts, pairs, max_length=24, return_details=True)
    for name in ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask"):
        assert np.array_equal(got[name], want[name]), name
    word_ids = np.array([[-1 if w is None else w for w in want.word_ids(i)] for i in range(len(texts))])
    assert np.array_equal(got["word_ids"], word_ids)
    assert got["offsets"].shape == got["input_ids"].shape + (2,)
