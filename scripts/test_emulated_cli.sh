#!/usr/bin/env bash
# The encrt CLI on the emulated GPU (BUILD/bin/encrt_emulated_gpu: the CLI linked with the cuda
# backend's host code, its launchers and the emulated CUDA runtime, tests/CMakeLists.txt): the
# commands scripts/device_check.sh runs on a GPU, each read back the way the device check reads it,
# so that a broken command, option or output format is found here and not during a device call:
#   - convert (fp16 and int8), then inspect --backend cuda under the options the check inspects;
#   - bench --json: the GPU time (device_ms, from CUDA events) and the wall time, with graphs and
#     with graphs=off;
#   - bench --profile: the per-op GPU times;
#   - tune --json: the options taken, the times and every trial's outcome;
#   - run --backend cuda (what tests/e2e/minilm_check.py calls for the accuracy step): the hidden
#     states and pooled outputs against run --backend cpu of the same file.
# MODEL_DIR (default: the bert_plain fixture) is converted here; SHAPE the batch and sequence of
# the benches (default "2 8": the emulated GPU runs every thread of every kernel on the host).
#   bash scripts/test_emulated_cli.sh [BUILD_DIR]      (ctest: cli:emulated_gpu; BUILD_DIR: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -d $build ]] && build=$(cd "$build" && pwd)
cli=$build/bin/encrt_emulated_gpu
python=${PYTHON:-/usr/bin/python3}  # with numpy (Debian's python3-numpy, or the venv of scripts/setup_debian.sh)
model_dir=${MODEL_DIR:-tests/fixtures/bert_plain}
read -r batch seq <<<"${SHAPE:-2 8}"
if [[ ! -x $cli ]]; then
  echo "test_emulated_cli: $cli was not built (it needs the CUDA toolkit's headers)"
  exit 4
fi
export ENCRT_CUBLASLT=${ENCRT_CUBLASLT:-$build/lib/libencrt_fake_cublaslt.so}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "test_emulated_cli: FAIL $*"
  failures=$((failures + 1))
}
pass() { echo "test_emulated_cli: ok   $*"; }

for dtype in fp16 int8; do
  "$cli" convert "$model_dir" -o "$work/model.$dtype.encrt" --dtype "$dtype" --pooling mean --quiet ||
    { echo "test_emulated_cli: FAIL convert $dtype"; exit 1; }
done

# inspect: every encoder op on cuda, the summary naming the emulated device and the options.
inspect() {  # dtype options
  local dtype=$1 options=$2 out extra=()
  [[ -n $options ]] && extra=(--backend-options "$options")
  if ! out=$("$cli" inspect "$work/model.$dtype.encrt" --backend cuda --batch "$batch" --seq "$seq" "${extra[@]}" \
               2>"$work/inspect.err"); then
    fail "inspect $dtype ${options:-defaults}: $(tail -2 "$work/inspect.err" | tr '\n' ' ')"
    return
  fi
  local on_cuda on_other
  local placement
  placement=$(sed -n '/^placement (op, kind, backend, implementation):/,/^backends (weights/p' <<<"$out")
  on_cuda=$(grep -cE "^  layers\.[0-9]+\.[a-z_.]+ +[a-z_]+ +cuda " <<<"$placement" || true)
  on_other=$(grep -E "^  layers\.[0-9]+\." <<<"$placement" | grep -cvE " cuda " || true)
  if [[ $on_cuda -eq 0 || $on_other -ne 0 ]] || ! grep -q "emulated GPU (sm_90" <<<"$out"; then
    fail "inspect $dtype ${options:-defaults}: $on_cuda layer ops on cuda, $on_other elsewhere"
    echo "$out"
    return
  fi
  pass "inspect $dtype ${options:-defaults}: $on_cuda layer ops on cuda"
}
inspect fp16 ""
inspect fp16 "fp16_gemm=auto"
inspect fp16 "fp16_gemm=auto,linear_norm=layer"
inspect fp16 "fp16_gemm=mma,linear_norm=ffn,qkv_attention=fused"
inspect fp16 "graphs=off,pdl=off"
inspect int8 ""
inspect int8 "int8_linears=int8"
inspect int8 "int8_linears=int8,int8_gemm=cublaslt"

# bench --json, read as device_check.sh's bench() reads it: the GPU time from CUDA events.
bench() {  # dtype options
  local dtype=$1 options=$2 json extra=()
  [[ -n $options ]] && extra=(--backend-options "$options")
  json=$("$cli" bench "$work/model.$dtype.encrt" --backend cuda --batch "$batch" --seq "$seq" --iters 3 --warmup 1 \
           --json "${extra[@]}" 2>/dev/null | tail -1) || true
  local line
  if line=$("$python" - "$json" <<'PY' 2>&1
import json, sys
d = json.loads(sys.argv[1]); g = d["device_ms"]
assert d["backend"] == "cuda", d["backend"]
assert 0 < g["min"] <= g["median"] <= g["max"], g
assert d["latency_ms"]["median"] > 0
print("GPU ms min %.4f median %.4f, wall ms median %.4f" % (g["min"], g["median"], d["latency_ms"]["median"]))
PY
  ); then
    pass "bench $dtype ${options:-defaults}: $line"
  else
    fail "bench $dtype ${options:-defaults}: $line; output: ${json:0:300}"
  fi
}
bench fp16 ""
bench fp16 "graphs=off"
bench fp16 "fp16_gemm=mma,linear_norm=layer"
bench int8 ""
bench int8 "int8_linears=int8"

# bench --profile: a GPU time per op kind, at least two of them linear, attention or LayerNorm kinds.
profile() {  # dtype options
  local dtype=$1 options=$2 out extra=()
  [[ -n $options ]] && extra=(--backend-options "$options")
  if ! out=$("$cli" bench "$work/model.$dtype.encrt" --backend cuda --batch "$batch" --seq "$seq" --iters 2 --warmup 1 \
               --profile "${extra[@]}" 2>&1); then
    fail "bench --profile $dtype ${options:-defaults}: $(tail -2 <<<"$out" | tr '\n' ' ')"
    return
  fi
  local rows
  rows=$(sed -n '/^profile (ms per run, by op):/,$p' <<<"$out" | grep -cE "^  \[(linear|attention|layer_norm)[^]]*\] +[0-9.]+ +[0-9.]+%" || true)
  if [[ $rows -lt 2 ]]; then
    fail "bench --profile $dtype ${options:-defaults}: $rows op kinds with a GPU time"
    echo "$out"
    return
  fi
  pass "bench --profile $dtype ${options:-defaults}: $rows op kinds timed"
}
profile fp16 ""
profile int8 "int8_linears=int8"

# tune --json, read as device_check.sh's tune() reads it.
tune_json=$("$cli" tune "$work/model.fp16.encrt" --backend cuda --batch "$batch" --seq "$seq" --iters 2 --rounds 1 \
              --min-cosine 0.999 --max-seconds 120 --json 2>/dev/null | tail -1) || true
if line=$("$python" - "$tune_json" <<'PY' 2>&1
import json, sys
d = json.loads(sys.argv[1])
assert d["trials"], "no trials"
outcomes = {}
for t in d["trials"]:
    outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
    assert t["outcome"] in ("taken", "not faster", "refused", "failed", "differs"), t
    if t["outcome"] in ("taken", "not faster"):
        assert t["ms"] > 0 and t["best_ms"] > 0 and t["min_cosine"] >= 0.999, t
assert "failed" not in outcomes and "differs" not in outcomes, [t for t in d["trials"] if t["outcome"] in ("failed", "differs")]
print("options %r, %.3f ms against the defaults' %.3f ms; trials %s" % (d["options"], d["tuned_ms"], d["default_ms"],
      ", ".join("%d %s" % (n, o) for o, n in sorted(outcomes.items()))))
PY
); then
  pass "tune fp16: $line"
else
  fail "tune fp16: $line; output: ${tune_json:0:300}"
fi

# run on cuda against run on the CPU, the outputs minilm_check.py reads: the model folder's ids.npy
# and mask.npy where it has them (the fixtures), else made here (SHAPE, the last sequence half padding).
ids=$model_dir/ids.npy mask=$model_dir/mask.npy
if [[ ! -f $ids || ! -f $mask ]]; then
  ids=$work/ids.npy mask=$work/mask.npy
  "$python" - "$ids" "$mask" "$batch" "$seq" <<'PY'
import sys
import numpy as np
batch, seq = int(sys.argv[3]), int(sys.argv[4])
ids = np.random.default_rng(7).integers(1000, 2000, size=(batch, seq)).astype(np.int32)
mask = np.ones((batch, seq), np.int32)
mask[-1, max(1, seq // 2):] = 0
ids[:, 0], ids[mask == 0] = 101, 0
np.save(sys.argv[1], ids)
np.save(sys.argv[2], mask)
PY
fi
for dtype in fp16 int8; do
  for output in hidden pooled; do
    for backend in cuda cpu; do
      "$cli" run "$work/model.$dtype.encrt" --ids "$ids" --mask "$mask" --output "$output" \
        --backend "$backend" -o "$work/$output.$dtype.$backend.npy" >/dev/null 2>&1 ||
        fail "run $dtype --output $output --backend $backend"
    done
    if line=$("$python" - "$work/$output.$dtype.cuda.npy" "$work/$output.$dtype.cpu.npy" "$mask" <<'PY' 2>&1
import sys
import numpy as np
a, b = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
assert a.shape == b.shape, (a.shape, b.shape)
if a.ndim == 3:  # hidden states: the real tokens (a padded position's row is not an output)
    real = np.load(sys.argv[3]).reshape(-1) != 0
    a, b = a.reshape(-1, a.shape[-1])[real], b.reshape(-1, b.shape[-1])[real]
assert np.isfinite(a).all(), "non-finite outputs"
a2, b2 = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
cos = (a2 * b2).sum(1) / (np.linalg.norm(a2, axis=1) * np.linalg.norm(b2, axis=1))
assert cos.min() >= 0.999, "worst row cosine %.6f" % cos.min()
print("shape %s, worst row cosine %.6f" % (a.shape, cos.min()))
PY
    ); then
      pass "run $dtype --output $output, cuda against cpu: $line"
    else
      fail "run $dtype --output $output, cuda against cpu: $line"
    fi
  done
done

if [[ $failures -ne 0 ]]; then
  echo "test_emulated_cli: $failures FAILED"
  exit 1
fi
echo "test_emulated_cli: all passed"
