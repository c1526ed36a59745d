#!/usr/bin/env bash
# encrt against ONNX Runtime on ARM CPUs, int8 MiniLM, by the guest instructions of one run under
# qemu-user (no ARM hardware here, and qemu's timings mean nothing): for each emulated CPU, the
# instructions of one steady-state run of `encrt bench` (the aarch64 build, the kernels its
# dispatch picks for that CPU) and of ONNX Runtime's aarch64 library (its PyPI wheel) through
# ort_run.cpp, on each of compare_ort.py's int8 ONNX models. A run's count is (1 warm-up + 2 runs)
# minus (1 warm-up + 1 run), so loading, session creation and the process cancel out; both engines
# get batch 1, every token real, 1 thread. Instructions are work, not time: an instruction of one
# engine may cost more cycles than one of the other (the README says what the counts can and
# cannot show).
#
# Needs: scripts/test_aarch64.sh's build (build-aarch64/bin/encrt and its sysroot), the int8
# models of benchmarks/compare_ort.py in build/bench-cache (minilm.int8.encrt and the
# minilm.opset14.*.qint8.onnx files), aarch64-linux-gnu-g++, qemu-aarch64, and the network once:
# ONNX Runtime's aarch64 wheel from PyPI (pip download) and the C API header from Debian's
# libonnxruntime-dev (arm64, trixie), into build-aarch64/onnxruntime.
# usage: bash benchmarks/qemu_instructions/ort_vs_encrt.sh [--seq S] [--cpus "max neoverse-n1 cortex-a53"]
#          [--ort-version V (1.20.1)] [--models "fused.per_tensor ..."]
set -euo pipefail
cd "$(dirname "$0")/../.."
seq=128 cpus="max neoverse-n1 cortex-a53" ort_version=1.20.1
models="plain.per_tensor plain.per_channel fused.per_tensor fused.per_channel"
while [[ $# -gt 0 ]]; do
  case $1 in
    --seq) seq=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --ort-version) ort_version=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
encrt=build-aarch64/bin/encrt cache=build/bench-cache
[[ -x $encrt ]] || { echo "no $encrt: run scripts/test_aarch64.sh first" >&2; exit 1; }
[[ -f $cache/minilm.int8.encrt ]] || { echo "no $cache/minilm.int8.encrt: run benchmarks/compare_ort.py --dtypes int8 first" >&2; exit 1; }
sysroot_lib="$PWD/build-aarch64/arm64-sysroot/usr/lib/aarch64-linux-gnu"

# ONNX Runtime for aarch64: the wheel's libonnxruntime.so, Debian's header, ort_run built against them.
ort=build-aarch64/onnxruntime
lib=$ort/wheel/onnxruntime/capi
if [[ ! -f $lib/libonnxruntime.so.$ort_version ]]; then
  mkdir -p "$ort"
  PYTHON=${PYTHON:-$([[ -x .venv/bin/python ]] && echo .venv/bin/python || echo python3)}
  "$PYTHON" -m pip download --quiet "onnxruntime==$ort_version" --platform manylinux_2_27_aarch64 \
    --platform manylinux2014_aarch64 --python-version 3.11 --only-binary=:all: --no-deps -d "$ort"
  python3 -m zipfile -e "$ort"/onnxruntime-"$ort_version"-*aarch64*.whl "$ort/wheel"
fi
ln -sf "libonnxruntime.so.$ort_version" "$lib/libonnxruntime.so.1"
ln -sf "libonnxruntime.so.$ort_version" "$lib/libonnxruntime.so"
header=$ort/include/onnxruntime/onnxruntime_c_api.h
if [[ ! -f $header ]]; then
  mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
  curl -fsSL "$mirror/dists/trixie/main/binary-arm64/Packages.xz" -o "$ort/Packages.xz"
  deb=$(xz -dc "$ort/Packages.xz" | awk '/^Package: libonnxruntime-dev$/ {p = 1} p && /^Filename:/ && !f {print $2; f = 1}')
  [[ -n $deb ]] || { echo "libonnxruntime-dev not found in Debian trixie's index" >&2; exit 2; }
  curl -fsSL "$mirror/$deb" -o "$ort/dev.deb"
  dpkg-deb -x "$ort/dev.deb" "$ort/dev"
  mkdir -p "$ort/include"
  cp -r "$ort/dev/usr/include/onnxruntime" "$ort/include/"
fi
if [[ ! -x $lib/ort_run || benchmarks/qemu_instructions/ort_run.cpp -nt $lib/ort_run ]]; then
  aarch64-linux-gnu-g++ -O2 -std=c++17 -Wall -Wextra -Werror -I"$ort/include/onnxruntime" \
    benchmarks/qemu_instructions/ort_run.cpp -L"$lib" -lonnxruntime -Wl,-rpath,'$ORIGIN' -o "$lib/ort_run"
fi

# count CPU RUNS CMD...: the guest instructions of CMD run with RUNS runs after one warm-up, read
# from qemu's log through a pipe (no log on disk: ONNX Runtime's session creation alone is ~300 M).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkfifo "$work/log"
count() {
  local cpu=$1 runs=$2
  shift 2
  python3 benchmarks/qemu_instructions/count_instructions.py "$work/log" > "$work/count" &
  qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$sysroot_lib" -cpu "$cpu" -d in_asm,exec,nochain \
    -D "$work/log" "$@" --warmup 1 --iters "$runs" > "$work/out"
  wait $!
  awk '{print $1; exit}' "$work/count"
}
per_run() {  # CPU CMD...: instructions of one run
  local one two
  one=$(count "$1" 1 "${@:2}")
  two=$(count "$1" 2 "${@:2}")
  echo $((two - one))
}

echo "instructions per run (qemu-user counts), MiniLM int8, batch 1, seq $seq, 1 thread; ONNX Runtime $ort_version (PyPI aarch64 wheel)"
printf '%-12s %-10s %14s | %-20s %14s | %s\n' "qemu CPU" "encrt isa" "encrt" "ORT model" "ORT" "ORT / encrt"
for cpu in $cpus; do
  level=$(qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$sysroot_lib" -cpu "$cpu" "$encrt" bench \
            "$cache/minilm.int8.encrt" --batch 1 --seq 8 --threads 1 --iters 1 --warmup 0 | awk '$1 == "isa" {print $2; exit}')
  e=$(per_run "$cpu" "$encrt" bench "$cache/minilm.int8.encrt" --batch 1 --seq "$seq" --threads 1)
  for m in $models; do
    f=$cache/minilm.opset14.$m.qint8.onnx
    [[ -f $f ]] || { echo "skipping $m: no $f" >&2; continue; }
    o=$(per_run "$cpu" "$lib/ort_run" "$f" --batch 1 --seq "$seq" --threads 1)
    printf '%-12s %-10s %14d | %-20s %14d | %.2f\n' "$cpu" "$level" "$e" "$m" "$o" "$(echo "$o / $e" | bc -l)"
  done
done
