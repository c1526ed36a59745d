#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang 14 under ASan + UBSan in build-fuzz and fuzzes
# each target in turn for the given time, one at a time. New inputs go to a work corpus outside
# the repository ($ENCRT_FUZZ_WORK, default /tmp/encrt-fuzz: corpus/<target>/, seeded from
# fuzz/corpus/<target>/), crashes to $ENCRT_FUZZ_WORK/artifacts/<target>/. Prints, per target, the
# executions, exec/s, the coverage reached and units added, and the crashes found.
#   bash scripts/fuzz.sh [seconds-per-target] [target...]   (default: 60 s; model tokenizer converter npy)
# Reproduce a finding with the replay executable of the normal build (no libFuzzer needed):
#   build/bin/encrt_fuzz_replay_<target> $ENCRT_FUZZ_WORK/artifacts/<target>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then targets=(model tokenizer converter npy); fi
work=${ENCRT_FUZZ_WORK:-/tmp/encrt-fuzz}
export CC=${CC:-clang-14} CXX=${CXX:-clang++-14}
if ! command -v "$CXX" >/dev/null; then
  echo "FAILED: $CXX is not installed (apt-get install clang-14 libclang-rt-14-dev)"; exit 1
fi
# -O1 with line tables, as the sanitizer build: reports name the line.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1" \
  -DENCRT_FUZZ=ON -DENCRT_BUILD_TESTS=OFF -DENCRT_BUILD_BENCHMARKS=OFF -DENCRT_WITH_CUDA=OFF -DENCRT_WITH_XNNPACK=OFF \
  -DENCRT_PYTHON=/nonexistent >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/encrt_fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t"
  log="$work/$t.log"
  echo "fuzzing $t for $seconds s (log: $log)"
  status=0
  # -rss_limit_mb and -timeout: an input that needs more memory or time is a finding too.
  "build-fuzz/bin/encrt_fuzz_$t" "$work/corpus/$t" "fuzz/corpus/$t" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" >"$log" 2>&1 ||
    status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(find "$work/artifacts/$t" -type f | wc -l)
  summary+=("$(printf '%-10s executions %-10s exec/s %-6s coverage %-6s new units %-6s crashes %s (exit %s)' \
    "$t" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${added:-?}" "$crashes" "$status")")
done
echo
echo "fuzzing summary ($seconds s per target; work corpus $work):"
printf '  %s\n' "${summary[@]}"
