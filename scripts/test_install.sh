#!/usr/bin/env bash
# Installs encrt into a fresh prefix and builds an app against it the ways a user would:
# find_package(encrt) with encrt::encrt (libencrt.so) and encrt::encrt_static (libencrt.a), and
# pkg-config alone (g++ for the C++ API, gcc for the C API, once with --static). Every program
# runs one batch of a small model converted by the installed CLI and prints pooled values; all of
# them must print the same lines, and those must match what `encrt run --output pooled` writes.
#   scripts/test_install.sh [BUILD_DIR]   (default build/: reused as it is, configured if absent)
# KEEP=1 keeps the work folder (prefix, consumer builds, outputs).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=${1:-build}
jobs=$(nproc)
[[ $jobs -gt 2 ]] && jobs=2

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
# Only what is installed; in a build tree that is already built this does nothing.
cmake --build "$build" --target encrt_shared encrt_static encrt_cli -j "$jobs"

work=$(mktemp -d /tmp/encrt-install-test.XXXXXX)
if [[ "${KEEP:-0}" != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "== installed into $prefix:"
(cd "$prefix" && find . -mindepth 1 \( -type f -o -type l \) | sort | sed 's|^\./|  |')
pcdir=$(dirname "$(find "$prefix" -name encrt.pc)")

model=$work/bert_plain.encrt
"$prefix/bin/encrt" convert "$src/tests/fixtures/bert_plain" -o "$model" >"$work/convert.log" 2>&1 ||
  { cat "$work/convert.log"; exit 1; }

programs=()
run() {  # NAME BINARY: runs it on the model, keeps its output as $work/NAME.out
  echo "== $1"
  "$2" "$model" | tee "$work/$1.out"
  programs+=("$1")
}
links_libencrt_so() { readelf -d "$1" | grep -q 'NEEDED.*\[libencrt\.so\.0\]'; }

# CMake: find_package(encrt), shared then static.
for kind in shared static; do
  b=$work/cmake-$kind
  static=OFF
  [[ $kind == static ]] && static=ON
  cmake -S "$src/tests/consumer" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DENCRT_CONSUMER_STATIC=$static -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
  cmake --build "$b" -j "$jobs" >/dev/null
  for app in app_cpp app_c; do
    if [[ $kind == shared ]] && ! links_libencrt_so "$b/$app"; then
      echo "FAIL: $b/$app does not link libencrt.so.0"; exit 1
    fi
    if [[ $kind == static ]] && links_libencrt_so "$b/$app"; then
      echo "FAIL: $b/$app links libencrt.so.0, expected libencrt.a"; exit 1
    fi
    run "cmake-$kind-$app" "$b/$app"
  done
done

# pkg-config alone.
export PKG_CONFIG_PATH=$pcdir
libdir=$(pkg-config --variable=libdir encrt)
warn=(-Wall -Wextra -Werror)
p=$work/pkgconfig
mkdir -p "$p"
# shellcheck disable=SC2046
g++ -std=c++17 "${warn[@]}" "$src/tests/consumer/app.cpp" -o "$p/app_cpp" \
  $(pkg-config --cflags --libs encrt) -Wl,-rpath,"$libdir"
# shellcheck disable=SC2046
gcc -std=c99 "${warn[@]}" "$src/tests/consumer/app.c" -o "$p/app_c" \
  $(pkg-config --cflags --libs encrt) -Wl,-rpath,"$libdir"
# Static: libencrt.a, and Libs.private for what it needs (-l:libencrt.a picks the archive).
# shellcheck disable=SC2046
gcc -std=c99 "${warn[@]}" "$src/tests/consumer/app.c" -o "$p/app_c_static" \
  $(pkg-config --cflags encrt) $(pkg-config --static --libs encrt | sed 's/-lencrt\b/-l:libencrt.a/')
links_libencrt_so "$p/app_cpp" && links_libencrt_so "$p/app_c" && ! links_libencrt_so "$p/app_c_static" ||
  { echo "FAIL: pkg-config builds link the wrong library"; exit 1; }
run pkgconfig-app_cpp "$p/app_cpp"
run pkgconfig-app_c "$p/app_c"
run pkgconfig-app_c_static "$p/app_c_static"

# Every program printed the same lines.
for name in "${programs[@]}"; do
  if ! cmp -s "$work/${programs[0]}.out" "$work/$name.out"; then
    echo "FAIL: $name printed other values than ${programs[0]}:"
    diff "$work/${programs[0]}.out" "$work/$name.out" || true
    exit 1
  fi
done

# The installed CLI on the same ids and mask (written here as int32 .npy files).
write_npy_i32() {  # FILE ROWS COLS VALUE...
  local file=$1 rows=$2 cols=$3
  shift 3
  local dict="{'descr': '<i4', 'fortran_order': False, 'shape': ($rows, $cols), }"
  local pad=$(( (64 - (10 + ${#dict} + 1) % 64) % 64 ))
  dict+=$(printf '%*s' "$pad" '')
  local len=$(( ${#dict} + 1 )) bytes="" v
  for v in "$@"; do
    bytes+=$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)))
  done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))"
    printf '%s\n' "$dict"; printf "$bytes"; } >"$file"
}
vocab=$("$prefix/bin/encrt" inspect "$model" | sed -n -E 's/^ *vocab_size +([0-9]+).*/\1/p' | head -1)
ids=() mask=()
for b in 0 1; do
  for s in 0 1 2 3 4 5 6 7; do
    ids+=($(( (1 + 7 * b + 5 * s) % vocab )))
    if [[ $b == 1 && $s -ge 5 ]]; then mask+=(0); else mask+=(1); fi
  done
done
write_npy_i32 "$work/ids.npy" 2 8 "${ids[@]}"
write_npy_i32 "$work/mask.npy" 2 8 "${mask[@]}"
"$prefix/bin/encrt" run "$model" --ids "$work/ids.npy" --mask "$work/mask.npy" --output pooled \
  -o "$work/pooled.npy"
header=$(od -An -tu2 -j8 -N2 "$work/pooled.npy" | tr -d ' ')
od -An -v -tf4 -j $((10 + header)) "$work/pooled.npy" | tr -s ' ' '\n' | sed '/^$/d' >"$work/pooled.txt"
hidden=$(sed -n -E '1s/.*pooled \[[0-9]+, ([0-9]+)\].*/\1/p' "$work/${programs[0]}.out")
awk -v hidden="$hidden" 'NR == FNR { ref[n++] = $1; next }
  $1 == "row" { r = $2 + 0; for (i = 3; i <= NF; ++i) { d = $i - ref[r * hidden + i - 3]; if (d < 0) d = -d;
                if (d > max) max = d; ++checked } }
  END { printf "== encrt run --output pooled: %d values compared, largest difference %.2g\n", checked, max;
        exit !(checked > 0 && max <= 1e-5) }' "$work/pooled.txt" "$work/${programs[0]}.out" ||
  { echo "FAIL: the programs' pooled values differ from encrt run's"; exit 1; }
echo "OK: ${#programs[@]} programs (CMake shared/static, pkg-config shared/static; C++ and C) agree with encrt run"
