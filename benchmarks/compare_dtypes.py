#!/usr/bin/env python3
"""encrt against itself: the same model converted to several weight types (int8, fp32, fp16),
run at one CPU kernel level in interleaved `encrt bench` blocks, so that the load of a shared,
noisy machine falls on every variant alike. Prints the CPU (with its family and model), the
kernels each variant ran, best-of and median latency, and each variant's speed relative to the
first: this / ref latency, so 1.40 on the fp32 row means the first variant (int8) is 1.40x as
fast (the ratio the issues' bars are stated in: "int8 >= 1.4x fp32 at --isa avx2").

The models come from benchmarks/compare_ort.py's cache (build/bench-cache/minilm.<dtype>.encrt)
unless --model DTYPE=PATH names others.

Example:
  python3 benchmarks/compare_dtypes.py --isa avx2 --rounds 8
  python3 benchmarks/compare_dtypes.py --isa avx2 --variant int8:int8_route=signed --variant int8 --variant fp32
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_description():
    """'AMD EPYC (family 25, model 17)' from /proc/cpuinfo (the model name alone often hides the core)."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (s.strip() for s in line.split(":", 1))
                    info.setdefault(k, v)
                if not line.strip() and info:
                    break
    except OSError:
        return "unknown CPU"
    return f"{info.get('model name', 'unknown CPU')} (family {info.get('cpu family', '?')}, model {info.get('model', '?')})"


def bench(args, model, options):
    cmd = [args.encrt, "bench", model, "--batch", str(args.batch), "--seq", str(args.seq),
           "--threads", str(args.threads), "--iters", str(args.iters), "--warmup", str(args.warmup), "--json"]
    if args.isa:
        cmd += ["--isa", args.isa]
    if options:
        cmd += ["--backend-options", options]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compare_dtypes: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encrt", default=os.path.join(REPO_ROOT, "build", "bin", "encrt"))
    ap.add_argument("--work", default=os.path.join(REPO_ROOT, "build", "bench-cache"),
                    help="where minilm.<dtype>.encrt are (default: build/bench-cache)")
    ap.add_argument("--model", action="append", default=[], metavar="DTYPE=PATH", help="a model other than the cache's")
    ap.add_argument("--variant", action="append", default=[], metavar="DTYPE[:OPTIONS]",
                    help="a model to run, with cpu backend options (NAME=VALUE,...); the first is the "
                         "reference of the ratios (default: int8 then fp32)")
    ap.add_argument("--isa", default="", help="the CPU kernel level (default: the best this CPU has)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--iters", type=int, default=10, help="timed runs per block (default 10)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5, help="blocks per variant, interleaved (default 5)")
    ap.add_argument("--json", help="write every block and the summary to this file")
    args = ap.parse_args()

    models = {d: os.path.join(args.work, f"minilm.{d}.encrt") for d in ("int8", "fp32", "fp16")}
    for item in args.model:
        d, _, path = item.partition("=")
        models[d] = path
    variants = []
    for v in args.variant or ["int8", "fp32"]:
        dtype, _, options = v.partition(":")
        if dtype not in models or not os.path.isfile(models[dtype]):
            sys.exit(f"compare_dtypes: no {dtype} model ({models.get(dtype)}); run benchmarks/compare_ort.py "
                     f"once or pass --model {dtype}=PATH")
        variants.append({"label": v, "model": models[dtype], "options": options, "blocks": []})

    print(f"cpu {cpu_description()}, {os.cpu_count()} logical cores, load average {os.getloadavg()[0]:.2f}")
    print(f"batch {args.batch}, seq {args.seq}, {args.threads} thread(s), isa {args.isa or 'best'}, "
          f"{args.rounds} rounds of {args.iters} runs per variant, interleaved")
    for _ in range(args.rounds):
        for v in variants:
            v["blocks"].append(bench(args, v["model"], v["options"]))
    ref = None
    print(f"\n{'variant':32s} {'min ms':>9s} {'median ms':>9s} {'this/ref min':>12s} {'this/ref med':>12s}  kernels")
    for v in variants:
        mins = [b["latency_ms"]["min"] for b in v["blocks"]]
        meds = [b["latency_ms"]["median"] for b in v["blocks"]]
        v["min"], v["median"] = min(mins), statistics.median(meds)
        if ref is None:
            ref = v
        print(f"{v['label']:32s} {v['min']:9.3f} {v['median']:9.3f} {v['min'] / ref['min']:12.3f} "
              f"{v['median'] / ref['median']:12.3f}  {v['blocks'][-1].get('kernels', '')}")
    print(f"\nload average now {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_description(), "args": vars(args), "variants": variants}, f, indent=1)


if __name__ == "__main__":
    main()
