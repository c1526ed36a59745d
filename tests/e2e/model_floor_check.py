#!/usr/bin/env python3
"""encrt_model_floor (benchmarks/model_floor) on the bert_plain fixture converted to fp32, fp16,
int8 and int8 with a sliding attention window: the products it counts equal those derived here
from the fixture's config.json (a different path: the tool counts the file's tensors); where
this CPU has probes, each floor is 2 × products / the reported peak, the linears' at least their
weight bytes / the reported read bandwidth (per type), and the ratio is best / floor;
bad arguments exit 2, a missing model 1.
  model_floor_check.py --floor build/bin/encrt_model_floor --encrt build/bin/encrt [--tmp DIR]
                       [--wrapper "qemu-aarch64 -L /usr/aarch64-linux-gnu"]
(--wrapper: a command both binaries run under, e.g. qemu for a cross build.)
Needs only Python's standard library."""
import argparse
import json
import os
import shlex
import tempfile

from cli_support import FIXTURE, expect, run
BATCH, SEQ, WINDOW = 2, 12, 3


def close(a, b, rel=1e-3):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floor", required=True)
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--wrapper", default="", help="command prefix for both binaries (e.g. qemu-aarch64 ...)")
    args = ap.parse_args()
    wrap = shlex.split(args.wrapper)
    tmp = args.tmp or tempfile.mkdtemp(prefix="encrt_floor_")
    os.makedirs(tmp, exist_ok=True)

    with open(os.path.join(FIXTURE, "config.json")) as f:
        cfg = json.load(f)
    h, ffn, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    tokens = BATCH * SEQ
    # Q, K, V, attention output: H x H each; FFN up H -> F, down F -> H.
    weights = layers * (4 * h * h + 2 * h * ffn)  # per run, each read once
    linear = tokens * weights

    def pairs(window):
        return sum(1 for i in range(SEQ) for j in range(SEQ) if window == 0 or abs(i - j) <= window)

    cases = [("fp32", [], "linear_f32", 0), ("fp16", [], "linear_f16", 0), ("int8", [], None, 0),
             ("int8", ["--attention-window", str(WINDOW)], None, WINDOW)]
    for dtype, extra, kind, window in cases:
        model = os.path.join(tmp, f"bert_plain.{dtype}.w{window}.encrt")
        rc, out, err = run(wrap + [args.encrt, "convert", FIXTURE, "-o", model, "--dtype", dtype] + extra)
        expect(rc == 0, f"convert --dtype {dtype} {extra} failed ({rc}): {err}")
        rc, info, err = run(wrap + [args.encrt, "inspect", model])
        expect(rc == 0, f"inspect failed: {err}")
        attention_i8 = any(line.split()[:2] == ["attention_precision", "int8"] for line in info.splitlines())

        rc, out, err = run(wrap + [args.floor, model, "--batch", str(BATCH), "--seq", str(SEQ), "--json",
                            "--rounds", "1", "--iters", "2", "--warmup", "1"])
        expect(rc == 0, f"{model}: exit {rc}: {err}")
        r = json.loads(out)
        p = r["products"]
        what = f"{dtype} window {window}"
        counted = p["linear_i8"] + p["linear_f16"] + p["linear_f32"]
        expect(counted == linear, f"{what}: linear products {counted}, expected {linear}")
        wb = r["weight_bytes"]
        if kind:
            expect(p[kind] == linear, f"{what}: all {linear} products should be {kind}: {p}")
            size = {"linear_f32": 4, "linear_f16": 2}[kind]
            expect(wb[kind[len("linear_"):]] == size * weights and wb["i8"] == 0, f"{what}: weight bytes {wb}")
        else:
            expect(p["linear_i8"] > 0, f"{what}: no int8 linear counted: {p}")
            # int8 layers, or fp16 ones the accuracy guardrail kept: each weight at its type's size.
            expect(wb["i8"] + wb["f16"] / 2 + wb["f32"] / 4 == weights and wb["i8"] > 0, f"{what}: weight bytes {wb}")
        expect(r["read_gbs"] > 0, f"{what}: read bandwidth {r['read_gbs']}")
        attention = BATCH * layers * 2 * h * pairs(window)
        expect(p["attention"] == attention, f"{what}: attention products {p['attention']}, expected {attention}")
        expect(p["attention_i8"] == attention_i8, f"{what}: attention_i8 {p['attention_i8']}, inspect {attention_i8}")
        expect(r["best_ms"] > 0 and r["median_ms"] >= r["best_ms"], f"{what}: times {r}")
        expect("linear" in r["profile_ms"] and "attention" in r["profile_ms"], f"{what}: profile {r['profile_ms']}")

        peaks = r["peaks_gops"]
        # Each type with products needs its peak; the floor exists exactly when all have one.
        needed = {"i8": p["linear_i8"] + (p["attention"] if attention_i8 else 0), "f16": p["linear_f16"],
                  "f32": p["linear_f32"] + (0 if attention_i8 else p["attention"])}
        missing = [t for t, n in needed.items() if n > 0 and peaks[t] == 0]
        if r["floor_ms"] is None:
            expect(missing, f"{what}: no floor although every peak it needs is there: {peaks}")
            print(f"{what}: no floor ({r['level']} has no probe for {', '.join(missing)})")
            continue
        expect(not missing, f"{what}: a floor although {missing} have no peak: {peaks}")
        expect(peaks["i8"] > 0 and peaks["f16"] > 0 and peaks["f32"] > 0, f"{what}: peaks {peaks}")
        # Per type, the slower of its products at the peak and its weights at the read bandwidth.
        fl_linear = sum(max(2 * p["linear_" + t] / peaks[t], wb[t] / r["read_gbs"]) for t in ("i8", "f16", "f32")) / 1e9 * 1e3
        fl_attention = 2 * p["attention"] / (peaks["i8"] if attention_i8 else peaks["f32"]) / 1e9 * 1e3
        fl = r["floor_ms"]
        # The JSON gives 9 significant digits: a relative 1e-3 leaves room for the rest.
        expect(close(fl["linear"], fl_linear) and close(fl["attention"], fl_attention), f"{what}: floor {fl}, "
               f"expected linear {fl_linear}, attention {fl_attention}")
        # A sum of per-type maxima is at least either side's sum.
        expect(fl["linear"] >= fl["linear_compute"] * (1 - 1e-6) and fl["linear"] >= fl["linear_read"] * (1 - 1e-6),
               f"{what}: roofline sides {fl}")
        expect(close(fl["total"], fl["linear"] + fl["attention"]), f"{what}: floor total {fl}")
        expect(close(r["best_over_floor"], r["best_ms"] / fl["total"]), f"{what}: ratio {r['best_over_floor']}")
        print(f"{what}: best {r['best_ms']:.4f} ms, floor {fl['total']:.6f} ms ({r['level']}, "
              f"int8 probe {r['probes']['i8']})")

    # One token: a few products per weight byte, so on most levels reading the weights is the slower
    # side of the linears' roofline (--floor-only: no timing).
    model = os.path.join(tmp, "bert_plain.int8.w0.encrt")
    rc, out, err = run(wrap + [args.floor, model, "--batch", "1", "--seq", "1", "--json", "--floor-only"])
    expect(rc == 0, f"seq 1: exit {rc}: {err}")
    r = json.loads(out)
    if r["floor_ms"] is not None:
        p, wb, peaks, fl = r["products"], r["weight_bytes"], r["peaks_gops"], r["floor_ms"]
        compute = 2 * sum(p["linear_" + t] / peaks[t] for t in ("i8", "f16", "f32") if p["linear_" + t]) / 1e9 * 1e3
        read = sum(wb.values()) / r["read_gbs"] / 1e9 * 1e3
        expect(close(fl["linear_compute"], compute) and close(fl["linear_read"], read), f"seq 1: sides {fl}, "
               f"expected {compute}, {read}")
        expect(close(fl["linear"], max(compute, read)), f"seq 1: linear floor {fl['linear']}, expected {max(compute, read)}")
        print(f"seq 1: linears' floor {fl['linear']:.3g} ms = max(products {compute:.3g}, weights {read:.3g} "
              f"at {r['read_gbs']:.1f} GB/s)")

    # --isa all: every SIMD level in one process, an array of the same objects.
    model = os.path.join(tmp, "bert_plain.int8.w0.encrt")
    rc, out, err = run(wrap + [args.floor, model, "--batch", str(BATCH), "--seq", str(SEQ), "--isa", "all", "--json",
                               "--rounds", "2", "--iters", "1", "--warmup", "0"])
    expect(rc == 0, f"--isa all: exit {rc}: {err}")
    levels = json.loads(out)
    expect(isinstance(levels, list) and levels, f"--isa all: not a list of levels: {out[:200]}")
    names = [r["level"] for r in levels]
    expect(len(set(names)) == len(names) and "scalar" not in names, f"--isa all: levels {names}")
    for r in levels:
        expect(r["products"] == levels[0]["products"] and r["runs"] == 2, f"--isa all: {r['level']}: {r}")
        if r["floor_ms"] is not None:
            expect(close(r["best_over_floor"], r["best_ms"] / r["floor_ms"]["total"]), f"--isa all: {r['level']}")
    print(f"--isa all: {', '.join(names)}")

    for bad in (["--seq", "0"], ["--batch", "x"], ["--bogus"], ["--isa", "nosuchlevel"], ["--seq", "41"]):
        rc, out, err = run(wrap + [args.floor, model] + bad)
        expect(rc == 2 and "usage" in err, f"{bad}: exit {rc}: {err}")
    rc, out, err = run(wrap + [args.floor, os.path.join(tmp, "missing.encrt")])
    expect(rc == 1 and "missing.encrt" in err, f"missing model: exit {rc}: {err}")
    rc, out, err = run(wrap + [args.floor, "--help"])
    expect(rc == 0 and "usage" in out, f"--help: exit {rc}")
    print("model_floor_check: all checks passed")


if __name__ == "__main__":
    main()
