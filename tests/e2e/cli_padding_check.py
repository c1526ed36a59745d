#!/usr/bin/env python3
"""`encrt run --padding packed|padded|auto` through the CLI on the bert_plain fixture (a batch
with padding), fp32 and int8: the real tokens' hidden rows of packed and auto equal padded's bit
for bit and match PyTorch within 1e-4 x RMS (fp32), packed has zeros at every padding position,
the pooled outputs are equal; `--padding` with another value, and packed with the attention
output (which needs the padded layout), are refused with a message.
  cli_padding_check.py --encrt build/bin/encrt [--tmp DIR]
Needs only numpy."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "bert_plain")


def run(cmd, expect_ok=True):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if (done.returncode == 0) != expect_ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="encrt_padding_")
    os.makedirs(tmp, exist_ok=True)
    ids, mask = os.path.join(FIXTURE, "ids.npy"), os.path.join(FIXTURE, "mask.npy")
    types = os.path.join(FIXTURE, "token_type_ids.npy")
    real = np.load(mask).astype(bool)
    want = np.load(os.path.join(FIXTURE, "hidden.npy")).astype(np.float64)
    ok = True
    for dtype in ("fp32", "int8"):
        model = os.path.join(tmp, f"bert_plain.{dtype}.encrt")
        run([args.encrt, "convert", FIXTURE, "-o", model, "--dtype", dtype, "--quiet"])
        out = {}
        for padding in ("packed", "padded", "auto"):
            for output in ("hidden", "pooled"):
                path = os.path.join(tmp, f"{dtype}.{padding}.{output}.npy")
                run([args.encrt, "run", model, "--ids", ids, "--mask", mask, "--token-type-ids", types, "--padding",
                     padding, "--output", output, "-o", path])
                out[padding, output] = np.load(path)
        packed, padded, auto = (out[p, "hidden"] for p in ("packed", "padded", "auto"))
        checks = {
            "packed real rows == padded": bool((packed[real] == padded[real]).all()),
            "auto == packed": bool((auto == packed).all()),
            "packed padding rows are zero": bool((packed[~real] == 0).all()),
            "pooled equal": bool((out["packed", "pooled"] == out["padded", "pooled"]).all()),
        }
        if dtype == "fp32":
            err = np.abs(packed[real] - want[real]).max()
            rms = np.sqrt(np.mean(want[real] ** 2))
            checks[f"packed vs PyTorch {err / rms:.2g} x RMS <= 1e-4"] = bool(err <= 1e-4 * rms)
        for name, passed in checks.items():
            print(f"{'ok  ' if passed else 'FAIL'} {dtype}: {name}")
            ok = ok and passed
    model = os.path.join(tmp, "bert_plain.fp32.encrt")
    for extra, needle in ((["--padding", "sometimes"], "--padding must be auto, packed or padded"),
                          (["--padding", "packed", "--output", "attention"], "cannot run packed batches")):
        err = run([args.encrt, "run", model, "--ids", ids, "--mask", mask, "-o", os.path.join(tmp, "x.npy")] + extra,
                  expect_ok=False)
        passed = needle in err
        print(f"{'ok  ' if passed else 'FAIL'} refused {' '.join(extra)}: {err.strip()}")
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
