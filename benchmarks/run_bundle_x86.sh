#!/usr/bin/env bash
# Runs a bundle made by benchmarks/bundle_x86.sh on another x86-64 machine, from the root of a
# checkout of the same commit (the runtime tests read tests/fixtures from the path compiled in,
# /work/main/tests/fixtures on the machine that built them: it is linked to this checkout when
# missing). Writes every log into RESULTS_DIR:
#   cpu.txt         the processor and its SIMD flags
#   kernel_tests    every kernel of the kernel lists this CPU runs, against its reference (with
#                   AMX: the native AMX int8 GEMM too, never run before on real tiles)
#   runtime_tests   golden PyTorch fixtures (fp32, fp16, int8) on the scalar and best levels
#   kernel_bench    peaks, GEMMs (int8, fp32, fp16) and XNNPACK on MiniLM shapes
#   bench_profile   encrt bench --profile of MiniLM int8, batch 1, seq 128, one thread
#   model_floor     MiniLM int8 against the floor this CPU's probes set (encrt_model_floor --isa
#                   all: every x86 level the CPU runs, in one process), seq 16, 128 and 512
#   amx_int8        (CPUs with AMX-INT8) MiniLM int8 latency at --isa amx and --isa avx512fp16
#                   (tdpbusd vs vpdpbusd int8 GEMMs), three rounds each
#   minilm_fp16     MiniLM fp16 sentence embeddings against PyTorch (bundles made with E2E=DIR),
#                   on the best level and on avx512vnni (fp32 arithmetic), and their latency
#   compare_ort     ONNX Runtime against encrt, int8, side by side (PYTHON must have onnxruntime;
#                   COMPARE=0 skips it)
# BENCH_FILTER replaces the kernel benchmarks' --benchmark_filter; REPS their repetitions (3).
set -uo pipefail
bundle=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: run_bundle_x86.sh RESULTS_DIR}
mkdir -p "$results"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [[ ! -e /work/main/tests/fixtures ]]; then mkdir -p /work && ln -sfn "$PWD" /work/main; fi
mkdir -p /work/main/build/tests/tmp  # the runtime tests write converted fixtures there (path compiled in)

{ grep -m1 "model name" /proc/cpuinfo; nproc
  grep -m1 flags /proc/cpuinfo | tr ' ' '\n' | grep -E 'avx512|vnni|amx|f16' | tr '\n' ' '; echo; } > "$results/cpu.txt"
cat "$results/cpu.txt"

step() {  # step NAME TIMEOUT_S COMMAND...: runs, logs, prints the tail and the exit status
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$results/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - t0)) s"
  tail -n "${TAIL:-6}" "$results/$name.log"
}

step kernel_tests 240 "$bundle/bin/encrt_kernel_tests"
step runtime_tests 240 "$bundle/bin/encrt_runtime_tests"
TAIL=40 step kernel_bench 300 "$bundle/bin/encrt_kernel_bench" --benchmark_repetitions="${REPS:-3}" \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
  "--benchmark_filter=${BENCH_FILTER:-peak|__avx512|__avxvnni|__amx|xnnpack}"
if [[ -f $bundle/work/minilm.int8.encrt ]]; then
  TAIL=30 step bench_profile 120 "$bundle/bin/encrt" bench "$bundle/work/minilm.int8.encrt" --batch 1 --seq 128 \
    --threads 1 --iters 50 --profile
fi
if [[ -f $bundle/work/minilm.int8.encrt && -x $bundle/bin/encrt_model_floor ]]; then
  TAIL=40 step model_floor 300 bash -c "
    for seq in 16 128 512; do
      echo \"seq \$seq\"
      '$bundle/bin/encrt_model_floor' '$bundle/work/minilm.int8.encrt' --seq \$seq --isa all --rounds 3 --iters 10 |
        sed -n '/^measured single/p; /^level  *int8 probe/,\$p'
    done"
fi
if [[ -f $bundle/work/minilm.int8.encrt ]] && grep -qw amx_int8 /proc/cpuinfo; then
  TAIL=12 step amx_int8 300 bash -c "
    for round in 1 2 3; do for isa in amx avx512fp16; do
      echo \"isa \$isa\"
      '$bundle/bin/encrt' bench '$bundle/work/minilm.int8.encrt' --batch 1 --seq 128 --threads 1 --iters 50 --isa \$isa |
        grep -E '^(kernels|latency)'
    done; done"
fi
if [[ -d $bundle/e2e ]]; then
  TAIL=12 step minilm_fp16 300 bash -c "
    '${PYTHON:-python3}' tests/e2e/minilm_check.py --prebuilt '$bundle/e2e' --encrt '$bundle/bin/encrt' --dtypes fp16
    ENCRT_ISA=avx512vnni '${PYTHON:-python3}' tests/e2e/minilm_check.py --prebuilt '$bundle/e2e' --encrt '$bundle/bin/encrt' --dtypes fp16
    for round in 1 2 3; do for isa in avx512fp16 avx512vnni; do
      '$bundle/bin/encrt' bench '$bundle/e2e/minilm.fp16.encrt' --batch 1 --seq 128 --threads 1 --iters 30 --isa \$isa |
        grep -E '^(kernels|latency)'
    done; done"
fi
[[ -f $bundle/work/minilm.int8.encrt && ${COMPARE:-1} != 0 ]] || exit 0
TAIL=40 step compare_ort 420 "${PYTHON:-python3}" benchmarks/compare_ort.py --prebuilt --work "$bundle/work" \
  --encrt "$bundle/bin/encrt" --dtypes int8 --ort-int8 fused.per_channel --threads "${THREADS:-1,2}" \
  --batch "${BATCH:-1}" --seq "${SEQ:-16,128,512}" --rounds "${ROUNDS:-3}" --iters "${ITERS:-20}" \
  --json "$results/compare_ort.json"
