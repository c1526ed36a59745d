#!/usr/bin/env bash
# Whether the CUDA backend's host code compiles against CUDA 12.x (JetPack 6 ships 12.6) as well
# as the toolkit installed here (13.0): fetches the CUDA 12.6 runtime and cuBLAS headers from
# NVIDIA's PyPI wheels into build-cu12/ (about 400 MB of downloads; not part of CI) and compiles
# every runtime/src/backends/cuda/*.cpp with them (-fsyntax-only). The .cu kernels need a CUDA 12
# nvcc, which no wheel carries: they are compiled with the installed toolkit only.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-cu12
py=${PYTHON:-.venv/bin/python}
mkdir -p "$dir"
if [[ ! -f $dir/x/nvidia/cublas/include/cublasLt.h ]]; then
  "$py" -m pip download --no-deps -q -d "$dir" "nvidia-cuda-runtime-cu12==12.6.*" "nvidia-cublas-cu12==12.6.*"
  for w in "$dir"/nvidia_cuda_runtime_cu12-*.whl; do unzip -q -o "$w" -d "$dir/x"; done
  for w in "$dir"/nvidia_cublas_cu12-*.whl; do unzip -q -o "$w" 'nvidia/cublas/include/*' -d "$dir/x"; done
fi
[[ -f build/schema/generated/encrt_generated.h ]] || cmake --build build --target encrt_schema_gen
for f in runtime/src/backends/cuda/*.cpp; do
  g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -isystem "$dir/x/nvidia/cuda_runtime/include" \
    -isystem "$dir/x/nvidia/cublas/include" -Iruntime/include -Iruntime/src -Ibuild/schema/generated \
    -DENCRT_WITH_CUDA=1 -DFLATBUFFERS_MAX_ALIGNMENT=64 -DENCRT_CUDA_ARCHITECTURES="\"87;90\"" "$f"
  echo "compiles with the CUDA 12.6 headers: $f"
done
