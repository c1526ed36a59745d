#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds encrt (Release, -Werror) and runs every test:
# Catch2 suites (kernels against the reference, converter, runtime, golden PyTorch fixtures,
# bad input, exported symbols), the end-to-end all-MiniLM-L6-v2 accuracy check against PyTorch,
# the Python package (pip install . and pytest), an app built against the installed library, the
# aarch64 (through the Jetson toolchain, also at Orin's kernel level) and armv7 suites under qemu,
# and the suites again under the sanitizers (clang 14: ASan + UBSan, TSan).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step prints how long it took, so that CI's 45-minute budget can be kept step by step.
step() {
  local t0=$SECONDS
  "$@"
  echo "run_tests: $* took $((SECONDS - t0)) s (total $SECONDS s)"
}
step bash scripts/setup_debian.sh
step cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DENCRT_PYTHON="$PWD/.venv/bin/python"
step cmake --build build -j "$(nproc)"
step ctest --test-dir build --output-on-failure -j "$(nproc)"
# The Python package: `pip install .` into a fresh venv, then its pytest suite (python/tests/).
step bash scripts/test_python.sh build
# Install into a fresh prefix and link an app against it (CMake package, pkg-config; shared and
# static), reusing build/.
step bash scripts/test_install.sh build
# The same suites cross-compiled for aarch64 (toolchains/jetson.cmake's CPU part) and run under
# qemu-user, at three CPUs' kernel levels (every extension, Cortex-A53, Orin's).
step bash scripts/test_aarch64.sh
# And for 32-bit ARM (armv7 + NEON, hard-float) under qemu-arm.
step bash scripts/test_armv7.sh
# Every Catch2 suite once more built with clang 14 under AddressSanitizer + UndefinedBehaviorSanitizer
# (best and scalar kernels, the conformance suite), and the thread tests under ThreadSanitizer.
step bash scripts/test_sanitizers.sh
