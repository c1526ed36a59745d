#!/usr/bin/env python3
"""`encrt convert --attention-window` and `encrt run --src-mask` against PyTorch, through the CLI:
the fixture tests/fixtures/torch_src_masks (manifest "src_mask_fixtures") converted to fp32, run
with each of its src masks (bool and float .npy, [seq, seq] and [batch, seq, seq]) and, converted
with the window, on its window inputs; every real token within 1e-4 x RMS of PyTorch's hidden
state. Also: `encrt inspect` shows the window, and a mask of the wrong shape is refused.
  cli_src_mask_check.py --encrt build/bin/encrt [--tmp DIR]
Needs only numpy."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def real_token_error(got, want, mask):
    real = mask.astype(bool)
    err = np.abs(got[real].astype(np.float64) - want[real]).max()
    rms = np.sqrt(np.mean(want[real].astype(np.float64) ** 2))
    return err, rms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="encrt_src_mask_")
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(FIXTURES, "manifest.json")) as f:
        entry = json.load(f)["src_mask_fixtures"][0]
    src = os.path.join(FIXTURES, entry["name"])
    full = os.path.join(tmp, "src_masks.f32.encrt")
    windowed = os.path.join(tmp, "src_masks.f32.window.encrt")
    window = entry["window"]["attention_window"]
    run([args.encrt, "convert", src, "-o", full, "--quiet"])
    run([args.encrt, "convert", src, "-o", windowed, "--quiet", "--attention-window", str(window)])
    inspect = run([args.encrt, "inspect", windowed])
    ok = True
    if f"attention_window     {window}" not in inspect:
        print(f"FAIL: encrt inspect does not show attention_window {window}")
        ok = False
    mask = np.load(os.path.join(src, "mask.npy"))
    for case in entry["src_masks"]:
        out = os.path.join(tmp, f"hidden_{case['name']}.npy")
        run([args.encrt, "run", full, "--ids", os.path.join(src, "ids.npy"), "--mask", os.path.join(src, "mask.npy"),
             "--src-mask", os.path.join(src, case["src_mask"]), "-o", out])
        err, rms = real_token_error(np.load(out), np.load(os.path.join(src, case["hidden"])), mask)
        good = err <= 1e-4 * rms
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {case['name']:18s} {case['kind']:5s} {case['shape']:13s} "
              f"max|err| {err:.2e} (bar {1e-4 * rms:.2e})")
    w = entry["window"]
    out = os.path.join(tmp, "hidden_window.npy")
    run([args.encrt, "run", windowed, "--ids", os.path.join(src, w["ids"]), "--mask", os.path.join(src, w["mask"]),
         "-o", out])
    err, rms = real_token_error(np.load(out), np.load(os.path.join(src, w["hidden"])),
                                np.load(os.path.join(src, w["mask"])))
    good = err <= 1e-4 * rms
    ok &= good
    print(f"{'ok  ' if good else 'FAIL'} window {window:<11d} max|err| {err:.2e} (bar {1e-4 * rms:.2e})")
    # A mask that fits neither [seq, seq] nor [batch, seq, seq] is refused with its shape.
    bad = os.path.join(tmp, "bad_mask.npy")
    np.save(bad, np.zeros((entry["seq"], entry["seq"] + 1), dtype=np.bool_))
    done = subprocess.run([args.encrt, "run", full, "--ids", os.path.join(src, "ids.npy"), "--src-mask", bad,
                           "-o", os.path.join(tmp, "x.npy")], capture_output=True, text=True)
    if done.returncode == 0 or "has shape" not in done.stderr:
        print(f"FAIL: a mis-shaped --src-mask was not refused clearly: {done.stderr.strip()}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
