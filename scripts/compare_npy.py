#!/usr/bin/env python3
"""Compares two float .npy outputs of `encrt run` (e.g. --backend cpu against --backend xnnpack)
against one bar, prints one line with the figures, and exits 1 when the bar is missed:
  compare_npy.py A.npy B.npy --max-abs-over-rms 1e-4    # max |a - b| <= 1e-4 x RMS(a)
  compare_npy.py A.npy B.npy --min-token-cosine 0.999   # cosine(a[t], b[t]) >= 0.999 for every
                                                         # token row t (last axis = features)
Needs only numpy (Debian's /usr/bin/python3 has it)."""
import argparse
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    bar = ap.add_mutually_exclusive_group(required=True)
    bar.add_argument("--max-abs-over-rms", type=float)
    bar.add_argument("--min-token-cosine", type=float)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    a = np.load(args.a).astype(np.float64)
    b = np.load(args.b).astype(np.float64)
    label = (args.label + ": ") if args.label else ""
    if a.shape != b.shape:
        print(f"{label}FAIL: shapes differ, {a.shape} vs {b.shape}")
        return 1
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        print(f"{label}FAIL: non-finite values")
        return 1
    rms = float(np.sqrt(np.mean(a * a)))
    max_abs = float(np.abs(a - b).max())
    rows_a = a.reshape(-1, a.shape[-1])
    rows_b = b.reshape(-1, b.shape[-1])
    norms = np.linalg.norm(rows_a, axis=1) * np.linalg.norm(rows_b, axis=1)
    cos = np.where(norms > 0, (rows_a * rows_b).sum(axis=1) / np.where(norms > 0, norms, 1.0), 1.0)
    figures = (f"shape {list(a.shape)}, max|a-b| {max_abs:.3g} = {max_abs / rms:.3g} x RMS {rms:.4g}, "
               f"token cosine min {cos.min():.7f} mean {cos.mean():.7f}")
    if args.max_abs_over_rms is not None:
        ok = max_abs <= args.max_abs_over_rms * rms
        bar_text = f"max|a-b| <= {args.max_abs_over_rms:g} x RMS"
    else:
        ok = bool(cos.min() >= args.min_token_cosine)
        bar_text = f"every token's cosine >= {args.min_token_cosine:g}"
    print(f"{label}{'ok' if ok else 'FAIL'} ({bar_text}): {figures}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
