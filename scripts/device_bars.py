#!/usr/bin/env python3
"""The GPU bars of issues 9 and 12 against the figures scripts/device_check.sh wrote.

  python3 scripts/device_bars.py RESULTS_DIR

Reads bench_*.json (`encrt bench --json`), accuracy_*.json (tests/e2e/minilm_check.py --json),
torch.json (benchmarks/torch_gpu_bench.py --json) and packed_*.txt (encrt_packed_vs_padded's
output), prints one line per bar with its figure and PASS, FAIL or MISSING (a figure that was not
measured: never a pass), and the PyTorch ratios. GPU times are medians of CUDA-event times.
Exit status 0 when every bar passed, 1 otherwise.
"""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    results = sys.argv[1]
    bench = {}
    for path in glob.glob(os.path.join(results, "bench_*.json")):
        d = load(path)
        if d and "device_ms" in d:
            bench[os.path.basename(path)[6:-5]] = d["device_ms"]["median"]
    accuracy = {}
    for path in glob.glob(os.path.join(results, "accuracy_*.json")):
        d = load(path)
        if d:
            accuracy[os.path.basename(path)[9:-5]] = d
    torch = {}
    d = load(os.path.join(results, "torch.json"))
    for row in (d or {}).get("rows", []):
        torch[(row["mode"], row["batch"], row["seq"])] = row["gpu_ms_median"]
    # encrt_packed_vs_padded's lines "cpu    packed / padded tokens per second: best 2.53x, median
    # 1.65x; ..." and, for a device, "... tokens per second on the device: ..." (GPU time).
    packed = {}
    for path in glob.glob(os.path.join(results, "packed_*.txt")):
        dtype = os.path.basename(path)[7:-4]
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"(\w+)\s+packed / padded tokens per second( on the device)?: best ([\d.]+)x, median ([\d.]+)x",
                             line)
                if m and (m.group(1) == "cpu" or m.group(2)):
                    packed.setdefault(dtype, {})[m.group(1)] = {"ratio_median": float(m.group(4))}

    rows = []

    def bar(issue, what, value, ok, figure):
        status = "MISSING" if value is None else ("PASS" if ok else "FAIL")
        rows.append((issue, what, figure if value is not None else "not measured", status))

    def ms(key):
        return bench.get(key)

    # The defaults, and the options encrt tune took at that shape where it took any (tuned_*.txt;
    # bench "*_tuned_*" ran them: a bar of the options the next defaults would be).
    tuned = {}
    for path in glob.glob(os.path.join(results, "tuned_*.txt")):
        with open(path) as f:
            tuned[os.path.basename(path)[6:-4]] = f.read().strip()

    def kinds(dtype, b):
        yield dtype, "defaults"
        if ms(f"{dtype}_tuned_b{b}_s128") is not None:
            yield f"{dtype}_tuned", "tuned: " + tuned.get(f"{dtype}_b{b}_s128", "?")

    for b, limit in ((1, 0.100), (32, 0.250)):
        for key, how in kinds("fp16", b):
            v = ms(f"{key}_b{b}_s128")
            bar(9, f"MiniLM fp16 batch {b} seq 128, graphs, GPU time <= {limit * 1000:.0f} us ({how})", v,
                v is not None and v <= limit, f"{v * 1000:.1f} us" if v is not None else "")
            t = torch.get(("cuda_graph", b, 128))
            r = t / v if v and t else None
            bar(9, f"fp16 batch {b} faster than PyTorch fp16 with CUDA graphs ({how})", r, r is not None and r > 1.0,
                f"PyTorch {t * 1000:.1f} us / encrt {v * 1000:.1f} us = {r:.2f}x" if r else "")
    fp16_tuned = sorted(k for k in accuracy if k.startswith("fp16_cuda_tuned_"))
    int8_tuned = sorted(k for k in accuracy if k.startswith("int8_cuda_tuned_"))
    for label, issue in [("fp16_cuda", 9), ("fp16_cuda_simt", 9), ("fp16_cuda_gelu_kernel", 9), ("fp16_cuda_split_on", 9),
                         ("fp16_cuda_split_off", 9), ("fp16_cuda_gemm_mma", 9), ("fp16_cuda_prefetch", 9),
                         ("fp16_cuda_layer", 9)] + \
            [(k, 9) for k in fp16_tuned]:
        a = accuracy.get(label, {}).get("fp16")
        bar(issue, f"MiniLM fp16 ({label}) cosine mean and min >= 0.9999", a,
            a is not None and a["mean_cosine"] >= 0.9999 and a["min_cosine"] >= 0.9999,
            f"mean {a['mean_cosine']:.6f} min {a['min_cosine']:.6f}" if a else "")
    for label in ["int8_cuda", "int8_cuda_linears_int8", "int8_cuda_cublaslt", "int8_cuda_tile_128", "int8_cuda_att_int8",
                  "int8_cuda_simt", "int8_cpu"] + int8_tuned:
        a = accuracy.get(label, {}).get("int8")
        bar(12, f"MiniLM int8 ({label}) cosine mean >= 0.995, min >= 0.99", a,
            a is not None and a["mean_cosine"] >= 0.995 and a["min_cosine"] >= 0.99,
            f"mean {a['mean_cosine']:.6f} min {a['min_cosine']:.6f}" if a else "")
    # The int8 model as it runs by default (int8_linears=auto: its linears as fp16 ones wherever
    # that was measured faster) and with int8 arithmetic (int8_linears=int8).
    # (against our fp16 at its best: tuned where its tune took options, else the defaults)
    f32 = ms("fp16_tuned_b32_s128") or ms("fp16_b32_s128")
    f1 = ms("fp16_tuned_b1_s128") or ms("fp16_b1_s128")
    int8_kinds = [("int8", "default: int8_linears=auto"), ("int8_linears_int8", "int8 arithmetic: int8_linears=int8")]
    if ms("int8_tuned_b1_s128") is not None or ms("int8_tuned_b32_s128") is not None:
        int8_kinds.append(("int8_tuned", "tuned: b1 %s, b32 %s" % (tuned.get("int8_b1_s128") or "the defaults",
                                                                  tuned.get("int8_b32_s128") or "the defaults")))
    for key, how in int8_kinds:
        i32, i1 = ms(f"{key}_b32_s128"), ms(f"{key}_b1_s128")
        if key == "int8_tuned":  # a shape whose tune kept the defaults: the defaults' figure
            i32, i1 = i32 or ms("int8_b32_s128"), i1 or ms("int8_b1_s128")
        bar(12, f"MiniLM int8 batch 32 seq 128 GPU time <= 170 us ({how})", i32, i32 is not None and i32 <= 0.170,
            f"{i32 * 1000:.1f} us" if i32 is not None else "")
        r = f32 / i32 if i32 and f32 else None
        bar(12, f"int8 batch 32 >= 1.3x our fp16 ({how})", r, r is not None and r >= 1.3,
            f"fp16 {f32 * 1000:.1f} us / int8 {i32 * 1000:.1f} us = {r:.2f}x" if r else "")
        r = f1 / i1 if i1 and f1 else None
        bar(12, f"int8 batch 1 not slower than our fp16 ({how})", r, r is not None and r >= 1.0,
            f"fp16 {f1 * 1000:.1f} us / int8 {i1 * 1000:.1f} us = {r:.2f}x" if r else "")
    for dtype in ("fp16", "int8"):
        for backend in ("cuda", "cpu"):
            p = packed.get(dtype, {}).get(backend)
            ratio = p.get("ratio_median") if isinstance(p, dict) else None
            bar(12, f"packed batch 32 of real lengths >= 1.5x padded tokens/s ({dtype}, {backend})", ratio,
                ratio is not None and ratio >= 1.5, f"{ratio:.2f}x (median)" if ratio is not None else "")
    # The same bar under other options (device_check.sh's packed_case: packed_fp16_norm.txt, the
    # tuned options' packed_fp16_tuned.txt), for the defaults that would take them.
    for variant in sorted(k for k in packed if "_" in k):
        for backend, p in sorted(packed[variant].items()):
            ratio = p.get("ratio_median")
            dtype, options = variant.split("_", 1)
            bar(12, f"packed batch 32 of real lengths >= 1.5x padded tokens/s ({dtype}, {backend}, {options} options)", ratio,
                ratio is not None and ratio >= 1.5, f"{ratio:.2f}x (median)")

    print("==== bars")
    for issue, what, figure, status in rows:
        print(f"[{status:7s}] issue {issue:2d}: {what}: {figure}")
    print("==== PyTorch fp16 with CUDA graphs / encrt (GPU time, > 1: encrt faster)")
    for b in (1, 32):
        t = torch.get(("cuda_graph", b, 128))
        for dtype in ("fp16", "int8", "fp16_tuned", "int8_tuned"):
            v = ms(f"{dtype}_b{b}_s128")
            print(f"batch {b:2d} seq 128 {dtype}: " + (f"{t / v:.2f}x (PyTorch {t * 1000:.1f} us, encrt {v * 1000:.1f} us)"
                                                     if t and v else "not measured"))
        for mode in ("fp16_nographs", "fp16_simt", "fp16_gelu_kernel", "fp16_pdl_off", "int8_pdl_off", "fp16_previous_defaults",
                     "fp16_split_on", "fp16_split_off",
                     "int8_split_on", "int8_split_off", "int8_cublaslt", "int8_att_int8", "int8_simt", "fp16_rows_warp",
                     "fp16_rows_block", "int8_rows_warp", "int8_rows_block", "int8_tile_32", "int8_tile_64", "int8_tile_128x64",
                     "int8_tile_128", "fp16_gemm_mma", "fp16_gemm_auto", "fp16_gemm_auto_qkv_separate", "fp16_gemm_auto_fused",
                     "fp16_gemm_auto_separate", "fp16_gemm_auto_cluster8", "int8_linears_int8", "int8_linears_f16",
                     "int8_fp16_gemm_auto", "fp16_attention_prefetch", "fp16_attention_occupancy6",
                     "fp16_attention_keys_whole", "fp16_gemm_auto_layer", "fp16_gemm_norm", "fp16_gemm_norm_rows16",
                     "fp16_gemm_norm_cluster4", "fp16_gemm_norm_rows128_cluster4"):
            v = ms(f"{mode}_b{b}_s128")
            print(f"batch {b:2d} seq 128 {mode}: " + (f"{v * 1000:.1f} us" if v else "not measured"))
    # Issue 12: "int8 attention on the GPU where it pays; keep the faster". The whole model's GPU
    # time with the int8 attention kernel against the default (bf16 tensor cores on the fp32
    # activations); < 1: the int8 kernel is faster, and attention=auto should take it.
    print("==== int8 model: attention=int8 / default (bf16 tensor cores), GPU time")
    for b in (1, 32):
        a, d = ms(f"int8_att_int8_b{b}_s128"), ms(f"int8_b{b}_s128")
        print(f"batch {b:2d} seq 128: " + (f"{a / d:.3f} (int8 attention {a * 1000:.1f} us, bf16 {d * 1000:.1f} us): "
                                          + ("int8 faster" if a < d else "bf16 faster") if a and d else "not measured"))
    return 0 if all(r[3] == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
