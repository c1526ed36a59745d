#!/usr/bin/env bash
# Instructions per run of a whole model on the ARM kernels, counted under qemu-user: `encrt bench`
# of the aarch64 build with 2 runs and with 1 (no warm-up), the difference being one Session::run
# (the model's load, the session's creation and the process around them cancel out). Instructions,
# not time (see arm_attention.sh); per kernel symbol with --by-symbol N; with --by-block SYMBOL N,
# the N costliest translated blocks of the symbols whose name contains SYMBOL, with their code.
# usage: bash benchmarks/qemu_instructions/model_run.sh MODEL [--isa LEVEL] [--seq S] [--batch B]
#          [--encrt AARCH64_ENCRT (build-aarch64/bin/encrt)] [--by-symbol N] [--by-block SYMBOL N]
set -euo pipefail
cd "$(dirname "$0")/../.."
model=${1:?usage: model_run.sh MODEL [--isa LEVEL] [--seq S] [--batch B] [--encrt PATH] [--by-symbol N] [--by-block SYMBOL N]}
shift
isa="" seq=128 batch=1 encrt=build-aarch64/bin/encrt top=0 block_symbol="" block_top=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --isa) isa=$2; shift 2 ;;
    --seq) seq=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --encrt) encrt=$2; shift 2 ;;
    --by-symbol) top=$2; shift 2 ;;
    --by-block) block_symbol=$2; block_top=$3; shift 3 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x $encrt ]] || { echo "no $encrt: run scripts/test_aarch64.sh first" >&2; exit 1; }
lib="$PWD/build-aarch64/arm64-sysroot/usr/lib/aarch64-linux-gnu"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
count() {  # runs -> the log of a bench with that many runs
  qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$lib" -cpu max -d in_asm,exec,nochain -D "$log/q$1.log" \
    "$encrt" bench "$model" --batch "$batch" --seq "$seq" --threads 1 --iters "$1" --warmup 0 ${isa:+--isa "$isa"} >/dev/null
}
count 1
count 2
python3 - "$log/q1.log" "$log/q2.log" "$top" "$block_symbol" "$block_top" <<'PY'
import sys
sys.path.insert(0, "benchmarks/qemu_instructions")
from count_instructions import count, count_blocks, print_blocks
one, two, top = count(sys.argv[1]), count(sys.argv[2]), int(sys.argv[3])
print(f"instructions per run: {sum(two.values()) - sum(one.values())}")
diff = {s: two[s] - one.get(s, 0) for s in two}
for s, n in sorted(diff.items(), key=lambda kv: -kv[1])[:top]:
    print(f"{n:12d}  {s[:110]}")
if sys.argv[4]:
    # Per block, the second run's count minus the first's (a block's pc is the same in both).
    b1, b2 = count_blocks(sys.argv[1], sys.argv[4]), count_blocks(sys.argv[2], sys.argv[4])
    print_blocks({pc: (n - b1.get(pc, (0,))[0], size, lines) for pc, (n, size, lines) in b2.items()}, int(sys.argv[5]))
PY
