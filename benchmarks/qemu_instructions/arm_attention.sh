#!/usr/bin/env bash
# Instructions per call of each ARM attention kernel (and the reference's), counted under
# qemu-user: one (sequence, head) of MiniLM's shape, head_dim 32, seq ENCRT_COUNT_SEQ (128), every
# key real, run by the hidden test "[.count]" of tests/kernels/test_arm_attention.cpp. qemu's
# timings mean nothing, but the number of guest instructions executed is exact and the same on any
# host; it is not time (an instruction's cost differs by kind and by core), so read it as work,
# not speed. Each kernel runs once and three times; the difference / 2 is one call, free of the
# test's setup. The C library's expf is guest code and is counted.
# usage: bash benchmarks/qemu_instructions/arm_attention.sh [BUILD_DIR (build-aarch64)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-aarch64}
tests="$build/bin/encrt_kernel_tests"
[[ -x $tests ]] || { echo "no $tests: run scripts/test_aarch64.sh first" >&2; exit 1; }
seq=${ENCRT_COUNT_SEQ:-128}
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
count() {  # kernel reps -> instructions of the whole process
  ENCRT_COUNT_SEQ=$seq ENCRT_COUNT_KERNEL=$1 ENCRT_COUNT_REPS=$2 \
    qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max -d in_asm,exec,nochain -D "$log/q.log" "$tests" "[.count]" >/dev/null
  python3 benchmarks/qemu_instructions/count_instructions.py "$log/q.log"
}
printf '%-28s %14s %16s\n' kernel "instr/call" "instr/(q,k) pair"
for k in ref::attention_f32 arm::f32_attention__neon ref::attention_i8 arm::qs8_attention__neon arm::qs8_attention__neondot \
    arm::qs8_attention__neoni8mm; do
  one=$(count "$k" 1)
  three=$(count "$k" 3)
  per=$(( (three - one) / 2 ))
  awk -v k="$k" -v per="$per" -v s="$seq" 'BEGIN { printf "%-28s %14d %16.1f\n", k, per, per / (s * s) }'
done
