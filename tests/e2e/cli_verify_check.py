#!/usr/bin/env python3
"""`encrt verify` through the CLI, exit codes checked: the bert_plain fixture converted to fp32 and
int8 verifies (exit 0); a copy with one byte flipped inside a bias (found by its bytes, which the
converter stores as the checkpoint has them) fails (exit 1) naming that tensor, while `encrt
inspect`, which loads without verification, does not notice; a truncated copy, a missing file and
bad arguments fail with their exit codes (1, usage 2); `--repeat` prints the timing.
  cli_verify_check.py --encrt build/bin/encrt [--tmp DIR]
Needs only Python's standard library."""
import argparse
import json
import os
import struct
import sys
import tempfile

from cli_support import FIXTURE, expect, run


def safetensor_bytes(name):
    """The raw bytes of one tensor of the fixture's model.safetensors."""
    with open(os.path.join(FIXTURE, "model.safetensors"), "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    begin, end = header[name]["data_offsets"]
    return blob[8 + header_len + begin : 8 + header_len + end]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="encrt_verify_")
    os.makedirs(tmp, exist_ok=True)
    encrt = args.encrt

    # The FFN output bias of layer 1, stored as f32 row-major in every dtype.
    bias = safetensor_bytes("encoder.layer.1.output.dense.bias")
    for dtype in ("fp32", "int8"):
        model = os.path.join(tmp, f"bert_plain.{dtype}.encrt")
        rc, out, err = run([encrt, "convert", FIXTURE, "-o", model, "--dtype", dtype])
        expect(rc == 0, f"convert --dtype {dtype} failed ({rc}): {err}")

        rc, out, err = run([encrt, "verify", model])
        expect(rc == 0, f"verify of a fresh {dtype} file: exit {rc}: {out}{err}")
        expect("all checksums match" in out and "and the structure" in out, f"verify output: {out}")

        with open(model, "rb") as f:
            data = bytearray(f.read())
        at = data.find(bias)
        expect(at > 0 and data.find(bias, at + 1) < 0, "the bias bytes are in the file once")
        data[at + len(bias) // 2] ^= 0x04
        corrupt = os.path.join(tmp, f"bert_plain.{dtype}.flipped.encrt")
        with open(corrupt, "wb") as f:
            f.write(data)
        rc, out, err = run([encrt, "verify", corrupt])
        expect(rc == 1, f"verify of a flipped byte: exit {rc}, expected 1: {out}{err}")
        expect("MISMATCH tensor 'layers.1.ffn.down.bias'" in out, f"the damaged tensor is named: {out}")
        expect(out.count("MISMATCH") == 1, f"only that tensor fails: {out}")
        expect("1 do not match" in out, f"the summary counts it: {out}")
        # Loading without verification does not notice (what verification is for).
        rc, out, err = run([encrt, "inspect", corrupt])
        expect(rc == 0, f"inspect loads the flipped copy without verifying: exit {rc}: {err}")

        truncated = os.path.join(tmp, f"bert_plain.{dtype}.truncated.encrt")
        with open(truncated, "wb") as f:
            f.write(data[: len(data) // 2])
        rc, out, err = run([encrt, "verify", truncated])
        expect(rc == 1 and "FlatBuffers verification failed" in err, f"truncated: exit {rc}: {err}")

    rc, out, err = run([encrt, "verify", model, "--repeat", "2"])
    expect(rc == 0 and "timing over 2 rounds" in out and "load + verify_checksums" in out, f"--repeat: {rc}: {out}{err}")
    rc, out, err = run([encrt, "verify", model, "--repeat", "0"])
    expect(rc == 1 and "--repeat" in err, f"--repeat 0: exit {rc}: {err}")
    rc, out, err = run([encrt, "verify", os.path.join(tmp, "missing.encrt")])
    expect(rc == 1 and "missing.encrt" in err, f"missing file: exit {rc}: {err}")
    rc, out, err = run([encrt, "verify"])
    expect(rc == 2 and "usage" in err, f"no model: exit {rc}: {err}")
    rc, out, err = run([encrt, "verify", model, "--bogus"])
    expect(rc == 1 and "bogus" in err, f"unknown option: exit {rc}: {err}")
    rc, out, err = run([encrt, "verify", "--help"])
    expect(rc == 0 and "usage" in out, f"--help: exit {rc}")
    print("OK: encrt verify passes fresh fp32 and int8 files, names a flipped tensor, refuses truncated and missing files")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
