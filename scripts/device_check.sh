#!/usr/bin/env bash
# The CUDA backend's checks, for a machine with an NVIDIA GPU, in one run of a few minutes, ending
# with one summary. It uses a bundle made on the build machine (scripts/bundle_cuda.sh), since the
# GPU machine may have no compiler and no network:
#   bash scripts/device_check.sh [BUNDLE_DIR]      (default build-gpu-bundle)
# 1. the device and `encrt inspect --backend cuda`;
# 2. the conformance suite on the GPU (every op kind, every fixture, MiniLM fp16 against the CPU
#    reference);
# 3. MiniLM fp16 sentence embeddings on the GPU against PyTorch fp32 (bar: cosine mean and min
#    >= 0.9999);
# 3b. the same with the weights=mapped option (tables read in place from the registered file);
# 4. `encrt bench --backend cuda` at batch 1 and 32, seq 128, with and without CUDA graphs (GPU
#    time from CUDA events) against PyTorch fp16 eager and with CUDA graphs on the same GPU.
# cuBLASLt is taken from ENCRT_CUBLASLT, else the machine's CUDA toolkit, else PyTorch's wheels.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-build-gpu-bundle}
encrt=$bundle/bin/encrt
model=$bundle/minilm/minilm.fp16.encrt
summary=()
note() { summary+=("$1"); echo "== $1"; }
[[ -x $encrt && -f $model ]] || { echo "device_check: no bundle in $bundle (scripts/bundle_cuda.sh)"; exit 2; }
echo "bundle of commit $(cat "$bundle/commit" 2>/dev/null), checked on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

if [[ -z ${ENCRT_CUBLASLT:-} ]]; then
  for candidate in /usr/local/cuda/lib64/libcublasLt.so.13 /usr/local/cuda/lib64/libcublasLt.so.12; do
    [[ -f $candidate ]] && export ENCRT_CUBLASLT=$candidate && break
  done
fi
if [[ -z ${ENCRT_CUBLASLT:-} ]]; then
  ENCRT_CUBLASLT=$(python3 - <<'PY' 2>/dev/null
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

export ENCRT_FIXTURES_DIR=$PWD/tests/fixtures
export ENCRT_TEST_TMP_DIR=$(mktemp -d)
export ENCRT_CONFORMANCE_MODEL=$model
"$encrt" inspect "$model" --backend cuda --seq 128 | sed -n '/^backends of/,/^host arena/p'

start=$SECONDS
timeout 180 "$bundle/bin/encrt_conformance" --backend cuda >"$ENCRT_TEST_TMP_DIR/conformance.log" 2>&1
status=$?
if [[ $status -eq 0 ]]; then
  note "conformance --backend cuda: $(tail -2 "$ENCRT_TEST_TMP_DIR/conformance.log" | head -1) ($((SECONDS - start)) s)"
elif [[ $status -eq 4 ]]; then
  note "conformance --backend cuda: $(grep SKIPPED "$ENCRT_TEST_TMP_DIR/conformance.log")"
else
  grep -B4 -A12 "FAILED" "$ENCRT_TEST_TMP_DIR/conformance.log" | head -150
  note "conformance --backend cuda: FAILED ($(tail -3 "$ENCRT_TEST_TMP_DIR/conformance.log" | tr '\n' ' '))"
fi

if out=$(timeout 120 python3 tests/e2e/minilm_check.py --prebuilt "$bundle/minilm" --dtypes fp16 --encrt "$encrt" \
           --backend cuda 2>&1); then
  note "MiniLM fp16 on cuda vs PyTorch fp32: $(echo "$out" | grep cosine)"
else
  echo "$out" | tail -20
  note "MiniLM fp16 on cuda vs PyTorch fp32: FAILED ($(echo "$out" | tail -1))"
fi

# weights=mapped (for GPUs sharing the host's memory, Jetson): the embedding tables and LayerNorm
# parameters are read in place from the registered model file; on a discrete GPU this reads them
# over the bus, so only its results are checked here, not its speed.
"$encrt" inspect "$model" --backend cuda --backend-options weights=mapped --seq 128 | sed -n "/^backends (weights/,/^host arena/p"
if out=$(timeout 120 python3 tests/e2e/minilm_check.py --prebuilt "$bundle/minilm" --dtypes fp16 --encrt "$encrt" \
           --backend cuda --backend-options weights=mapped 2>&1); then
  note "MiniLM fp16 on cuda, weights=mapped, vs PyTorch fp32: $(echo "$out" | grep cosine)"
else
  echo "$out" | tail -20
  note "MiniLM fp16 on cuda, weights=mapped: FAILED ($(echo "$out" | tail -1))"
fi

for shape in 1x128 32x128; do
  batch=${shape%x*} seq=${shape#*x}
  for graphs in on off; do
    flag=(); [[ $graphs == off ]] && flag=(--no-graphs)
    json=$(timeout 120 "$encrt" bench "$model" --backend cuda "${flag[@]}" --batch "$batch" --seq "$seq" --iters 200 \
             --warmup 20 --json 2>&1 | tail -1)
    line=$(python3 -c "
import json, sys
d = json.loads(sys.argv[1]); g = d.get('device_ms', {})
print('GPU ms min %.4f median %.4f, wall ms median %.4f' % (g.get('min', -1), g.get('median', -1), d['latency_ms']['median']))
" "$json" 2>/dev/null || echo "failed: $json")
    note "encrt cuda fp16 graphs=$graphs batch $batch seq $seq: $line"
  done
done
if tout=$(timeout 180 python3 benchmarks/torch_gpu_bench.py --shapes 1x128,32x128 2>&1); then
  while read -r l; do note "$l"; done < <(echo "$tout" | grep "^torch fp16")
else
  note "torch_gpu_bench: $(echo "$tout" | tail -1)"
fi
echo
echo "==== summary (device_check, $((SECONDS)) s)"
printf '%s\n' "${summary[@]}"
