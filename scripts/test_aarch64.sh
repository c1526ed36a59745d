#!/usr/bin/env bash
# Cross-compiles encrt for aarch64 Linux (toolchains/jetson.cmake over aarch64-linux-gnu.cmake) and runs its Catch2
# suites under qemu-user: the NEON kernels against the reference, the converter and the golden
# PyTorch fixtures must give the same answers on ARM, with and without the dot product extension. Skipped, with a message, when the cross compiler
# or qemu cannot be installed. With Debian's arm64 XNNPACK (scripts/arm64_xnnpack_sysroot.sh
# extracts it into build-aarch64/arm64-sysroot; without network the build goes on without it), the
# xnnpack backend is built too, and its outputs are checked against the cpu backend's under qemu.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq g++-aarch64-linux-gnu qemu-user >/dev/null; } ||
    { echo "SKIPPED: aarch64 cross tests (g++-aarch64-linux-gnu / qemu-user not installable)"; exit 0; }
fi
sysroot=build-aarch64/arm64-sysroot
bash scripts/arm64_xnnpack_sysroot.sh "$sysroot"
extra_root=""
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
if [[ -f "$sysroot/.encrt-arm64-packages" ]]; then
  extra_root="$PWD/$sysroot"
  # libXNNPACK.so.0 needs libcpuinfo.so.0 and libpthreadpool.so.0 from there: the guest's loader
  # looks in its LD_LIBRARY_PATH (-E sets it for the guest only, not for qemu itself).
  qemu+=(-E "LD_LIBRARY_PATH=$extra_root/usr/lib/aarch64-linux-gnu")
fi
# The build goes through toolchains/jetson.cmake: it is toolchains/aarch64-linux-gnu.cmake plus
# -mtune=cortex-a78ae (and, with JetPack's cross toolkit, the CUDA backend, which this machine
# cannot build: see the end), so this one cross build exercises both files; tuning changes no
# result, and the kernels are chosen at run time from the CPU's features, as on any aarch64 board.
# -U: XNNPACK is looked for again on every configure (in the sysroot, or not at all without it).
cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=toolchains/jetson.cmake \
  -DENCRT_BUILD_BENCHMARKS=ON -DCMAKE_BUILD_TYPE=Release -DENCRT_AARCH64_EXTRA_ROOT="$extra_root" \
  -U 'ENCRT_XNNPACK_*' -U 'ENCRT_PTHREADPOOL_*'
cmake --build build-aarch64 -j "$(nproc)"
# ENCRT_EXPECT_EMULATED=1 (qemu-user passes the environment to its guest): the host-info test of
# the runtime suite checks that the emulation is detected (what `encrt bench` reports).
export ENCRT_EXPECT_EMULATED=1
# toolchains/jetson.cmake pointed at this machine's CUDA toolkit, which has no aarch64 target
# libraries (CUDA 13 has no aarch64-linux target; Orin's JetPack 6 ships CUDA 12's): it must refuse
# it with a message that says so, not configure a backend that cannot link.
if [[ -d /usr/local/cuda/bin && ! -d /usr/local/cuda/targets/aarch64-linux/lib ]]; then
  log=$(mktemp)
  if cmake -S . -B build-aarch64/jetson-cuda -DCMAKE_TOOLCHAIN_FILE=toolchains/jetson.cmake \
       -DENCRT_JETSON_CUDA=/usr/local/cuda >"$log" 2>&1; then
    echo "FAILED: toolchains/jetson.cmake accepted a CUDA toolkit without aarch64 target libraries"; cat "$log"; exit 1
  elif grep -q "has no targets/aarch64-linux/lib" "$log"; then
    echo "jetson: this machine's CUDA toolkit ($(/usr/local/cuda/bin/nvcc --version | tail -1)) has no aarch64" \
         "target libraries, and toolchains/jetson.cmake refuses it (the CUDA part needs JetPack's cross toolkit)"
  else
    echo "FAILED: configuring with ENCRT_JETSON_CUDA=/usr/local/cuda failed for another reason:"; cat "$log"; exit 1
  fi
  rm -rf build-aarch64/jetson-cuda "$log"
fi
# Every qemu run below goes into one pool, as many at a time as there are cores (each run is one
# process), the longest first; each writes its output to a log of its own and converts its
# fixtures into a folder of its own (ENCRT_TEST_TMP_DIR), and the logs are printed in order after.
pool_dir=$(mktemp -d)
pool_labels=() pool_may_skip=()
pool_run() {  # label, may_skip (1: exit code 4, a backend this build lacks, is a skip), then qemu's arguments
  local label=$1 may_skip=$2 n=${#pool_labels[@]}
  shift 2
  pool_labels+=("$label") pool_may_skip+=("$may_skip")
  while [[ $(jobs -rp | wc -l) -ge $(nproc) ]]; do wait -n || true; done
  ( set +e; t0=$SECONDS
    ENCRT_TEST_TMP_DIR=$(mktemp -d) "${qemu[@]}" "$@" >"$pool_dir/$n.log" 2>&1
    echo "$? $((SECONDS - t0))" >"$pool_dir/$n.status" ) &
}
# qemu's default CPU has every extension (the neoni8mm level); a Cortex-A53 has no dot product
# instructions, so there the best level is neon: the int8 GEMM and attention run their ARMv8.0
# kernels (arm::qu8s8_gemm_2x16__neon, arm::qs8_attention__neon).
# Jetson Orin's CPU class: qemu 7.2 has no Cortex-A78AE model; its Neoverse-N1 has the same
# features (armv8.2-a, dot product, fp16 arithmetic, no i8mm), so the best level is neonfp16. The
# reference kernels' own tests ([ref]) and the runtime's other cases do not depend on the level and
# run on the default CPU; on the Neoverse-N1 the SIMD kernels and dispatch, and the golden fixtures
# and heads end to end.
# On the Cortex-A53, as on the Neoverse-N1, the runtime suite runs its end-to-end cases (the golden
# fixtures against PyTorch, the task heads): its other cases either do not depend on the level or
# go through every level this CPU runs themselves (e.g. packed against padded), which the default
# CPU's run covers, and the A53's kernels are held to the reference by the kernel suite below.
pool_run "encrt_runtime_tests" 0 build-aarch64/bin/encrt_runtime_tests
pool_run "encrt_runtime_tests [golden],[heads] (Cortex-A53: no dot product)" 0 -cpu cortex-a53 \
  build-aarch64/bin/encrt_runtime_tests '[golden],[heads]'
# The backend conformance suite on ARM (exit code 4: a backend this build lacks, skipped). The
# mock_device test double runs the reference kernels on any CPU: x86 (ctest) and armv7 run it.
for b in cpu cpu:neon cpu:neondot xnnpack xnnpack:fp16=half; do
  pool_run "conformance --backend $b" 1 build-aarch64/bin/encrt_conformance --backend "$b"
done
pool_run "encrt_kernel_tests" 0 build-aarch64/bin/encrt_kernel_tests
pool_run "encrt_kernel_tests (Cortex-A53: no dot product)" 0 -cpu cortex-a53 build-aarch64/bin/encrt_kernel_tests
pool_run "encrt_kernel_tests ~[ref] (Neoverse-N1 = Orin's features: dot product, fp16, no i8mm)" 0 \
  -cpu neoverse-n1 build-aarch64/bin/encrt_kernel_tests '~[ref]'
pool_run "encrt_runtime_tests [golden],[heads] (Neoverse-N1)" 0 -cpu neoverse-n1 build-aarch64/bin/encrt_runtime_tests '[golden],[heads]'
pool_run "encrt_converter_tests" 0 build-aarch64/bin/encrt_converter_tests
# The CUDA emulator's fiber switch (tests/fiber: its aarch64 assembly), for emulation tests built
# on an aarch64 host (a Jetson, a Grace machine); the emulation suite itself runs on x86-64 here.
pool_run "encrt_fiber_tests" 0 build-aarch64/bin/encrt_fiber_tests
wait
pool_failed=()
for n in "${!pool_labels[@]}"; do
  status=99 seconds=?
  [[ -f "$pool_dir/$n.status" ]] && read -r status seconds <"$pool_dir/$n.status"
  echo "aarch64 (qemu): ${pool_labels[n]} (exit $status, $seconds s)"
  cat "$pool_dir/$n.log"
  if [[ $status -eq 0 || ( $status -eq 4 && ${pool_may_skip[n]} -eq 1 ) ]]; then continue; fi
  pool_failed+=("${pool_labels[n]}")
done
rm -rf "$pool_dir"
if [[ ${#pool_failed[@]} -ne 0 ]]; then
  printf 'aarch64 (qemu): FAILED: %s\n' "${pool_failed[@]}"
  exit 1
fi

# encrt_model_floor with the ARM peak probes (sdot, usmmla, fmla .4s/.8h; benchmarks/peak_probe):
# the products it counts and its floor arithmetic on converted fixtures, under qemu (no Google
# Benchmark is needed, so ENCRT_BUILD_BENCHMARKS=ON builds it and skips the kernel benchmarks).
echo "aarch64 (qemu): encrt_model_floor (its counts and arithmetic; the probes' rates under qemu mean nothing)"
/usr/bin/python3 tests/e2e/model_floor_check.py --floor build-aarch64/bin/encrt_model_floor \
  --encrt build-aarch64/bin/encrt --tmp "$(mktemp -d)" --wrapper "${qemu[*]}"

# The xnnpack backend against the cpu backend on ARM: small fixtures converted by the aarch64 CLI,
# run with each backend under qemu, outputs compared. fp32, and fp16 with the default fp16=widen
# (fp16 weights widened for XNNPACK's fp32 operator: encrt's fp16 semantics): max |cpu - xnnpack|
# <= 1e-4 x the output's RMS. fp16=half (XNNPACK's own fp16 operator keeps activations and outputs
# in half) is compared per token: cosine >= 0.999 for every token row. XNNPACK has fp16 operators
# only on CPUs with fp16 arithmetic (the backend probes xnn_create_fully_connected_nc_f16): qemu's
# default CPU has it, so with fp16=half the fp16 linears land on xnnpack there; a Cortex-A53 lacks
# it, so they stay on the cpu backend.
if [[ -z "$extra_root" ]]; then
  echo "SKIPPED: aarch64 xnnpack backend agreement (no arm64 XNNPACK sysroot)"
  exit 0
fi
echo "aarch64 (qemu): xnnpack backend vs cpu backend. Timings under qemu mean nothing: only outputs are compared."
agree_start=$SECONDS
work=build-aarch64/backend-agreement
rm -rf "$work"
mkdir -p "$work"
cpu_args=()
cli() { "${qemu[@]}" "${cpu_args[@]}" build-aarch64/bin/encrt "$@"; }
# Linear ops per backend in `encrt inspect`'s placement table, e.g. "xnnpack=8".
linear_placement() {
  awk '/^placement/ {p = 1; next} /^backends/ {p = 0} p && $2 == "linear" {n[$3]++}
       END {for (b in n) printf "%s%s=%d", (k++ ? " " : ""), b, n[b]}'
}
failures=0
for fixture in bert_plain torch_post_gelu_3layer; do
  for dtype in fp32 fp16; do
    cpu_args=()
    cli convert "tests/fixtures/$fixture" -o "$work/$fixture.$dtype.encrt" --dtype "$dtype" >/dev/null 2>&1
  done
done
for cpu in default cortex-a53; do
  cpu_args=()
  if [[ $cpu != default ]]; then cpu_args=(-cpu "$cpu"); fi
  for fixture in bert_plain torch_post_gelu_3layer; do
    src=tests/fixtures/$fixture
    for case in fp32:widen fp16:widen fp16:half; do
      dtype=${case%%:*} fp16=${case##*:}
      model=$work/$fixture.$dtype.encrt
      label="$cpu CPU, $fixture $dtype, fp16=$fp16"
      # All linear ops on xnnpack, but XNNPACK's half operators need fp16 arithmetic.
      expect=xnnpack
      if [[ $fp16 == half && $cpu == cortex-a53 ]]; then expect=cpu; fi
      placed=$(cli inspect "$model" --backend xnnpack --backend-options "fp16=$fp16" | linear_placement)
      if [[ $placed != "$expect="* || $placed == *" "* ]]; then
        echo "$label: FAIL: linear ops placed $placed, expected all on $expect"
        failures=$((failures + 1))
      fi
      outputs=()
      for run in "cpu 1" "xnnpack 1" "xnnpack 2"; do
        read -r backend threads <<<"$run"
        o=$work/$fixture.$dtype.$fp16.$cpu.$backend.t$threads.npy
        # The cpu side at level neon: fp16 weights widened to fp32 there too (qemu's default CPU
        # would otherwise run them in fp16 arithmetic, neonfp16).
        options=(--isa neon)
        if [[ $backend == xnnpack ]]; then options=(--backend-options "fp16=$fp16"); fi
        # Padded on both sides: every row is compared, and xnnpack runs padded (a packed cpu run
        # has zeros at padding positions; tests/runtime/test_packed_batches.cpp checks packed).
        cli run "$model" --ids "$src/ids.npy" --mask "$src/mask.npy" --output hidden --padding padded \
          --backend "$backend" "${options[@]}" --threads "$threads" -o "$o" >/dev/null
        outputs+=("$o")
      done
      if [[ $fp16 == widen ]]; then bar=(--max-abs-over-rms 1e-4); else bar=(--min-token-cosine 0.999); fi
      for i in 1 2; do
        /usr/bin/python3 scripts/compare_npy.py "${outputs[0]}" "${outputs[$i]}" "${bar[@]}" \
          --label "$label (linears: $placed), cpu vs xnnpack threads=$i" || failures=$((failures + 1))
      done
    done
  done
done
echo "aarch64 (qemu): backend agreement checks took $((SECONDS - agree_start)) s"
if [[ $failures -ne 0 ]]; then
  echo "aarch64 (qemu): $failures backend agreement check(s) FAILED"
  exit 1
fi
