#!/usr/bin/env bash
# Cross-compiles encrt for 32-bit ARM Linux (toolchains/armv7-linux-gnueabihf.cmake: ARMv7-A with
# NEON + VFPv4, hard-float) and runs every Catch2 suite under qemu-user's qemu-arm: 32-bit size_t,
# 8-byte alignment rules and the reference kernels (the NEON kernels are AArch64 code, so armv7
# runs level scalar) must give the same answers as on x86 and aarch64. Then the armv7 CLI converts
# a fixture, runs it and benches it, and bench must say that it runs emulated. Prints pass/fail
# per suite and exits non-zero if any failed. Skipped, with a message, when the cross compiler or
# qemu cannot be installed. XNNPACK (no Debian armhf package in the build's sysroot) and the
# benchmarks are off, as in test_aarch64.sh, to keep the build short.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ! command -v arm-linux-gnueabihf-g++ >/dev/null || ! command -v qemu-arm >/dev/null; then
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++-arm-linux-gnueabihf qemu-user >/dev/null; } ||
    { echo "SKIPPED: armv7 cross tests (g++-arm-linux-gnueabihf / qemu-user not installable)"; exit 0; }
fi
set -e
cmake -S . -B build-armv7 -DCMAKE_TOOLCHAIN_FILE=toolchains/armv7-linux-gnueabihf.cmake \
  -DCMAKE_BUILD_TYPE=Release -DENCRT_BUILD_BENCHMARKS=OFF -DENCRT_WITH_XNNPACK=OFF >/dev/null
cmake --build build-armv7 -j "$(nproc)"
set +e
echo "armv7: built in $((SECONDS - start)) s"

# qemu's default 32-bit CPU ("max": an ARMv8 core in AArch32 state, NEON and VFPv4 included).
# ENCRT_EXPECT_EMULATED=1: the host-info test checks that the emulation is detected.
qemu=(qemu-arm -L /usr/arm-linux-gnueabihf)
export ENCRT_EXPECT_EMULATED=1
# The suites run side by side, as many at a time as there are cores (each is one process; the
# runtime suite, the longest, starts first). Each one's output goes to build-armv7/<label>.log.
jobs_max=$(nproc)
start_suite() {  # label, then the command under qemu
  local label=$1
  shift
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
  ( t0=$SECONDS; "${qemu[@]}" "$@" >"build-armv7/$label.log" 2>&1; status=$?
    echo "$status $((SECONDS - t0))" >"build-armv7/$label.status" ) &
}
labels=(encrt_runtime_tests encrt_kernel_tests conformance:cpu conformance:mock_device encrt_thread_tests
        encrt_heatmap_tests encrt_converter_tests)
rm -f build-armv7/*.status
start_suite encrt_runtime_tests build-armv7/bin/encrt_runtime_tests
start_suite encrt_kernel_tests build-armv7/bin/encrt_kernel_tests
# The backend conformance suite (exit code 4: a backend this build lacks, skipped): cpu (level
# scalar here, the reference itself, still through the sentinels, replays and fixtures) and the
# device-memory test double.
start_suite conformance:cpu build-armv7/bin/encrt_conformance --backend cpu
start_suite conformance:mock_device build-armv7/bin/encrt_conformance --backend mock_device
start_suite encrt_thread_tests build-armv7/bin/encrt_thread_tests
# The [cli] cases start build-armv7/bin/encrt through std::system, that is through the host's
# /bin/sh (qemu-user passes exec to the kernel), and the kernel cannot start an ARM program from
# an x86 shell without a binfmt_misc registration: the CLI is run below instead, under qemu.
echo "armv7 (qemu): encrt_heatmap_tests runs without its [cli] cases (they exec the ARM CLI from the host's shell; the CLI is checked below)"
start_suite encrt_heatmap_tests build-armv7/bin/encrt_heatmap_tests '~[cli]'
start_suite encrt_converter_tests build-armv7/bin/encrt_converter_tests
wait
failures=()
for label in "${labels[@]}"; do
  status=99 seconds=?
  [[ -f "build-armv7/$label.status" ]] && read -r status seconds <"build-armv7/$label.status"
  if [[ $status -eq 0 ]]; then
    echo "armv7 (qemu): PASS $label ($seconds s): $(tail -n 2 "build-armv7/$label.log" | tr -s '\n' ' ')"
  elif [[ $status -eq 4 ]]; then
    echo "armv7 (qemu): SKIPPED $label: $(tail -n 1 "build-armv7/$label.log")"
  else
    echo "armv7 (qemu): FAIL $label (exit $status, $seconds s); its output:"
    tail -n 40 "build-armv7/$label.log"
    failures+=("$label")
  fi
done

# The CLI: convert a fixture with the armv7 converter, run it, and bench it; bench must report the
# emulation, in its header and in --json.
work=build-armv7/cli-check
rm -rf "$work"
mkdir -p "$work"
cli() { "${qemu[@]}" build-armv7/bin/encrt "$@"; }
t0=$SECONDS
cli_ok=1
src=tests/fixtures/bert_plain
cli convert "$src" -o "$work/bert_plain.encrt" --dtype fp32 >"$work/convert.log" 2>&1 || cli_ok=0
cli run "$work/bert_plain.encrt" --ids "$src/ids.npy" --mask "$src/mask.npy" --token-type-ids "$src/token_type_ids.npy" \
  --output pooled -o "$work/pooled.npy" >"$work/run.log" 2>&1 || cli_ok=0
# The pooled output against PyTorch's (the fixture's golden file), as the x86 suites hold it.
/usr/bin/python3 scripts/compare_npy.py "$work/pooled.npy" "$src/pooled.npy" --max-abs-over-rms 1e-4 \
  --label "armv7 encrt run vs PyTorch, bert_plain fp32 pooled" || cli_ok=0
cli bench "$work/bert_plain.encrt" --batch 1 --seq 8 --iters 2 --warmup 1 >"$work/bench.txt" 2>&1 || cli_ok=0
cli bench "$work/bert_plain.encrt" --batch 1 --seq 8 --iters 2 --warmup 1 --json >"$work/bench.json" 2>&1 || cli_ok=0
if [[ $cli_ok -eq 1 ]] && grep -q '^EMULATED (qemu-user): timings are not meaningful' "$work/bench.txt" &&
   grep -q '"emulated": true' "$work/bench.json" && grep -q '^isa          scalar' "$work/bench.txt"; then
  echo "armv7 (qemu): PASS cli convert/run/bench ($((SECONDS - t0)) s); bench says:"
  head -n 4 "$work/bench.txt" | sed 's/^/    /'
else
  echo "armv7 (qemu): FAIL cli convert/run/bench (or bench did not report the emulation); outputs:"
  tail -n 5 "$work"/*.log "$work/bench.txt" "$work/bench.json" 2>/dev/null
  failures+=("cli")
fi

echo "armv7 (qemu): done in $((SECONDS - start)) s. Timings under qemu mean nothing: only results are checked."
if [[ ${#failures[@]} -ne 0 ]]; then
  echo "armv7 (qemu): FAILED: ${failures[*]}"
  exit 1
fi
echo "armv7 (qemu): all suites passed"
