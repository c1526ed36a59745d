#!/usr/bin/env bash
# Exercises toolchains/jetson.cmake here, where no JetPack cross toolkit exists: its CPU part is
# cross-built (build-jetson) and the kernel and runtime suites run under qemu-user with a
# Neoverse-N1 CPU model, an armv8.2-a core with the dot product and fp16 arithmetic and no i8mm,
# the feature set of Orin's Cortex-A78AE cores (qemu 7.2 has no A78AE model). Then the toolchain
# is pointed at this machine's CUDA toolkit, which has no aarch64 target libraries, and must refuse
# it with a message that says so. Skipped, with a message, when the cross compiler or qemu cannot
# be installed (scripts/test_aarch64.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  echo "SKIPPED: Jetson CPU tests (g++-aarch64-linux-gnu / qemu-user missing)"
  exit 0
fi
start=$SECONDS
cmake -S . -B build-jetson -DCMAKE_TOOLCHAIN_FILE=toolchains/jetson.cmake -DCMAKE_BUILD_TYPE=Release \
  -DENCRT_BUILD_BENCHMARKS=OFF -DENCRT_WITH_XNNPACK=OFF >/dev/null
grep -q '^ENCRT_WITH_CUDA:STRING=OFF' build-jetson/CMakeCache.txt ||
  { echo "FAILED: toolchains/jetson.cmake without ENCRT_JETSON_CUDA should build the CPU part only"; exit 1; }
cmake --build build-jetson -j "$(nproc)" --target encrt_kernel_tests encrt_runtime_tests
# The reference kernels' own tests ([ref]) and the runtime's other cases are the same on every ARM
# CPU and already run in scripts/test_aarch64.sh; here the SIMD kernels and dispatch at this CPU's
# level, and the golden PyTorch fixtures and heads end to end (fp32, fp16, int8) on its kernels.
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu neoverse-n1)
echo "jetson CPU part (qemu, Neoverse-N1: armv8.2-a, dot product, fp16): encrt_kernel_tests ~[ref]"
"${qemu[@]}" build-jetson/bin/encrt_kernel_tests '~[ref]'
echo "jetson CPU part (qemu, Neoverse-N1): encrt_runtime_tests [golden],[heads]"
"${qemu[@]}" build-jetson/bin/encrt_runtime_tests '[golden],[heads]'
# This machine's toolkit is for x86-64 only: the toolchain must say so, not build a broken backend.
if [[ -d /usr/local/cuda/bin ]]; then
  log=$(mktemp)
  if cmake -S . -B build-jetson-cuda -DCMAKE_TOOLCHAIN_FILE=toolchains/jetson.cmake \
       -DENCRT_JETSON_CUDA=/usr/local/cuda >"$log" 2>&1; then
    if [[ -d /usr/local/cuda/targets/aarch64-linux/lib ]]; then
      echo "jetson: /usr/local/cuda has aarch64 target libraries: the CUDA part configured"
    else
      echo "FAILED: toolchains/jetson.cmake accepted a CUDA toolkit without aarch64 target libraries"; cat "$log"; exit 1
    fi
  elif grep -q "has no targets/aarch64-linux/lib" "$log"; then
    echo "jetson: this machine's CUDA toolkit ($(/usr/local/cuda/bin/nvcc --version | tail -1)) has no aarch64 target" \
         "libraries; the toolchain refuses it as it should (the CUDA part needs JetPack's cross toolkit)"
  else
    echo "FAILED: configuring with ENCRT_JETSON_CUDA=/usr/local/cuda failed for another reason:"; cat "$log"; exit 1
  fi
  rm -rf build-jetson-cuda "$log"
fi
echo "jetson CPU part: $((SECONDS - start)) s"
