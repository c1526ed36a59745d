#!/usr/bin/env bash
# The CUDA backend's checks (issues 9 and 12), for a machine with an NVIDIA GPU, in one run of a
# few minutes, ending with one summary and the bars. It uses a bundle made on the build machine
# (scripts/bundle_cuda.sh), since the GPU machine may have no compiler and no network:
#   bash scripts/device_check.sh [BUNDLE_DIR]      (default build-gpu-bundle)
# Figures go to RESULTS_DIR (default $OUT when the device tool sets it, else a temporary folder)
# as JSON and text files; scripts/device_bars.py reads them and prints each bar against its
# figure. Steps:
# 1. convert MiniLM (fp16-rounded checkpoint, see bundle_cuda.sh) to fp16 and int8 here;
# 2. the device and `encrt inspect --backend cuda` for both models (which kernel runs each op),
#    weights=mapped's refusal on a discrete GPU and cudaHostRegister by kind of memory;
# 3. the conformance suite on the GPU (every op kind, every fixture in fp32/fp16/int8, packed
#    and padded, MiniLM fp16 against the CPU reference), the tensor-core attention cases under
#    attention=mma, the int8 GEMM cases under int8_gemm=mma and cublaslt and under int8_tile=128x64
#    and 128 (the GEMM's large tiles, forced), MiniLM int8, the whole
#    suite under rows=warp and rows=block, attention_split=on and off, gelu=kernel, pdl=off,
#    fp16_gemm=mma and auto (encrt's fp16 GEMM; with it, on sm_90, the feed-forward block and the
#    other linear + LayerNorm each in one clustered kernel, linear_norm=ffn by default), and
#    fp16_gemm=mma with linear_norm=fused and separate;
# 4. MiniLM sentence embeddings against PyTorch fp32: fp16 on cuda (bars 0.9999), with
#    attention=simt, gelu=kernel, attention_split=on and off, fp16_gemm=mma; int8 on cuda and on the CPU from the same file (bars
#    mean 0.995, min 0.99; int8 also with int8_gemm=cublaslt and int8_tile=128);
# 5. `encrt bench --backend cuda` (GPU time from CUDA events): fp16 and int8 at batch 1 and 32,
#    seq 128, with CUDA graphs; fp16 without graphs, with attention=simt, with gelu=kernel, both
#    models with attention_split=on and off (the tensor-core attention's warp layouts) and with
#    pdl=off (no programmatic dependent launch), and with both (the defaults before 2026-12-04); fp16 with
#    fp16_gemm=mma and auto, and auto with linear_norm=fused and separate (what the fused
#    feed-forward block and linear + LayerNorm kernels gain); int8 with
#    int8_gemm=cublaslt (the tensor-core GEMM is the default) and each int8_tile forced; both models with rows=warp and
#    rows=block (the row kernels' layouts); per-op profiles at batch 1 and 32;
# 6. packed vs padded batches of real sentence lengths (batch 32), cuda and cpu, fp16 and int8;
# 7. PyTorch fp16 eager and with CUDA graphs on the same GPU (benchmarks/torch_gpu_bench.py);
# 8. each kernel's duration in a graph replay and the gaps between them (scripts/kernel_trace.py),
#    encrt fp16 and int8 (fp16 also with attention_split=off|on, gelu=kernel, pdl=off, fp16_gemm=mma) and PyTorch fp16,
#    batch 1 and 32;
# 9. (STEPS=kernels only) each kernel's own GPU time under ncu (scripts/kernel_times.py), fp16 and int8, batch 1 and 32,
#    and PyTorch's at both batches.
# The int8 model runs its linears as fp16 ones by default since build H (int8_linears=auto: the
# cuda backend's README section "int8 files with fp16 linears"): every check above of the int8
# path's own kernels (quantize, the int8 GEMMs and their tiles, int8 attention, its row layouts)
# passes int8_linears=int8, and the int8 model is measured, checked and traced both ways.
# cuBLASLt is taken from ENCRT_CUBLASLT, else the machine's CUDA toolkit, else PyTorch's wheels.
set -uo pipefail
python=${PYTHON:-python3}  # the machine's Python with numpy (and torch for the peer)
cd "$(dirname "$0")/.."
source_bundle=${1:-build-gpu-bundle}
# STEPS: which parts run (the models are always converted), for splitting the check over device
# calls of at most 10 minutes: e.g. STEPS=inspect,accuracy,bench,packed,torch,trace, then
# STEPS=conformance. Default: all but kernels (ncu's replays; the trace step gives each kernel's
# time without performance counters) and quick. All of the default took 417 s on the H200 (build
# E0); builds F and G added about three minutes of steps: run STEPS=inspect,conformance,accuracy
# and STEPS=bench,packed,torch,trace as two calls, or, when one call is all the device time there
# is, STEPS=quick (step 0: expected about 9 minutes; every command in it has its own timeout, and
# each figure is printed as it comes, "== ..." lines, so a call cut short keeps what it measured;
# its files are named as the steps it samples name them, so device_bars.py reads it the same way).
steps=${STEPS:-inspect,conformance,accuracy,bench,packed,torch,trace}
want() { [[ ,$steps, == *,$1,* ]]; }
results=${RESULTS_DIR:-${OUT:-$(mktemp -d)}}
mkdir -p "$results"
summary=()
note() { summary+=("$1"); echo "== $1"; }
[[ -f $source_bundle/programs.tar.xz && -f $source_bundle/minilm/source/model.safetensors &&
   -f $source_bundle/minilm/reference.npy ]] ||
  { echo "device_check: no bundle in $source_bundle (scripts/bundle_cuda.sh)"; exit 2; }
# Everything this run writes (the programs unpacked, the converted models) goes to a folder of
# its own, not into the bundle.
bundle=$(mktemp -d)
"$python" -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
  "$source_bundle/programs.tar.xz" "$bundle" || { echo "device_check: cannot unpack the programs"; exit 2; }
cp "$source_bundle/commit" "$bundle/commit"
mkdir -p "$bundle/minilm"
cp "$source_bundle"/minilm/*.npy "$source_bundle/minilm/sentences.txt" "$bundle/minilm/"
encrt=$bundle/bin/encrt
# The bundle's shared libraries (libencrt and Debian's XNNPACK, cpuinfo, pthreadpool, libpng).
export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
minilm=$bundle/minilm
src=$source_bundle/minilm/source
echo "bundle of commit $(cat "$bundle/commit" 2>/dev/null), checked on $(hostname), results in $results"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
grep -m1 "model name" /proc/cpuinfo || true

if [[ -z ${ENCRT_CUBLASLT:-} ]]; then
  for candidate in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12; do
    [[ -f $candidate ]] && export ENCRT_CUBLASLT=$candidate && break
  done
fi
if [[ -z ${ENCRT_CUBLASLT:-} ]]; then
  ENCRT_CUBLASLT=$("$python" - <<'PY' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for pattern in ("nvidia/cublas/lib/libcublasLt.so*", "torch/lib/libcublasLt.so*"):
        hits = sorted(glob.glob(os.path.join(root, pattern)))
        if hits:
            print(hits[-1]); raise SystemExit
PY
)
  export ENCRT_CUBLASLT
fi
echo "cuBLASLt: ${ENCRT_CUBLASLT:-from the library search path}"

# The steps' tools: a conformance run of some cases, MiniLM's accuracy against PyTorch fp32, and
# encrt bench's GPU time (each with a timeout: a hang costs its step, not the device call).
conformance_case() {  # label backend tags [extra env]
  local label=$1 backend=$2 tags=$3
  timeout 180 env "${@:4}" "$bundle/bin/encrt_conformance" --backend "$backend" "$tags" >"$results/conformance_$label.log" 2>&1
  note "conformance --backend $backend $tags${4:+ (${*:4})}: status $? ($(tail -2 "$results/conformance_$label.log" | head -1))"
}
packed_case() {  # label (packed_LABEL.txt: device_bars.py reads "fp16" and "int8" as the bars) [cuda options]
  local label=$1 options=${2:-}
  local extra=()
  [[ -n $options ]] && extra=(--cuda-options "$options")
  timeout 120 "$bundle/bin/encrt_packed_vs_padded" "$minilm/minilm.${label%%_*}.encrt" --sentences "$minilm/sentences.txt" \
    --batch 32 --backends cuda --rounds 3 --iters 20 --warmup 3 "${extra[@]}" >"$results/packed_$label.txt" 2>&1
  note "packed vs padded $label${options:+ ($options)}: status $? ($(grep -i "packed / padded\|skipped" "$results/packed_$label.txt" | tr '\n' ';'))"
}
accuracy() {  # label dtype backend [backend options] [timeout in seconds]
  local label=$1 dtype=$2 backend=$3 options=${4:-} limit=${5:-120} out
  local extra=(--backend "$backend")
  [[ -n $options ]] && extra+=(--backend-options "$options")
  if out=$(timeout "$limit" "$python" tests/e2e/minilm_check.py --prebuilt "$minilm" --dtypes "$dtype" --encrt "$encrt" \
             "${extra[@]}" --json "$results/accuracy_$label.json" 2>&1); then
    note "accuracy $label: $(echo "$out" | grep cosine)"
  else
    local status=$?
    echo "$out" | tail -20
    [[ $status -eq 124 ]] && out="timed out after $limit s"
    note "accuracy $label: FAILED ($(echo "$out" | tail -1))"
  fi
}
bench() {  # label model batch seq [encrt bench options...]
  local label=$1 model=$2 batch=$3 seq=$4 json line
  shift 4
  json=$(timeout 120 "$encrt" bench "$model" --backend cuda --batch "$batch" --seq "$seq" --iters 300 --warmup 30 \
           --json "$@" 2>&1 | tail -1)
  echo "$json" >"$results/bench_$label.json"
  line=$("$python" -c "
import json, sys
d = json.loads(sys.argv[1]); g = d.get('device_ms', {})
print('GPU ms min %.4f median %.4f, wall ms median %.4f' % (g.get('min', -1), g.get('median', -1), d['latency_ms']['median']))
" "$json" 2>/dev/null || echo "failed: $json")
  note "encrt cuda $label: $line"
}

# encrt tune: every tunable option of the cuda backend tried on top of the best so far, each
# checked against the defaults' hidden state (every token's cosine ≥ min_cosine) and timed side by
# side with the best (GPU time); prints the options taken and the refusals or disagreements, and
# keeps the options taken in tuned_LABEL.txt (empty: the defaults), which the benches and accuracy
# checks of the tuned options read (tuned_options).
# Each tune starts no candidate after 70 s (--max-seconds: the result then names the first one not
# tried), so that a slow search does not lose its result; one that still runs out of the 90 s has
# most likely met a candidate that hangs (a kernel that never ends): every later tune would meet it
# too, so they are skipped (the log names the last trial).
tune_hung=""
tune() {  # label model batch seq min_cosine
  local label=$1 model=$2 batch=$3 seq=$4 min_cosine=$5 json status
  if [[ -n $tune_hung ]]; then
    note "tune $label: skipped (tune $tune_hung ran out of time)"
    return
  fi
  # (each trial is printed on stderr as it ends: a crash in a candidate leaves the ones before it)
  timeout 90 "$encrt" tune "$model" --backend cuda --batch "$batch" --seq "$seq" --iters 20 --rounds 3 \
    --min-cosine "$min_cosine" --max-seconds 70 --json >"$results/tune_$label.log" 2>&1
  status=$?
  [[ $status -eq 124 ]] && tune_hung=$label
  json=$(tail -1 "$results/tune_$label.log")
  echo "$json" >"$results/tune_$label.json"
  local lines
  if ! lines=$("$python" - "$json" <<'PY' 2>/dev/null
import json, sys
d = json.loads(sys.argv[1])
print("best %s: %.1f us against the defaults' %.1f us (%.2fx)" % (d["options"] or "the defaults", d["tuned_ms"] * 1000,
      d["default_ms"] * 1000, d["default_ms"] / d["tuned_ms"]))
if d.get("stopped_before"):
    print("  STOPPED after 70 s of candidates, before %s (it and the ones after it not tried)" % d["stopped_before"])
for t in d["trials"]:
    if t["outcome"] in ("refused", "failed"):
        print("  %s %s: %s" % (t["option"], t["outcome"], t["detail"][:150]))
    elif t["outcome"] == "differs":
        print("  %s DIFFERS: %s" % (t["option"], t["detail"][:150]))
    else:
        print("  %s %s: %.1f us against %.1f us, worst token cosine %.6f" % (t["option"], t["outcome"], t["ms"] * 1000,
              t["best_ms"] * 1000, t["min_cosine"]))
PY
  ); then
    note "tune $label: failed (status $status$([[ $status -eq 124 ]] && echo ": out of time")): ${json:0:300}"
    grep -v "^{" "$results/tune_$label.log" | tail -3 | while read -r l; do note "tune $label: last trials: ${l:0:200}"; done
    return
  fi
  while read -r l; do note "tune $label: $l"; done <<<"$lines"
  "$python" -c 'import json, sys; print(json.loads(sys.argv[1])["options"])' "$json" >"$results/tuned_$label.txt"
}
tuned_options() {  # label: the options its tune took (empty: the defaults, or no tune)
  cat "$results/tuned_$1.txt" 2>/dev/null || true
}

# 1. The models.
start=$SECONDS
for dtype in fp16 int8; do
  if ! "$encrt" convert "$src" -o "$minilm/minilm.$dtype.encrt" --dtype "$dtype" --quiet --threads "$(nproc)"; then
    note "convert MiniLM $dtype: FAILED"
  fi
done
note "converted MiniLM fp16 and int8 in $((SECONDS - start)) s"

# 0. STEPS=quick: the first things to measure when a device call is all there is (a task's device
# time is 15 minutes, the machine's start included, so about 9 minutes of commands, traces last,
# which a call cut short loses first): whether the builds since the last GPU run are correct (the
# conformance suite under the defaults and under
# fp16_gemm=mma, which runs encrt's fp16 GEMM, fused linear + LayerNorm and fused feed-forward
# kernels; the int8 GEMM's large tiles), accurate (MiniLM fp16 under both, int8), and what they
# gain (GPU time of each choice they added at batch 1 and 32, PyTorch with graphs beside them,
# and where batch 1's time goes under fp16_gemm=auto). The other steps measure the rest.
if want quick; then
export ENCRT_FIXTURES_DIR=$PWD/tests/fixtures
export ENCRT_TEST_TMP_DIR=$(mktemp -d)
export ENCRT_CONFORMANCE_MODEL=$minilm/minilm.fp16.encrt
"$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options fp16_gemm=auto --seq 128 \
  >"$results/inspect_fp16_gemm_auto.txt" 2>&1
note "fp16_gemm=auto: $(grep -c "GEMM + LayerNorm kernel" "$results/inspect_fp16_gemm_auto.txt") linears with their LayerNorm in one kernel, $(grep -c "feed-forward block kernel (tensor" "$results/inspect_fp16_gemm_auto.txt") feed-forward blocks in one kernel, $(grep -c "QKV projection + attention kernel" "$results/inspect_fp16_gemm_auto.txt") QKV projections with their attention"
"$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options fp16_gemm=auto,linear_norm=layer --seq 128 \
  >"$results/inspect_fp16_layer.txt" 2>&1
note "fp16_gemm=auto,linear_norm=layer: $(grep -c "output projection + LayerNorm + feed-forward block kernel" "$results/inspect_fp16_layer.txt") layer tails in one kernel"
# The tensor-core attention's resident blocks (the GPU's occupancy answer) under the default, the
# held key tile, the 6-block build and the whole-keys build: whether MiniLM's 768 blocks at batch
# 32 take one wave.
for option in attention_occupancy=auto attention_prefetch=on attention_occupancy=6 attention_keys=whole; do
  "$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options $option --seq 128 \
    >"$results/inspect_fp16_${option//=/_}.txt" 2>&1
  note "attention $option: $(grep -m1 -o "large grids: [0-9]* blocks a multiprocessor ([0-9]* at once)" "$results/inspect_fp16_${option//=/_}.txt" || tail -1 "$results/inspect_fp16_${option//=/_}.txt")"
done
# The int8 tensor-core GEMM's tiles: blocks resident a multiprocessor (int8 arithmetic; the
# tile choice by the grid, gemm_i8_mma_tile, does not count them yet).
"$encrt" inspect "$minilm/minilm.int8.encrt" --backend cuda --backend-options int8_linears=int8 --seq 128 \
  >"$results/inspect_int8_linears_int8.txt" 2>&1
note "int8 arithmetic: $(grep -m1 -o "int8 GEMM blocks a multiprocessor:[^,]*" "$results/inspect_int8_linears_int8.txt" || tail -1 "$results/inspect_int8_linears_int8.txt")"
for shape in 1x128 32x128; do
  batch=${shape%x*} seq=${shape#*x}
  bench "fp16_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq"
  bench "int8_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq"
done
# The defaults' correctness and accuracy before the tunes (which take up to 6 minutes): what a
# call cut short must not lose.
timeout 150 "$bundle/bin/encrt_conformance" --backend cuda >"$results/conformance.log" 2>&1
note "conformance --backend cuda: status $? ($(tail -2 "$results/conformance.log" | head -1))"
if [[ $(tail -2 "$results/conformance.log" | head -1) != *passed* ]]; then
  grep -B4 -A12 "FAILED" "$results/conformance.log" | head -60
  # The default path changed since build E without a GPU in three places: PDL's early trigger (F),
  # the row kernels' 384-wide warp layout (J) and the weights' upload on the session's stream (I).
  # Which of the first two a failure follows, in the same call: the suite without each.
  conformance_case defaults_pdl_off cuda:pdl=off "[ops],[models]"
  conformance_case defaults_rows_block cuda:rows=block "[ops],[models]"
fi
accuracy fp16_cuda fp16 cuda "" 90
accuracy int8_cuda int8 cuda "" 90
# Every option's value against the best so far, checked and timed (encrt tune): which choices the
# defaults should take at each shape, and whether any build since E gives other answers on MiniLM.
for shape in 1x128 32x128; do
  batch=${shape%x*} seq=${shape#*x}
  # fp16: the variants differ by fp16 rounding only, and the bar is a sentence cosine of 0.9999;
  # int8: int8 arithmetic (int8_linears=int8) against the default's fp16 linears differs by the
  # activations' quantization, which the int8 bars (0.995 / 0.99 against PyTorch) allow.
  tune "fp16_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" 0.9999
  tune "int8_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" 0.99
done
# The tuned options benched as the defaults are (300 runs, in the call that runs PyTorch): the bars
# for the options the next defaults would take (device_bars.py: "tuned"); the accuracy checks of
# the same options follow the defaults' below.
for label in fp16_b1_s128 int8_b1_s128 fp16_b32_s128 int8_b32_s128; do
  opts=$(tuned_options "$label")
  [[ -n $opts ]] || continue
  batch=${label#*_b} batch=${batch%%_*}
  bench "${label%%_*}_tuned_b${batch}_s128" "$minilm/minilm.${label%%_*}.encrt" "$batch" 128 --backend-options "$opts"
done
# (fp16_gemm, pdl and the fusions' options at both shapes: in the tunes above; each is benched on
# its own in the full check.)
# The int8 model's linears as fp16 (int8_linears=auto, the default, runs them so) against int8
# arithmetic, and with encrt's fp16 GEMM and its fused kernels at batch 1.
bench "int8_linears_int8_b1_s128" "$minilm/minilm.int8.encrt" 1 128 --backend-options int8_linears=int8
bench "int8_linears_int8_b32_s128" "$minilm/minilm.int8.encrt" 32 128 --backend-options int8_linears=int8
bench "int8_fp16_gemm_auto_b1_s128" "$minilm/minilm.int8.encrt" 1 128 --backend-options fp16_gemm=auto
# Batch 1 on encrt's fp16 GEMM and its fused kernels (3 kernels a layer), and with a layer's tail
# after its attention in one kernel (linear_norm=layer: 2 a layer), side by side.
bench "fp16_gemm_auto_b1_s128" "$minilm/minilm.fp16.encrt" 1 128 --backend-options fp16_gemm=auto
bench "fp16_gemm_auto_layer_b1_s128" "$minilm/minilm.fp16.encrt" 1 128 --backend-options fp16_gemm=auto,linear_norm=layer
# The tensor-core attention's unsplit layout (batch 32) holding the next key tile in registers.
bench "fp16_attention_prefetch_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options attention_prefetch=on
# ... and compiled for 6 blocks a multiprocessor (768 blocks in one wave instead of two).
bench "fp16_attention_occupancy6_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options attention_occupancy=6
# ... and with every key of a sequence in shared memory at once (cp.async, one round trip a block).
bench "fp16_attention_keys_whole_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options attention_keys=whole
# Packed vs padded on the GPU (issue 12's bar, 1.5×: 1.11× in E, both runs latency-bound): the
# defaults (when the packed step does not run them with the CPU), fp16_gemm=norm (1184 padded rows
# take the 64-row build, 488 packed ones the 16-row one), everything on encrt's kernels, and the
# options batch 32's tune took.
want packed || packed_case fp16
packed_case fp16_norm fp16_gemm=norm
# ... and every linear on encrt's kernels, a layer's tail in one (488 packed rows: a layer in 3
# kernels, where the padded run's 1184 rows take the same kernels at 2.4× the rows).
packed_case fp16_layer fp16_gemm=mma,linear_norm=layer
tuned32=$(tuned_options fp16_b32_s128)
[[ -n $tuned32 ]] && packed_case fp16_tuned "$tuned32"
# Batch 32 with the linears that a LayerNorm follows on the fused linear + LayerNorm kernel
# (fp16_gemm=norm: 12 kernels fewer than the defaults' cuBLASLt + LayerNorm), at 64 rows a block
# (its auto at 4096 rows) and at 16 (4× the weight reads).
bench "fp16_gemm_norm_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options fp16_gemm=norm
bench "fp16_gemm_norm_rows16_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options fp16_gemm=norm,norm_rows=16
# ... and in clusters of 4 blocks of 96 columns (x's rows read by 4 blocks instead of 8).
bench "fp16_gemm_norm_cluster4_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 --backend-options fp16_gemm=norm,norm_cluster=4
# ... and at 128 rows a block (8 warps) in those clusters: 32 × 4 blocks, one wave, about 88 MB of
# L2 reads for the down projection (cuBLASLt's tiles: about 76 MB).
bench "fp16_gemm_norm_rows128_cluster4_b32_s128" "$minilm/minilm.fp16.encrt" 32 128 \
  --backend-options fp16_gemm=norm,norm_rows=128,norm_cluster=4
# (What each fusion of fp16_gemm=auto gains at batch 1 and clusters of 8 against 16, and the int8
# GEMM's tiles under int8_linears=int8: in the tunes, which try each of them with its parent's
# values; each on its own in the full check.)
if tout=$(timeout 120 "$python" benchmarks/torch_gpu_bench.py --shapes 1x128,32x128 --json "$results/torch.json" 2>&1); then
  while read -r l; do note "$l"; done < <(echo "$tout" | grep "^torch fp16")
else
  note "torch_gpu_bench: $(echo "$tout" | tail -1)"
fi
timeout 120 "$bundle/bin/encrt_conformance" --backend cuda:fp16_gemm=mma >"$results/conformance_fp16_gemm_mma.log" 2>&1
note "conformance --backend cuda:fp16_gemm=mma: status $? ($(tail -2 "$results/conformance_fp16_gemm_mma.log" | head -1))"
[[ $(tail -2 "$results/conformance_fp16_gemm_mma.log" | head -1) == *passed* ]] ||
  grep -B4 -A12 "FAILED" "$results/conformance_fp16_gemm_mma.log" | head -60
accuracy fp16_cuda_gemm_mma fp16 cuda fp16_gemm=mma 90
accuracy fp16_cuda_layer fp16 cuda fp16_gemm=mma,linear_norm=layer 60
accuracy fp16_cuda_norm_rows64 fp16 cuda fp16_gemm=norm,norm_rows=64 60
accuracy int8_cuda_linears_int8 int8 cuda int8_linears=int8 90
for label in fp16_b1_s128 fp16_b32_s128 int8_b1_s128 int8_b32_s128; do
  opts=$(tuned_options "$label")
  [[ -n $opts ]] && accuracy "${label%%_*}_cuda_tuned_${label#*_}" "${label%%_*}" cuda "$opts" 60
done
# The fixture models' int8 files through int8 arithmetic (the defaults run their linears as fp16
# ones), and MiniLM int8 with it; the int8 GEMM's large tiles; the attention's held key tile.
conformance_case int8_linears_int8 cuda:int8_linears=int8 "[models]" "ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt"
conformance_case int8_tile_128 cuda:int8_tile=128 "[int8_gemm]"
conformance_case layer_tail cuda:fp16_gemm=mma,linear_norm=layer "[models]"
conformance_case norm_rows64 cuda:fp16_gemm=mma,linear_norm=fused,norm_rows=64 "[models]"
conformance_case norm_rows128_cluster4 cuda:fp16_gemm=mma,linear_norm=fused,norm_rows=128,norm_cluster=4 "[models]"
conformance_case attention_prefetch cuda:attention_split=off,attention_prefetch=on "[f16_attention],[bf16_attention]"
conformance_case attention_occupancy6 cuda:attention_split=off,attention_occupancy=6 "[f16_attention],[bf16_attention]"
conformance_case attention_keys_whole cuda:attention_split=off,attention_keys=whole "[f16_attention],[bf16_attention]"
conformance_case attention_keys_whole_split cuda:attention_split=on,attention_keys=whole "[f16_attention]"
PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
  "$minilm/minilm.fp16.encrt" --batch 1 --seq 128 --options fp16_gemm=auto >"$results/trace_fp16_fp16_gemm_auto_b1.txt" 2>&1
note "trace encrt fp16 fp16_gemm=auto batch 1: status $? ($(grep -m1 "kernels per run" "$results/trace_fp16_fp16_gemm_auto_b1.txt" || tail -1 "$results/trace_fp16_fp16_gemm_auto_b1.txt"))"
PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
  "$minilm/minilm.fp16.encrt" --batch 1 --seq 128 --options fp16_gemm=auto,linear_norm=layer >"$results/trace_fp16_layer_b1.txt" 2>&1
note "trace encrt fp16 fp16_gemm=auto,linear_norm=layer batch 1: status $? ($(grep -m1 "kernels per run" "$results/trace_fp16_layer_b1.txt" || tail -1 "$results/trace_fp16_layer_b1.txt"))"
# Where batch 32's time goes under the defaults since build F (the attention's key tiles in one
# round trip, PDL's trigger): the next work on the batch-32 bar starts from this table.
PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
  "$minilm/minilm.fp16.encrt" --batch 32 --seq 128 >"$results/trace_fp16_b32.txt" 2>&1
note "trace encrt fp16 batch 32: status $? ($(grep -m1 "kernels per run" "$results/trace_fp16_b32.txt" || tail -1 "$results/trace_fp16_b32.txt"))"
note "trace fp16 batch 32, attention: $(grep -m1 "attention_mma" "$results/trace_fp16_b32.txt" | tr -s ' ' | cut -c1-160)"
# The fused linear + LayerNorm kernel's own time at batch 32 (64 rows a block) against cuBLASLt's
# GEMM and the LayerNorm kernel in the defaults' trace above.
PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
  "$minilm/minilm.fp16.encrt" --batch 32 --seq 128 --options fp16_gemm=norm >"$results/trace_fp16_b32_norm.txt" 2>&1
note "trace fp16 batch 32 fp16_gemm=norm: status $? ($(grep -m1 "kernels per run" "$results/trace_fp16_b32_norm.txt" || tail -1 "$results/trace_fp16_b32_norm.txt")); $(grep -m1 "layer_norm_rows" "$results/trace_fp16_b32_norm.txt" | tr -s ' ' | cut -c1-160)"
# The attention kernel's own time at batch 32 under its three other builds (the end-to-end benches
# above differ by a few µs in ±5 µs of spread; the trace times the kernel alone).
for option in attention_keys=whole attention_prefetch=on attention_occupancy=6; do
  PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
    "$minilm/minilm.fp16.encrt" --batch 32 --seq 128 --options $option >"$results/trace_fp16_b32_${option//=/_}.txt" 2>&1
  note "trace fp16 batch 32 $option, attention: $(grep -m1 "attention_mma" "$results/trace_fp16_b32_${option//=/_}.txt" | tr -s ' ' | cut -c1-160 || tail -1 "$results/trace_fp16_b32_${option//=/_}.txt")"
done
fi

# 2. Where each op runs.
if want inspect; then
for dtype in fp16 int8; do
  "$encrt" inspect "$minilm/minilm.$dtype.encrt" --backend cuda --seq 128 >"$results/inspect_$dtype.txt" 2>&1
  sed -n '/^backends of/,/^host arena/p' "$results/inspect_$dtype.txt"
done
"$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options attention=simt --seq 128 \
  >"$results/inspect_fp16_simt.txt" 2>&1
"$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options fp16_gemm=auto --seq 128 \
  >"$results/inspect_fp16_gemm_auto.txt" 2>&1
note "fp16_gemm=auto: $(grep -c "GEMM + LayerNorm kernel" "$results/inspect_fp16_gemm_auto.txt") linears with their LayerNorm in one kernel, $(grep -c "feed-forward block kernel (tensor" "$results/inspect_fp16_gemm_auto.txt") feed-forward blocks in one kernel, $(grep -c "QKV projection + attention kernel" "$results/inspect_fp16_gemm_auto.txt") QKV projections with their attention"
note "attention kernels (fp16, auto): $(grep -m1 -o "attention kernel[^|]*" "$results/inspect_fp16.txt")"
# weights=mapped is refused on a discrete GPU (registering the file mapping never returned on the
# H200 VM): the refusal must be immediate and say why; then cudaHostRegister on its own, by kind
# of memory (scripts/host_register_probe.py, 8 s each at most), to record where it hangs.
start=$SECONDS
timeout 20 "$encrt" inspect "$minilm/minilm.fp16.encrt" --backend cuda --backend-options weights=mapped --seq 128 \
  >"$results/inspect_fp16_mapped.txt" 2>&1
note "weights=mapped on this GPU: status $? in $((SECONDS - start)) s: $(grep -m1 -o "weights=mapped is for[^:]*" "$results/inspect_fp16_mapped.txt" || tail -1 "$results/inspect_fp16_mapped.txt")"
timeout 90 "$python" scripts/host_register_probe.py "$minilm/minilm.fp16.encrt" --limit 8 >"$results/host_register.txt" 2>&1
while read -r line; do note "$line"; done < <(grep '^host_register_probe' "$results/host_register.txt")
fi

# 3. Conformance.
if want conformance; then
export ENCRT_FIXTURES_DIR=$PWD/tests/fixtures
export ENCRT_TEST_TMP_DIR=$(mktemp -d)
export ENCRT_CONFORMANCE_MODEL=$minilm/minilm.fp16.encrt
start=$SECONDS
timeout 240 "$bundle/bin/encrt_conformance" --backend cuda >"$results/conformance.log" 2>&1
status=$?
if [[ $status -eq 0 ]]; then
  note "conformance --backend cuda: $(tail -2 "$results/conformance.log" | head -1) ($((SECONDS - start)) s)"
elif [[ $status -eq 4 ]]; then
  note "conformance --backend cuda: $(grep SKIPPED "$results/conformance.log")"
else
  grep -B4 -A12 "FAILED" "$results/conformance.log" | head -150
  note "conformance --backend cuda: FAILED, status $status ($(tail -3 "$results/conformance.log" | tr '\n' ' '))"
fi

# The tensor-core attention kernels alone (attention=mma refuses the probabilities, attention=int8
# every attention op but an int8 model's, so only their own cases): fp16; bf16 on fp32
# activations (an int8 model's under auto and mma, an fp32 model's only under mma) and SIMT under
# simt; the int8 kernel. Then the MiniLM cases on the int8 model, with each int8 attention route.
conformance_case mma cuda:attention=mma "[f16_attention]"
conformance_case attention_prefetch cuda:attention_split=off,attention_prefetch=on "[f16_attention],[bf16_attention]"
conformance_case attention_occupancy6 cuda:attention_split=off,attention_occupancy=6 "[f16_attention],[bf16_attention]"
conformance_case attention_keys_whole cuda:attention_split=off,attention_keys=whole "[f16_attention],[bf16_attention]"
conformance_case attention_keys_whole_split cuda:attention_split=on,attention_keys=whole "[f16_attention]"
for option in auto mma simt; do
  conformance_case "bf16_$option" "cuda:attention=$option" "[bf16_attention]"
done
conformance_case att_int8 cuda:attention=int8 "[int8_attention]"
conformance_case att_int8_minilm cuda:attention=int8 "conformance: MiniLM*" "ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt"
conformance_case att_int8_packed cuda:attention=int8 "conformance: packed batches of MiniLM*" "ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt"
"$encrt" inspect "$minilm/minilm.int8.encrt" --backend cuda --seq 128 >"$results/inspect_int8.txt" 2>&1
"$encrt" inspect "$minilm/minilm.int8.encrt" --backend cuda --backend-options attention=int8 --seq 128 \
  >"$results/inspect_int8_att_int8.txt" 2>&1
note "attention kernels (int8 model, auto): $(grep -m1 -o "attention kernel[^|]*" "$results/inspect_int8.txt"); attention=int8: $(grep -m1 -o "attention kernel[^|]*" "$results/inspect_int8_att_int8.txt")"
# Every op again with each layout of the row kernels forced (auto: the first run above).
# (int8_linears=int8: the int8 model's quantize and LayerNorm + quantize kernels run.)
for rows in warp block; do
  ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt timeout 120 "$bundle/bin/encrt_conformance" \
    --backend "cuda:rows=$rows,int8_linears=int8" >"$results/conformance_rows_$rows.log" 2>&1
  note "conformance --backend cuda:rows=$rows,int8_linears=int8 (MiniLM int8): status $? ($(tail -2 "$results/conformance_rows_$rows.log" | head -1))"
done
# The attention kernel's other warp layout (auto splits the keys at the suite's small grids), and
# cuBLASLt's GELU epilogue.
for option in attention_split=off attention_split=on gelu=kernel pdl=off fp16_gemm=mma fp16_gemm=auto \
  fp16_gemm=mma,linear_norm=fused fp16_gemm=mma,linear_norm=separate,qkv_attention=separate fp16_gemm=mma,norm_cluster=8; do
  timeout 120 "$bundle/bin/encrt_conformance" --backend "cuda:$option" >"$results/conformance_${option//[=,]/_}.log" 2>&1
  note "conformance --backend cuda:$option: status $? ($(tail -2 "$results/conformance_${option//[=,]/_}.log" | head -1))"
done
for gemm in mma cublaslt; do
  timeout 240 "$bundle/bin/encrt_conformance" --backend "cuda:int8_gemm=$gemm" "[int8_gemm]" \
    >"$results/conformance_int8_$gemm.log" 2>&1
  note "conformance --backend cuda:int8_gemm=$gemm [int8_gemm]: status $? ($(tail -2 "$results/conformance_int8_$gemm.log" | head -1))"
done
# The int8 GEMM's tiles the suite's small shapes would not reach under auto (128 rows), forced.
for tile in 128x64 128; do
  timeout 240 "$bundle/bin/encrt_conformance" --backend "cuda:int8_tile=$tile" "[int8_gemm]" \
    >"$results/conformance_int8_tile_$tile.log" 2>&1
  note "conformance --backend cuda:int8_tile=$tile [int8_gemm]: status $? ($(tail -2 "$results/conformance_int8_tile_$tile.log" | head -1))"
done
ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt timeout 120 "$bundle/bin/encrt_conformance" --backend cuda \
  "conformance: MiniLM*" >"$results/conformance_int8_minilm.log" 2>&1
note "conformance --backend cuda, MiniLM int8 (its linears as fp16, the default): status $? ($(tail -2 "$results/conformance_int8_minilm.log" | head -1))"
conformance_case int8_linears_int8 cuda:int8_linears=int8 "[models]" "ENCRT_CONFORMANCE_MODEL=$minilm/minilm.int8.encrt"
fi

# 4. Accuracy against PyTorch fp32 (reference embeddings computed with the fp32 weights).
if want accuracy; then
accuracy fp16_cuda fp16 cuda
accuracy fp16_cuda_simt fp16 cuda attention=simt
accuracy fp16_cuda_gelu_kernel fp16 cuda gelu=kernel
accuracy fp16_cuda_split_on fp16 cuda attention_split=on
accuracy fp16_cuda_split_off fp16 cuda attention_split=off
accuracy fp16_cuda_prefetch fp16 cuda attention_split=off,attention_prefetch=on
accuracy fp16_cuda_keys_whole fp16 cuda attention_split=off,attention_keys=whole
accuracy fp16_cuda_gemm_mma fp16 cuda fp16_gemm=mma
accuracy int8_cuda int8 cuda
accuracy int8_cuda_linears_int8 int8 cuda int8_linears=int8
accuracy int8_cuda_cublaslt int8 cuda int8_linears=int8,int8_gemm=cublaslt
accuracy int8_cuda_tile_128 int8 cuda int8_linears=int8,int8_tile=128
accuracy int8_cuda_att_int8 int8 cuda attention=int8
accuracy int8_cuda_simt int8 cuda int8_linears=int8,attention=simt
accuracy int8_cpu int8 cpu
fi

# 5. GPU time.
if want bench; then
for shape in 1x128 32x128; do
  batch=${shape%x*} seq=${shape#*x}
  bench "fp16_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq"
  bench "int8_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq"
  bench "fp16_nographs_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --no-graphs
  bench "fp16_simt_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options attention=simt
  # The defaults' alternatives: encrt's exact GELU kernel, no programmatic dependent launch, both
  # (the defaults before 2026-12-04).
  bench "fp16_gelu_kernel_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options gelu=kernel
  bench "fp16_pdl_off_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options pdl=off
  bench "int8_pdl_off_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,pdl=off
  bench "fp16_previous_defaults_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options pdl=off,gelu=kernel
  for split in on off; do
    bench "fp16_split_${split}_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options attention_split=$split
    bench "int8_split_${split}_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,attention_split=$split
  done
  bench "int8_cublaslt_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,int8_gemm=cublaslt
  # The int8 model's linears as int8 arithmetic and as fp16 ones (auto: f16).
  for linears in int8 f16; do
    bench "int8_linears_${linears}_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" \
      --backend-options int8_linears=$linears
  done
  # encrt's fp16 GEMM (new in build F) for every fp16 linear, and up to 256 rows (auto).
  bench "fp16_gemm_mma_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options fp16_gemm=mma
  bench "fp16_gemm_auto_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options fp16_gemm=auto
  bench "fp16_attention_prefetch_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options attention_prefetch=on
  bench "fp16_attention_occupancy6_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options attention_occupancy=6
  bench "fp16_attention_keys_whole_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options attention_keys=whole
  bench "fp16_gemm_auto_qkv_separate_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options fp16_gemm=auto,qkv_attention=separate
  bench "fp16_gemm_auto_fused_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options fp16_gemm=auto,linear_norm=fused
  bench "fp16_gemm_auto_separate_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options fp16_gemm=auto,linear_norm=separate,qkv_attention=separate
  bench "fp16_gemm_auto_cluster8_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" \
    --backend-options fp16_gemm=auto,norm_cluster=8
  # The int8 GEMM's block tiles, each forced (auto: by the grid, gemm_i8_mma_tile; the 128-row
  # tiles and the 16-byte fragment loads are new in build F).
  for tile in 32 64 128x64 128; do
    bench "int8_tile_${tile}_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,int8_tile=$tile
  done
  # An int8 model's attention: bf16 tensor cores (auto, above), the int8 kernel, the SIMT fp32 one.
  bench "int8_att_int8_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options attention=int8
  bench "int8_simt_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,attention=simt
  # The row kernels' two layouts (row_layout.cuh; auto mixes them by op and row count).
  for rows in warp block; do
    bench "fp16_rows_${rows}_b${batch}_s${seq}" "$minilm/minilm.fp16.encrt" "$batch" "$seq" --backend-options rows=$rows
    bench "int8_rows_${rows}_b${batch}_s${seq}" "$minilm/minilm.int8.encrt" "$batch" "$seq" --backend-options int8_linears=int8,rows=$rows
  done
done
"$encrt" bench "$minilm/minilm.int8.encrt" --backend cuda --batch 32 --seq 128 --iters 20 --warmup 5 --profile \
  --backend-options attention=int8 >"$results/profile_int8_att_int8_b32.txt" 2>&1
"$encrt" bench "$minilm/minilm.int8.encrt" --backend cuda --batch 32 --seq 128 --iters 20 --warmup 5 --profile \
  --backend-options int8_linears=int8,int8_gemm=cublaslt >"$results/profile_int8_cublaslt_b32.txt" 2>&1
"$encrt" bench "$minilm/minilm.int8.encrt" --backend cuda --batch 32 --seq 128 --iters 20 --warmup 5 --profile \
  >"$results/profile_int8_b32.txt" 2>&1
"$encrt" bench "$minilm/minilm.int8.encrt" --backend cuda --batch 32 --seq 128 --iters 20 --warmup 5 --profile \
  --backend-options int8_linears=int8 >"$results/profile_int8_linears_int8_b32.txt" 2>&1
"$encrt" bench "$minilm/minilm.fp16.encrt" --backend cuda --batch 32 --seq 128 --iters 20 --warmup 5 --profile \
  >"$results/profile_fp16_b32.txt" 2>&1
for dtype in fp16 int8; do
  "$encrt" bench "$minilm/minilm.$dtype.encrt" --backend cuda --batch 1 --seq 128 --iters 20 --warmup 5 --profile \
    >"$results/profile_${dtype}_b1.txt" 2>&1
done
fi

# 6. Packed vs padded, real sentence lengths.
if want packed; then
for dtype in fp16 int8; do
  timeout 180 "$bundle/bin/encrt_packed_vs_padded" \
    "$minilm/minilm.$dtype.encrt" --sentences "$minilm/sentences.txt" --batch 32 --backends cuda,cpu \
    --threads "$(nproc)" --rounds 3 --iters 20 --warmup 3 >"$results/packed_$dtype.txt" 2>&1
  note "packed vs padded $dtype: $(grep -i "packed / padded\|skipped" "$results/packed_$dtype.txt" | tr '\n' ';')"
done
fi

# 7. The peer.
if want torch; then
if tout=$(timeout 180 "$python" benchmarks/torch_gpu_bench.py --shapes 1x128,32x128 --json "$results/torch.json" 2>&1); then
  while read -r l; do note "$l"; done < <(echo "$tout" | grep "^torch fp16")
else
  note "torch_gpu_bench: $(echo "$tout" | tail -1)"
fi
fi
# 8. Each kernel's duration inside a real run with CUDA graphs, and the gaps between kernels
# (scripts/kernel_trace.py: PyTorch's profiler, CUPTI activity records, needs no counters),
# encrt fp16 and int8 and PyTorch fp16, batch 1 and 32.
if want trace; then
for batch in 1 32; do
  for dtype in fp16 int8; do
    PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
      "$minilm/minilm.$dtype.encrt" --batch "$batch" --seq 128 >"$results/trace_${dtype}_b${batch}.txt" 2>&1
    note "trace encrt $dtype batch $batch: status $? ($(grep -m1 "kernels per run" "$results/trace_${dtype}_b${batch}.txt" || tail -1 "$results/trace_${dtype}_b${batch}.txt"))"
  done
  # The options that change which kernels run: the other attention warp layout, cuBLASLt's GELU.
  for option in attention_split=off attention_split=on gelu=kernel pdl=off fp16_gemm=mma fp16_gemm=auto; do
    PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
      "$minilm/minilm.fp16.encrt" --batch "$batch" --seq 128 --options "$option" \
      >"$results/trace_fp16_${option/=/_}_b${batch}.txt" 2>&1
    note "trace encrt fp16 $option batch $batch: status $? ($(grep -m1 "kernels per run" "$results/trace_fp16_${option/=/_}_b${batch}.txt" || tail -1 "$results/trace_fp16_${option/=/_}_b${batch}.txt"))"
  done
  PYTHONPATH=$PWD/python ENCRT_LIBRARY=$bundle/lib/libencrt.so.0 timeout 60 "$python" scripts/kernel_trace.py encrt \
    "$minilm/minilm.int8.encrt" --batch "$batch" --seq 128 --options int8_linears=int8 \
    >"$results/trace_int8_linears_int8_b${batch}.txt" 2>&1
  note "trace encrt int8 int8_linears=int8 batch $batch: status $? ($(grep -m1 "kernels per run" "$results/trace_int8_linears_int8_b${batch}.txt" || tail -1 "$results/trace_int8_linears_int8_b${batch}.txt"))"
  timeout 90 "$python" scripts/kernel_trace.py torch --batch "$batch" --seq 128 >"$results/trace_torch_b${batch}.txt" 2>&1
  note "trace PyTorch fp16 graph batch $batch: status $? ($(grep -m1 "kernels per run" "$results/trace_torch_b${batch}.txt" || tail -1 "$results/trace_torch_b${batch}.txt"))"
done
fi
# 9. Each kernel's own GPU time (ncu, one eager forward pass), where the time above goes; last,
# since ncu's replays are the slowest step (60 s at most each).
if want kernels; then
for dtype in fp16 int8; do
  for batch in 1 32; do
    timeout 60 "$python" scripts/kernel_times.py --launch-count 200 --csv-out "$results/ncu_${dtype}_b${batch}.csv" -- \
      "$encrt" bench "$minilm/minilm.$dtype.encrt" --backend cuda --batch "$batch" --seq 128 --no-graphs --iters 1 --warmup 0 \
      >"$results/kernels_${dtype}_b${batch}.txt" 2>&1
    note "kernel times $dtype batch $batch (ncu): status $? ($(head -1 "$results/kernels_${dtype}_b${batch}.txt"))"
  done
done
# The peer's kernels at the same shapes (its first eager passes; each kernel's mean is per call).
for batch in 1 32; do
  timeout 90 "$python" scripts/kernel_times.py --launch-count 160 --csv-out "$results/ncu_torch_b${batch}.csv" -- \
    "$python" benchmarks/torch_gpu_bench.py --shapes "${batch}x128" --iters 1 >"$results/kernels_torch_b${batch}.txt" 2>&1
  note "kernel times PyTorch fp16 batch $batch (ncu): status $? ($(head -1 "$results/kernels_torch_b${batch}.txt"))"
done
fi

echo
echo "==== summary (device_check, $SECONDS s)"
printf '%s\n' "${summary[@]}"
echo
"$python" scripts/device_bars.py "$results"
