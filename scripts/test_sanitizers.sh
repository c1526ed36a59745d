#!/usr/bin/env bash
# Builds encrt with clang 14 (the compiler of the Android NDK and Apple's toolchains, so CI builds
# the library with clang as well as GCC) under AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan, and runs every Catch2 suite there: at the CPU's best kernel level and at
# ENCRT_ISA=scalar (the reference kernels), and replays the fuzz targets' seed corpora (fuzz/) at
# both, the CUDA kernels under host emulation (where the toolkit's headers are found), then the
# backend conformance suite at every level this CPU runs. Then a ThreadSanitizer build in
# build-tsan runs the thread suite (tests/threads: sessions on several threads at once, a session
# handed between threads, the CPU backend's thread pool) and the CUDA kernels under host emulation
# again, as the emulator's race check (tests/cuda_emulation/race_check.h: every emulated CUDA thread
# a ThreadSanitizer fiber, ordered only by the barriers CUDA gives, so a shared- or global-memory
# access of one thread unordered with another's write is reported), after checking that the check
# reports each of four kernels without its barrier. No recovery (-fno-sanitize-recover=all,
# halt_on_error): the first finding ends the run with an error. The Python end-to-end checks are left to the Release build
# (scripts/run_tests.sh); so are benchmarks, CUDA and XNNPACK, which the sanitizer builds leave out
# to stay small (XNNPACK's own code is not instrumented anyway).
#   bash scripts/test_sanitizers.sh [asan|tsan]   (default: both)
#   bash scripts/test_sanitizers.sh emulated_gpu  (not in the default: the cuda backend's own host
#     code, launchers and kernels on the emulated GPU under ASan + UBSan in build-asan-gpu, the
#     conformance entries and the CLI's device-check commands, and its own cases under TSan in
#     build-tsan-gpu, with the CUDA toolkit; more than CI's budget has left)
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

# A pool of jobs, one per core. Each job's output goes to <dir>/logs/<label>.log, printed in full
# if it fails; pool_report prints one line per job and fails if any did.
pool_labels=()
pool_start() {  # dir: empties its logs/ and tmp/
  rm -rf "$1/logs" "$1/tmp"
  mkdir -p "$1/logs"
  pool_labels=()
}
run_job() {  # dir, label, isa (best or scalar), then the command
  local dir=$1 label=$2 isa=$3
  shift 3
  pool_labels+=("$label")
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
  # Each job converts its fixtures into a scratch folder of its own.
  ( set +e; t0=$SECONDS
    export ENCRT_TEST_TMP_DIR="$PWD/$dir/tmp/$label"
    mkdir -p "$ENCRT_TEST_TMP_DIR"
    if [[ $isa == scalar ]]; then ENCRT_ISA=scalar "$@"; else "$@"; fi >"$dir/logs/$label.log" 2>&1
    echo "$? $((SECONDS - t0))" >"$dir/logs/$label.status" ) &
}
pool_report() {  # dir, the sanitizer's name
  local dir=$1 name=$2 failed=0 label status seconds
  wait
  for label in "${pool_labels[@]}"; do
    status=99 seconds=?
    [[ -f "$dir/logs/$label.status" ]] && read -r status seconds <"$dir/logs/$label.status"
    if [[ $status -eq 0 ]]; then
      echo "$name: PASS $label ($seconds s): $(tail -n 2 "$dir/logs/$label.log" | tr -s '\n' ' ')"
    else
      echo "$name: FAIL $label (exit $status, $seconds s); its output:"
      cat "$dir/logs/$label.log"
      failed=1
    fi
  done
  if [[ $failed -ne 0 ]]; then echo "$name: FAILED"; exit 1; fi
}
# The CUDA kernels' source under host emulation (tests/cuda_emulation, built where the CUDA
# toolkit's headers are found, the backend itself left out) in build dir $1: its target, or
# nothing. (The target list is read whole first: grep -q would stop reading early, and under
# pipefail cmake's broken pipe would then count as no match.)
emulation_target() {
  present_targets "$1" encrt_cuda_emulation_tests
}
# Those of the targets $2... that build dir $1 has (the fiber switch's suite, tests/fiber, is built
# on x86-64 and aarch64 hosts only).
present_targets() {
  local dir=$1 targets
  shift
  targets=$(cmake --build "$dir" --target help 2>/dev/null || true)
  for t in "$@"; do
    if grep -q "^\.\.\. $t\$\|^$t:" <<<"$targets"; then echo -n "$t "; fi
  done
}
# The emulation suite in two halves of about the same length, side by side: the attention
# kernels' cases, and all the others (hidden cases left out).
run_emulation_halves() {  # dir, label prefix
  run_job "$1" "$2.others" best "$1/bin/encrt_cuda_emulation_tests" '~attention*' '~[.]'
  run_job "$1" "$2.attention" best "$1/bin/encrt_cuda_emulation_tests" 'attention*'
}
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
  # The CUDA kernels under emulation: out-of-bounds reads and writes of the kernels' buffers and
  # shared memory, and undefined behaviour in their index arithmetic.
  read -r -a emulation <<<"$(emulation_target build-asan)"
  read -r -a fiber <<<"$(present_targets build-asan encrt_fiber_tests)"
  cmake --build build-asan -j "$jobs" --target "${suites[@]}" encrt_conformance encrt_cli "${fuzz_replays[@]}" \
    "${emulation[@]}" "${fiber[@]}"
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  if [[ ${#fiber[@]} -gt 0 ]]; then
    # The emulator's fiber switch announces each switch to AddressSanitizer: a stack buffer
    # overflow in a fiber must be reported as one, from the fiber's frames ([.fiber_asan]).
    out=$(build-asan/bin/encrt_fiber_tests '[.fiber_asan]' 2>&1 || true)
    if ! grep -q "ERROR: AddressSanitizer: stack-buffer-overflow" <<<"$out" || ! grep -q "in encrt_fiber_start" <<<"$out"; then
      echo "asan+ubsan: FAIL the overflow in a fiber was not reported as a stack-buffer-overflow under the fiber's entry; output:"
      echo "$out"
      exit 1
    fi
    echo "asan+ubsan: the overflow in a fiber is reported (stack-buffer-overflow, under encrt_fiber_start)"
  fi
  # The suites and corpus replays run side by side, one per core (each is one process).
  pool_start build-asan
  if [[ ${#emulation[@]} -gt 0 ]]; then
    # The longest work (about 6 minutes on one core), started first.
    run_emulation_halves build-asan cuda_emulation
  fi
  if [[ ${#fiber[@]} -gt 0 ]]; then run_job build-asan fiber best build-asan/bin/encrt_fiber_tests; fi
  for suite in "${suites[@]}"; do
    for isa in best scalar; do
      # ENCRT_ISA picks the kernels of sessions (the default kernel table); the kernel suite calls
      # every kernel this CPU runs directly, the same ones at either setting, so at scalar it runs
      # its dispatch cases only (which check the default table against ENCRT_ISA).
      if [[ $suite == encrt_kernel_tests && $isa == scalar ]]; then
        run_job build-asan "$suite.$isa" "$isa" "build-asan/bin/$suite" '[dispatch]'
      elif [[ $suite == encrt_kernel_tests ]]; then
        # The longest job, in two halves that run side by side: the reference kernels' own
        # cases, and the others (the SIMD kernels against the reference, dispatch).
        run_job build-asan "$suite.$isa.ref" "$isa" "build-asan/bin/$suite" '[ref]'
        run_job build-asan "$suite.$isa.others" "$isa" "build-asan/bin/$suite" '~[ref]'
      else
        run_job build-asan "$suite.$isa" "$isa" "build-asan/bin/$suite"
      fi
    done
  done
  for t in "${fuzz_targets[@]}"; do
    for isa in best scalar; do
      run_job build-asan "fuzz_corpus_$t.$isa" "$isa" "build-asan/bin/encrt_fuzz_replay_$t" "fuzz/corpus/$t"
    done
  done
  pool_report build-asan asan+ubsan
  # The conformance suite holds every backend and level to the scalar reference; entries this
  # CPU cannot run are skipped (exit 4), as in the Release build.
  ctest --test-dir build-asan -R '^conformance:' -j "$jobs" --output-on-failure
  echo "asan+ubsan: $((SECONDS - start)) s"
fi

if [[ $which == all || $which == tsan ]]; then
  start=$SECONDS
  cmake -S . -B build-tsan "${common[@]}" -DENCRT_SANITIZE_THREAD=ON >/dev/null
  read -r -a emulation <<<"$(emulation_target build-tsan)"
  cmake --build build-tsan -j "$jobs" --target encrt_thread_tests "${emulation[@]}"
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  if [[ ${#emulation[@]} -gt 0 ]]; then
    # The race check must report each of its self-test's kernels without their barrier (hidden
    # cases of tests/cuda_emulation/test_warp_emulation_schedules.cpp, one process each).
    while IFS= read -r name; do
      [[ -z $name ]] && continue
      set +e
      out=$(build-tsan/bin/encrt_cuda_emulation_tests "$name" 2>&1)
      status=$?
      set -e
      if [[ $status -eq 0 ]] || ! grep -q "WARNING: ThreadSanitizer: data race" <<<"$out"; then
        echo "tsan: FAIL the race check did not report the race of \"$name\" (exit $status); its output:"
        echo "$out"
        exit 1
      fi
      echo "tsan: the race check reports \"$name\""
    done <<<"$(build-tsan/bin/encrt_cuda_emulation_tests --list-test-names-only '[.emulation_race]')"
  fi
  pool_start build-tsan
  if [[ ${#emulation[@]} -gt 0 ]]; then
    # The whole emulation suite under the race check (about 6 minutes on one core).
    run_emulation_halves build-tsan race_check
  fi
  for isa in best scalar; do
    run_job build-tsan "encrt_thread_tests.$isa" "$isa" build-tsan/bin/encrt_thread_tests
  done
  pool_report build-tsan tsan
  echo "tsan: $((SECONDS - start)) s"
fi

if [[ $which == emulated_gpu ]]; then
  # The emulated GPU (tests/cuda_emulation/device) needs the CUDA toolkit's headers and a build
  # with the cuda backend on: its host code (session creation, the arena's pointers, staging,
  # graph capture and replay, packed layouts, the launchers' grids) runs on no other sanitizer
  # build. nvcc still compiles the real kernels into the library (one architecture here, to be
  # quick); the emulated suite links its own host-compiled copies ahead of them, so only those run.
  # Each device allocation is one heap block, so an access past a buffer's end is reported where
  # the buffer is an allocation of its own (the weights, the arena and each staging buffer).
  start=$SECONDS
  gpu=("${common[@]/-DENCRT_WITH_CUDA=OFF/-DENCRT_WITH_CUDA=ON}")
  cmake -S . -B build-asan-gpu "${gpu[@]}" -DCMAKE_CUDA_ARCHITECTURES=90-real -DENCRT_SANITIZE=ON >/dev/null
  if [[ -z $(present_targets build-asan-gpu encrt_conformance_emulated_gpu) ]]; then
    echo "emulated_gpu: FAILED: no CUDA toolkit was found, so build-asan-gpu has no emulated GPU"
    exit 1
  fi
  cmake --build build-asan-gpu -j "$jobs" --target encrt_conformance_emulated_gpu encrt_cli_emulated_gpu encrt_fake_cublaslt
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # First, that the check can fail: a kernel's write one byte past a 100-byte device buffer, inside
  # the 256-byte rounding, must be reported ([.emulated_gpu_asan]).
  out=$(build-asan-gpu/bin/encrt_conformance_emulated_gpu --backend cuda '[.emulated_gpu_asan]' 2>&1 || true)
  if ! grep -q "ERROR: AddressSanitizer: use-after-poison" <<<"$out"; then
    echo "emulated_gpu: FAIL a kernel's write past its device buffer was not reported; output:"
    echo "$out"
    exit 1
  fi
  echo "emulated_gpu: a kernel's write past its device buffer is reported (use-after-poison)"
  # The same three entries as the Release build's ctest (the defaults without the kernels' own
  # sweeps, the fixtures under a layer's tail in one kernel and under int8 arithmetic).
  ctest --test-dir build-asan-gpu -R '^conformance:emulated_gpu:' -j "$jobs" --output-on-failure --timeout 3600
  # The CLI's device-check commands on the emulated GPU (inspect, bench, profile, tune, run).
  bash scripts/test_emulated_cli.sh build-asan-gpu
  echo "emulated_gpu (asan+ubsan): $((SECONDS - start)) s"

  # ThreadSanitizer: the emulated GPU's own cases ([emulated_gpu]), among them two sessions of one
  # model run at once on two threads, so that the backend's host code (what sessions of one model
  # share: the model, the loaded cuBLASLt, the kernels' attributes) is checked for races; every
  # kernel they launch runs under the emulator's race check as well (tests/cuda_emulation/race_check.h).
  start=$SECONDS
  cmake -S . -B build-tsan-gpu "${gpu[@]}" -DCMAKE_CUDA_ARCHITECTURES=90-real -DENCRT_SANITIZE_THREAD=ON >/dev/null
  cmake --build build-tsan-gpu -j "$jobs" --target encrt_conformance_emulated_gpu encrt_fake_cublaslt
  mkdir -p build-tsan-gpu/tmp/emulated_gpu
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ENCRT_CUBLASLT="$PWD/build-tsan-gpu/lib/libencrt_fake_cublaslt.so" \
    ENCRT_TEST_TMP_DIR="$PWD/build-tsan-gpu/tmp/emulated_gpu" \
    build-tsan-gpu/bin/encrt_conformance_emulated_gpu --backend cuda '[emulated_gpu]'
  echo "emulated_gpu (tsan): $((SECONDS - start)) s"
fi
