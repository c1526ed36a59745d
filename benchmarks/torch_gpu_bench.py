#!/usr/bin/env python3
"""PyTorch's GPU time for all-MiniLM-L6-v2's architecture, the peer of `encrt bench --backend
cuda`: transformers' BertModel in fp16 on CUDA, eager and replayed from a CUDA graph
(torch.cuda.CUDAGraph), GPU time per forward pass from CUDA events (best and median of --iters).

The weights are random: a forward pass costs the same whatever their values, and the machine
this runs on (the GPU test machine) cannot download the checkpoint. Accuracy is checked elsewhere
(tests/e2e/minilm_check.py --prebuilt, against embeddings computed with the real weights).

  python3 benchmarks/torch_gpu_bench.py --shapes 1x128,32x128 --json torch.json
Prints one line per (mode, shape) and, with --json, writes them. Exit 2 without CUDA.
"""
import argparse
import json
import statistics
import sys

MINILM = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
              max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu", layer_norm_eps=1e-12)


def shapes(text):
    return [tuple(int(v) for v in s.lower().split("x")) for s in text.split(",") if s]


def gpu_times(torch, fn, iters):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return min(times), statistics.median(times)


def captured(torch, fn):
    """fn captured into a CUDA graph after three warm-up calls on a side stream (what
    torch.cuda.graph asks: allocations and lazy initialization done before the capture)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=shapes, default=[(1, 128), (32, 128)])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        import torch
        from transformers import BertConfig, BertModel
    except ImportError as e:
        print(f"SKIPPED: needs torch and transformers ({e})")
        return 2
    if not torch.cuda.is_available():
        print("SKIPPED: no CUDA device for PyTorch")
        return 2
    torch.manual_seed(0)
    model = BertModel(BertConfig(**MINILM), add_pooling_layer=False).eval().half().cuda()
    rows = []
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, MiniLM-L6 architecture, fp16")
    for batch, seq in args.shapes:
        ids = torch.randint(1000, MINILM["vocab_size"], (batch, seq), device="cuda")
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            eager = lambda: model(input_ids=ids, attention_mask=mask)  # noqa: E731
            for _ in range(10):
                eager()
            torch.cuda.synchronize()
            e_min, e_med = gpu_times(torch, eager, args.iters)
            g_min, g_med = gpu_times(torch, captured(torch, eager).replay, args.iters)
        for mode, lo, med in (("eager", e_min, e_med), ("cuda_graph", g_min, g_med)):
            rows.append({"mode": mode, "batch": batch, "seq": seq, "gpu_ms_min": lo, "gpu_ms_median": med})
            print(f"torch fp16 {mode:10s} batch {batch:3d} seq {seq:4d}: GPU ms min {lo:.4f} median {med:.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
