#!/usr/bin/env python3
"""Each GPU kernel's duration in a real run, traced with PyTorch's profiler (CUPTI activity
records: no performance counters, so no admin rights, unlike ncu), for encrt's MiniLM or
PyTorch's at the same shape, with or without CUDA graphs.

  python3 scripts/kernel_trace.py encrt MODEL.encrt --batch 1 --seq 128 [--options attention=simt] [--no-graphs]
  python3 scripts/kernel_trace.py torch --batch 1 --seq 128 [--no-graphs]

encrt runs through its Python package (python/ on the path, ENCRT_LIBRARY naming the bundle's
libencrt.so): one process holds both the profiler and the session, so CUPTI sees encrt's kernels.
After --warmup runs, --iters runs are traced; it prints the kernels per run, the sum of their
durations per run (busy), the span from the first kernel's start to the last one's end per run
(busy + gaps), and one row per kernel name (scripts/kernel_times.py's table). Exit 2 without a GPU.
"""
import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from kernel_times import short_name  # noqa: E402

from torch_gpu_bench import MINILM  # noqa: E402


def encrt_runner(args, torch):
    import numpy as np
    import encrt
    options = ",".join(o for o in [args.options, "graphs=off" if args.no_graphs else ""] if o)
    model = encrt.Model(args.model, backend="cuda", backend_options=options or None)
    session = model.session(batch=args.batch, seq=args.seq)
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, model.vocab_size, size=(args.batch, args.seq), dtype=np.int32)
    ids[:, 0] = 101
    mask = np.ones_like(ids)
    return lambda: session.run(ids, attention_mask=mask, outputs=["pooled"])


def torch_runner(args, torch):
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    model = BertModel(BertConfig(**MINILM), add_pooling_layer=False).eval().half().cuda()
    ids = torch.randint(1000, MINILM["vocab_size"], (args.batch, args.seq), device="cuda")
    mask = torch.ones_like(ids)

    def eager():
        with torch.inference_mode():
            return model(input_ids=ids, attention_mask=mask)
    if args.no_graphs:
        return eager
    from torch_gpu_bench import captured
    return captured(torch, eager).replay


def label_of(args):
    return (f"{args.what} batch {args.batch} seq {args.seq}{' ' + args.options if args.options else ''}"
            f"{' eager' if args.no_graphs else ' graphs'}")


def report(events, iters, label):
    """Prints the trace's kernels per run; 2 when it holds none."""
    kernels = sorted((e for e in events if str(e.get("cat", "")).lower() == "kernel" and e.get("ph") == "X"),
                     key=lambda e: e["ts"])
    if not kernels:
        print("kernel_trace: the trace holds no kernel (CUPTI unavailable?)")
        return 2
    per_run = len(kernels) / iters
    busy = sum(e["dur"] for e in kernels) / iters
    # Each run's span: runs are separated by the host's synchronization, so split at the largest gaps.
    gaps = sorted(((kernels[i + 1]["ts"] - kernels[i]["ts"] - kernels[i]["dur"], i) for i in range(len(kernels) - 1)),
                  reverse=True)[:iters - 1]
    cuts = sorted(i for _, i in gaps)
    spans, start = [], 0
    for cut in cuts + [len(kernels) - 1]:
        first, last = kernels[start], kernels[cut]
        spans.append(last["ts"] + last["dur"] - first["ts"])
        start = cut + 1
    spans.sort()
    print(f"{label}: {per_run:.0f} kernels per run, busy {busy:.1f} us, span median {spans[len(spans) // 2]:.1f} us "
          f"(min {spans[0]:.1f}) per run")
    by = defaultdict(lambda: [0, 0.0])
    for e in kernels:
        entry = by[short_name(e["name"])]
        entry[0] += 1
        entry[1] += e["dur"]
    print(f"{'calls':>5} {'us/run':>8} {'mean us':>8} {'share':>6}  kernel (per run)")
    for name, (calls, us) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"{calls / iters:5.0f} {us / iters:8.1f} {us / calls:8.2f} {100 * us / iters / busy:5.1f}%  {name}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["encrt", "torch"])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--options", default="", help="encrt backend options")
    ap.add_argument("--no-graphs", action="store_true")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--trace-out", help="keep the Chrome trace here")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("kernel_trace: SKIPPED, no CUDA device for PyTorch")
        return 2
    run = (encrt_runner if args.what == "encrt" else torch_runner)(args, torch)
    for _ in range(args.warmup):
        run()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(args.iters):
            run()
            torch.cuda.synchronize()
    path = args.trace_out or tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    return report(events, args.iters, label_of(args))


if __name__ == "__main__":
    sys.exit(main())
