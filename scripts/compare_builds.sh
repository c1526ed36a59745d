#!/usr/bin/env bash
# Whether two builds of the encrt CLI compute the same bits: runs both on the same models, ids
# and masks, at every ISA level this CPU supports and 1 and 2 threads, and compares the output
# files byte for byte (cmp). For refactors that must not change what is computed.
#   scripts/compare_builds.sh OLD/encrt NEW/encrt WORK_DIR MODEL.encrt... -- IDS.npy:MASK.npy...
# Extra arguments for the new build only (e.g. --backend cpu) go in NEW_ARGS.
set -euo pipefail
old=$1 new=$2 work=$3
shift 3
models=()
while [[ $# -gt 0 && $1 != -- ]]; do models+=("$1"); shift; done
shift
inputs=("$@")
mkdir -p "$work"
levels=()
for l in scalar avx2 avx2vnni avx512 avx512vnni avx512fp16 amx neon neondot neonfp16 neoni8mm; do
  if "$new" run "${models[0]}" --ids "${inputs[0]%%:*}" -o "$work/probe.npy" --isa "$l" ${NEW_ARGS:-} >/dev/null 2>&1; then
    levels+=("$l")
  fi
done
echo "levels: ${levels[*]}"
same=0 differ=0
for m in "${models[@]}"; do
  for io in "${inputs[@]}"; do
    ids=${io%%:*} mask=${io##*:}
    for l in "${levels[@]}"; do
      for t in 1 2; do
        for out in hidden pooled; do
          "$old" run "$m" --ids "$ids" --mask "$mask" --output "$out" --threads "$t" --isa "$l" -o "$work/old.npy"
          "$new" run "$m" --ids "$ids" --mask "$mask" --output "$out" --threads "$t" --isa "$l" ${NEW_ARGS:-} -o "$work/new.npy"
          if cmp -s "$work/old.npy" "$work/new.npy"; then
            same=$((same + 1))
          else
            differ=$((differ + 1))
            echo "DIFFER: $(basename "$m") $(basename "$ids") isa=$l threads=$t $out"
          fi
        done
      done
    done
  done
done
echo "identical: $same, different: $differ"
[[ $differ -eq 0 ]]
