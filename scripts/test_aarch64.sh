#!/usr/bin/env bash
# Cross-compiles encrt for aarch64 Linux (toolchains/aarch64-linux-gnu.cmake) and runs its Catch2
# suites under qemu-user: the NEON kernels against the reference, the converter and the golden
# PyTorch fixtures must give the same answers on ARM, with and without the dot product extension. Skipped, with a message, when the cross compiler
# or qemu cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++-aarch64-linux-gnu qemu-user >/dev/null; } ||
    { echo "SKIPPED: aarch64 cross tests (g++-aarch64-linux-gnu / qemu-user not installable)"; exit 0; }
fi
cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake \
  -DENCRT_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Release
cmake --build build-aarch64 -j "$(nproc)"
# qemu's default CPU has every extension (the neoni8mm level); a Cortex-A53 has no dot product
# instructions, so there the best level is neon and the int8 GEMM falls back to the reference.
for suite in encrt_kernel_tests encrt_converter_tests encrt_runtime_tests; do
  echo "aarch64 (qemu): $suite"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "build-aarch64/bin/$suite"
done
for suite in encrt_kernel_tests encrt_runtime_tests; do
  echo "aarch64 (qemu, Cortex-A53: no dot product): $suite"
  qemu-aarch64 -cpu cortex-a53 -L /usr/aarch64-linux-gnu "build-aarch64/bin/$suite"
done
