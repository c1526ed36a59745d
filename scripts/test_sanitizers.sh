#!/usr/bin/env bash
# Builds encrt with clang 14 (the compiler of the Android NDK and Apple's toolchains, so CI builds
# the library with clang as well as GCC) under AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan, and runs every Catch2 suite there: at the CPU's best kernel level and at
# ENCRT_ISA=scalar (the reference kernels), and replays the fuzz targets' seed corpora (fuzz/) at
# both, the CUDA kernels under host emulation (where the toolkit's headers are found), then the
# backend conformance suite at every level this CPU runs. Then a ThreadSanitizer build in build-tsan runs the thread suite (tests/threads:
# sessions on several threads at once, a session handed between threads, the CPU backend's
# thread pool). No recovery (-fno-sanitize-recover=all, halt_on_error): the first
# finding ends the run with an error. The Python end-to-end checks are left to the Release build
# (scripts/run_tests.sh); so are benchmarks, CUDA and XNNPACK, which the sanitizer builds leave out
# to stay small (XNNPACK's own code is not instrumented anyway).
#   bash scripts/test_sanitizers.sh [asan|tsan]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
export CC=${CC:-clang-14} CXX=${CXX:-clang++-14}
if ! command -v "$CXX" >/dev/null; then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 >/dev/null; } ||
    { echo "FAILED: $CXX is not installed and could not be installed (apt-get install clang-14)"; exit 1; }
fi
jobs=$(nproc)
# -O1 with line tables: reports name the line, and instrumented code compiles fast enough.
common=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1"
  -DENCRT_BUILD_BENCHMARKS=OFF -DENCRT_WITH_CUDA=OFF -DENCRT_WITH_XNNPACK=OFF
  -DENCRT_PYTHON=/nonexistent)
suites=(encrt_kernel_tests encrt_runtime_tests encrt_converter_tests encrt_heatmap_tests encrt_thread_tests)
# The fuzz targets' replay executables (fuzz/): their committed seed corpora, replayed in seconds.
fuzz_targets=(model tokenizer converter npy)
fuzz_replays=("${fuzz_targets[@]/#/encrt_fuzz_replay_}")

if [[ $which == all || $which == asan ]]; then
  start=$SECONDS
  cmake -S . -B build-asan "${common[@]}" -DENCRT_SANITIZE=ON >/dev/null
  # The CUDA kernels' source under host emulation (tests/cuda_emulation, built where the CUDA
  # toolkit's headers are found, the backend itself left out): out-of-bounds reads and writes of
  # the kernels' buffers and shared memory, and undefined behaviour in their index arithmetic.
  # (The target list is read whole first: grep -q would stop reading early, and under pipefail
  # cmake's broken pipe would then count as no match.)
  emulation=()
  targets=$(cmake --build build-asan --target help 2>/dev/null || true)
  if grep -q encrt_cuda_emulation_tests <<<"$targets"; then
    emulation=(encrt_cuda_emulation_tests)
  fi
  cmake --build build-asan -j "$jobs" --target "${suites[@]}" encrt_conformance encrt_cli "${fuzz_replays[@]}" "${emulation[@]}"
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # The suites and corpus replays run side by side, one per core (each is one process); each
  # one's output goes to build-asan/logs/<label>.log and is printed in full if it fails.
  rm -rf build-asan/logs build-asan/tmp
  mkdir -p build-asan/logs
  run_job() {  # label, isa, then the command
    local label=$1 isa=$2
    shift 2
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
    # Each job converts its fixtures into a scratch folder of its own.
    ( set +e; t0=$SECONDS
      export ENCRT_TEST_TMP_DIR="$PWD/build-asan/tmp/$label"
      mkdir -p "$ENCRT_TEST_TMP_DIR"
      if [[ $isa == scalar ]]; then ENCRT_ISA=scalar "$@"; else "$@"; fi >"build-asan/logs/$label.log" 2>&1
      echo "$? $((SECONDS - t0))" >"build-asan/logs/$label.status" ) &
  }
  labels=()
  if [[ ${#emulation[@]} -gt 0 ]]; then
    # The longest work (about 8.5 minutes on one core), started first in two halves of about the
    # same length that run side by side: the attention kernels' cases, and all the others.
    labels+=(cuda_emulation.others cuda_emulation.attention)
    run_job cuda_emulation.others best build-asan/bin/encrt_cuda_emulation_tests '~attention*' '~[.]'
    run_job cuda_emulation.attention best build-asan/bin/encrt_cuda_emulation_tests 'attention*'
  fi
  for suite in "${suites[@]}"; do
    for isa in best scalar; do
      # ENCRT_ISA picks the kernels of sessions (the default kernel table); the kernel suite calls
      # every kernel this CPU runs directly, the same ones at either setting, so at scalar it runs
      # its dispatch cases only (which check the default table against ENCRT_ISA).
      if [[ $suite == encrt_kernel_tests && $isa == scalar ]]; then
        labels+=("$suite.$isa")
        run_job "$suite.$isa" "$isa" "build-asan/bin/$suite" '[dispatch]'
      elif [[ $suite == encrt_kernel_tests ]]; then
        # The longest job, in two halves that run side by side: the reference kernels' own
        # cases, and the others (the SIMD kernels against the reference, dispatch).
        labels+=("$suite.$isa.ref" "$suite.$isa.others")
        run_job "$suite.$isa.ref" "$isa" "build-asan/bin/$suite" '[ref]'
        run_job "$suite.$isa.others" "$isa" "build-asan/bin/$suite" '~[ref]'
      else
        labels+=("$suite.$isa")
        run_job "$suite.$isa" "$isa" "build-asan/bin/$suite"
      fi
    done
  done
  for t in "${fuzz_targets[@]}"; do
    for isa in best scalar; do
      labels+=("fuzz_corpus_$t.$isa")
      run_job "fuzz_corpus_$t.$isa" "$isa" "build-asan/bin/encrt_fuzz_replay_$t" "fuzz/corpus/$t"
    done
  done
  wait
  failed=0
  for label in "${labels[@]}"; do
    status=99 seconds=?
    [[ -f "build-asan/logs/$label.status" ]] && read -r status seconds <"build-asan/logs/$label.status"
    if [[ $status -eq 0 ]]; then
      echo "asan+ubsan: PASS $label ($seconds s): $(tail -n 2 "build-asan/logs/$label.log" | tr -s '\n' ' ')"
    else
      echo "asan+ubsan: FAIL $label (exit $status, $seconds s); its output:"
      cat "build-asan/logs/$label.log"
      failed=1
    fi
  done
  if [[ $failed -ne 0 ]]; then echo "asan+ubsan: FAILED"; exit 1; fi
  # The conformance suite holds every backend and level to the scalar reference; entries this
  # CPU cannot run are skipped (exit 4), as in the Release build.
  ctest --test-dir build-asan -R '^conformance:' -j "$jobs" --output-on-failure
  echo "asan+ubsan: $((SECONDS - start)) s"
fi

if [[ $which == all || $which == tsan ]]; then
  start=$SECONDS
  cmake -S . -B build-tsan "${common[@]}" -DENCRT_SANITIZE_THREAD=ON >/dev/null
  cmake --build build-tsan -j "$jobs" --target encrt_thread_tests
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  for isa in best scalar; do
    echo "tsan ($isa kernels): encrt_thread_tests"
    if [[ $isa == scalar ]]; then ENCRT_ISA=scalar build-tsan/bin/encrt_thread_tests; else build-tsan/bin/encrt_thread_tests; fi
  done
  echo "tsan: $((SECONDS - start)) s"
fi
