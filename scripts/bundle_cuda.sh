#!/usr/bin/env bash
# Prepares what scripts/device_check.sh needs on a GPU machine that cannot build or download:
# build-gpu-bundle/ (ignored by git, carried by the device tool) with the encrt CLI and the
# conformance suite built here with the CUDA backend, and MiniLM fp16 converted here with its
# reference embeddings from PyTorch (tests/e2e/minilm_check.py --save). The scripts and the
# fixtures come with the working tree. Keeps the bundle under 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-build-gpu-bundle}
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DENCRT_WITH_CUDA=ON -DENCRT_PYTHON="$PWD/.venv/bin/python" >/dev/null
cmake --build "$build" -j "$(nproc)" --target encrt_cli encrt_conformance
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/minilm"
for b in encrt encrt_conformance; do
  strip -o "$bundle/bin/$b" "$build/bin/$b"
done
HF_HUB_OFFLINE=1 .venv/bin/python tests/e2e/minilm_check.py --encrt "$build/bin/encrt" --dtypes fp16 \
  --save "$bundle/minilm"
rm -f "$bundle"/minilm/pooled.*.npy
git rev-parse HEAD >"$bundle/commit"
du -sh "$bundle"
size=$(du -sb "$bundle" | cut -f1)
if ((size > 64 * 1024 * 1024)); then
  echo "bundle_cuda: $bundle is $size bytes, over the device tool's 64 MiB" >&2
  exit 1
fi
