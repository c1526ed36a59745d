#!/usr/bin/env bash
# Cross-compiles encrt for aarch64 Linux (toolchains/aarch64-linux-gnu.cmake) and runs its Catch2
# suites under qemu-user: the NEON kernels against the reference, the converter and the golden
# PyTorch fixtures must give the same answers on ARM, with and without the dot product extension. Skipped, with a message, when the cross compiler
# or qemu cannot be installed. With Debian's arm64 XNNPACK (scripts/arm64_xnnpack_sysroot.sh
# extracts it into build-aarch64/arm64-sysroot; without network the build goes on without it), the
# xnnpack backend is built too.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++-aarch64-linux-gnu qemu-user >/dev/null; } ||
    { echo "SKIPPED: aarch64 cross tests (g++-aarch64-linux-gnu / qemu-user not installable)"; exit 0; }
fi
sysroot=build-aarch64/arm64-sysroot
bash scripts/arm64_xnnpack_sysroot.sh "$sysroot"
extra_root=""
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
if [[ -f "$sysroot/.encrt-arm64-packages" ]]; then
  extra_root="$PWD/$sysroot"
  # libXNNPACK.so.0 needs libcpuinfo.so.0 and libpthreadpool.so.0 from there: the guest's loader
  # looks in its LD_LIBRARY_PATH (-E sets it for the guest only, not for qemu itself).
  qemu+=(-E "LD_LIBRARY_PATH=$extra_root/usr/lib/aarch64-linux-gnu")
fi
# -U: XNNPACK is looked for again on every configure (in the sysroot, or not at all without it).
cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake \
  -DENCRT_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Release -DENCRT_AARCH64_EXTRA_ROOT="$extra_root" \
  -U 'ENCRT_XNNPACK_*' -U 'ENCRT_PTHREADPOOL_*'
cmake --build build-aarch64 -j "$(nproc)"
# qemu's default CPU has every extension (the neoni8mm level); a Cortex-A53 has no dot product
# instructions, so there the best level is neon and the int8 GEMM falls back to the reference.
for suite in encrt_kernel_tests encrt_converter_tests encrt_runtime_tests; do
  echo "aarch64 (qemu): $suite"
  "${qemu[@]}" "build-aarch64/bin/$suite"
done
for suite in encrt_kernel_tests encrt_runtime_tests; do
  echo "aarch64 (qemu, Cortex-A53: no dot product): $suite"
  "${qemu[@]}" -cpu cortex-a53 "build-aarch64/bin/$suite"
done

