#!/usr/bin/env bash
# Fetches Debian's arm64 XNNPACK (the same 2022-02 snapshot as the amd64 libxnnpack-dev) and what
# it needs at run time beyond the cross compiler's libc (/usr/aarch64-linux-gnu), and extracts the
# packages into DIR, a build-local sysroot for the aarch64 cross build: nothing is installed
# system-wide (arm64 -dev packages do not co-install with the amd64 ones).
#   bash scripts/arm64_xnnpack_sysroot.sh build-aarch64/arm64-sysroot
# DIR then holds usr/include/{xnnpack,pthreadpool}.h and usr/lib/aarch64-linux-gnu/*.so*
# (toolchains/aarch64-linux-gnu.cmake: -DENCRT_AARCH64_EXTRA_ROOT=DIR). Idempotent: a stamp file
# names the packages extracted. Prints SKIPPED and exits 0 when the packages cannot be downloaded
# (no network, no apt), leaving DIR without the stamp, so the aarch64 build goes on without XNNPACK.
# Needs root (or sudo) only once, to enable arm64 for apt downloads (dpkg --add-architecture).
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$1
# libXNNPACK.so.0 NEEDED: libm, libcpuinfo.so.0, libpthreadpool.so.0, libgcc_s, libc, ld-linux;
# libpthreadpool.so.0 and libcpuinfo.so.0: libpthread, libc, ld-linux. The cross libc has all
# but libcpuinfo (Debian 12's libcpuinfo0 has no libclog dependency).
packages=(libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo0)
stamp="$dir/.encrt-arm64-packages"
want="${packages[*]}"
if [[ -f "$stamp" ]] && [[ "$(head -n 1 "$stamp")" == "$want" ]]; then
  echo "arm64 XNNPACK sysroot: $dir (already extracted)"
  exit 0
fi

skip() {
  echo "SKIPPED: arm64 XNNPACK sysroot ($1): the aarch64 build goes on without the xnnpack backend"
  exit 0
}
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "no apt-get / dpkg-deb"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
arm64=("${packages[@]/%/:arm64}")
# apt-get download needs arm64 package lists: enable the architecture (downloads only, nothing
# arm64 is installed) and update, unless apt already knows the packages.
if ! apt-cache show "${arm64[@]}" >/dev/null 2>&1; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64 || skip "dpkg --add-architecture arm64 failed"
  fi
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  apt-cache show "${arm64[@]}" >/dev/null 2>&1 || skip "apt does not know ${arm64[*]}"
fi

debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
# (As root, apt warns that its sandbox user cannot write there and downloads unsandboxed.)
if ! (cd "$debs" && apt-get download -qq "${arm64[@]}") >"$debs/log" 2>&1; then
  sed 's/^/  /' "$debs/log"
  skip "apt-get download ${arm64[*]} failed"
fi
# Start from an empty DIR (a stale or partial extraction goes), but remove nothing else.
if [[ -d "$dir" ]]; then
  other=$(find "$dir" -mindepth 1 -maxdepth 1 ! -name usr ! -name .encrt-arm64-packages | head -n 1)
  [[ -z "$other" ]] || { echo "arm64 XNNPACK sysroot: $dir holds $other: not a folder of this script" >&2; exit 1; }
  rm -rf "$dir/usr" "$stamp"
fi
mkdir -p "$dir"
for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
lib="$dir/usr/lib/aarch64-linux-gnu"
for f in "$dir/usr/include/xnnpack.h" "$dir/usr/include/pthreadpool.h" "$lib/libXNNPACK.so" \
  "$lib/libpthreadpool.so" "$lib/libcpuinfo.so.0"; do
  [[ -e "$f" ]] || { echo "arm64 XNNPACK sysroot: $f missing after extraction" >&2; exit 1; }
done
{
  echo "$want"
  for deb in "$debs"/*.deb; do dpkg-deb -W --showformat='${Package}:${Architecture} ${Version}\n' "$deb"; done
} >"$stamp"
echo "arm64 XNNPACK sysroot: $dir:"
tail -n +2 "$stamp" | sed 's/^/  /'
