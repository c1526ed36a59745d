"""classify, ner and rerank from raw text against Hugging Face transformers on the same text: small
random-weight BertForSequenceClassification / BertForTokenClassification / one-logit cross-encoder
with all-MiniLM-L6-v2's vocabulary, saved by transformers and converted (fp32). Bars as
tests/e2e/task_heads_check.py's: labels equal, scores within 1e-5, entities (label, span) equal
to the token-classification pipeline's for every strategy with scores within 1e-4, the rerank
order equal."""
import os
import warnings

import numpy as np
import pytest

import encrt

LABELS = ["negative", "neutral", "positive"]
TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]


@pytest.fixture(scope="module")
def hf(minilm_dir):
    os.environ["HF_HUB_OFFLINE"] = "1"
    warnings.simplefilter("ignore")
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    torch.set_num_threads(1)
    return torch, transformers, transformers.AutoTokenizer.from_pretrained(minilm_dir)


@pytest.fixture(scope="module")
def texts(sentences):
    return sentences[:16] + ["Ada Lovelace worked with Charles Babbage in London.", "Ünïcödé café in Zürich"]


def build(hf, convert, tmp_path_factory, name, seed, architecture, scale=1.0, **config):
    torch, transformers, tokenizer = hf
    torch.manual_seed(seed)
    c = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=64, max_position_embeddings=128,
                                initializer_range=0.2, **config)
    c.architectures = [architecture]
    model = getattr(transformers, architecture)(c).eval()
    with torch.no_grad():
        model.classifier.weight.mul_(scale)
    folder = str(tmp_path_factory.mktemp(name))
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return model, convert(folder)


def torch_logits(hf, model, texts, pairs=None):
    torch, _, tokenizer = hf
    enc = tokenizer(texts, pairs, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.no_grad():
        return model(**enc).logits.numpy()


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def classifier(hf, convert, tmp_path_factory):
    return build(hf, convert, tmp_path_factory, "classifier", 5, "BertForSequenceClassification",
                 id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)})


def test_classify_texts_and_pairs(hf, classifier, texts):
    torch_model, path = classifier
    with encrt.Model(path) as model:
        assert model.labels == LABELS and model.head.kind == "sequence_classification"
        assert model.head.score_function == "softmax" and model.head.problem_type == "single_label"
        for pairs in (None, texts[1:] + texts[:1]):
            want = softmax(torch_logits(hf, torch_model, texts, pairs))
            got = model.classify(texts, pairs, batch_size=5)
            assert len(got) == len(texts)
            assert [r["label_id"] for r in got] == list(want.argmax(axis=1))
            assert [r["label"] for r in got] == [LABELS[i] for i in want.argmax(axis=1)]
            scores = np.array([[r["scores"][l] for l in LABELS] for r in got])
            assert np.abs(scores - want).max() <= 1e-5
            assert all(r["score"] == max(r["scores"].values()) for r in got)
        one = model.classify(texts[2])  # a str: one dict, as for a list of that one text
        assert isinstance(one, dict) and one == model.classify([texts[2]])[0]
        with pytest.raises(encrt.UnsupportedError, match="head"):
            model.ner(texts[0])
        with pytest.raises(encrt.UnsupportedError):
            model.rerank(texts[0], texts[1:3])


def test_ner_every_aggregation_as_the_pipeline(hf, convert, tmp_path_factory, texts):
    _, transformers, tokenizer = hf
    torch_model, path = build(hf, convert, tmp_path_factory, "tagger", 11, "BertForTokenClassification", scale=8.0,
                              id2label=dict(enumerate(TAGS)), label2id={l: i for i, l in enumerate(TAGS)})
    with encrt.Model(path) as model:
        assert model.head.kind == "token_classification" and model.labels == TAGS
        total = 0
        for strategy in ("none", "simple", "first", "average", "max"):
            pipe = transformers.pipeline("token-classification", model=torch_model, tokenizer=tokenizer,
                                         aggregation_strategy=strategy)
            got = model.ner(texts, aggregation=strategy, batch_size=7)
            assert len(got) == len(texts)
            for text, entities in zip(texts, got):
                want = pipe(text)
                assert [(e.get("entity_group", e.get("entity")), e["start"], e["end"]) for e in want] == \
                       [(e["label"], e["start"], e["end"]) for e in entities], (strategy, text)
                for w, e in zip(want, entities):
                    assert abs(float(w["score"]) - e["score"]) <= 1e-4
                    assert text[e["start"]:e["end"]] == e["word"]
                total += len(want)
        assert total > 0
        single = model.ner(texts[-1])
        assert single == model.ner([texts[-1]])[0]
        with pytest.raises(ValueError, match="aggregation"):
            model.ner(texts[0], aggregation="mean")


def test_rerank_as_a_cross_encoder(hf, convert, tmp_path_factory, texts):
    torch_model, path = build(hf, convert, tmp_path_factory, "cross", 4001, "BertForSequenceClassification",
                              num_labels=1)
    query = "What is the weather like today?"
    logits = torch_logits(hf, torch_model, [query] * len(texts), texts)[:, 0]
    with encrt.Model(path) as model:
        ranked = model.rerank(query, texts)
        assert [r["index"] for r in ranked] == list(np.argsort(-logits, kind="stable"))
        for r in ranked:
            assert abs(r["score"] - 1 / (1 + np.exp(-logits[r["index"]]))) <= 1e-5
            assert r["text"] == texts[r["index"]]
        assert model.rerank(query, texts, top_k=3) == ranked[:3]
