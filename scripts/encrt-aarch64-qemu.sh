#!/bin/sh
# The aarch64 build of the encrt CLI (scripts/test_aarch64.sh builds it in build-aarch64/) run
# under qemu-user, usable wherever a script takes the CLI's path, e.g. the MiniLM accuracy check on
# the ARM kernels (about 12 minutes under emulation, so not part of CI):
#   .venv/bin/python tests/e2e/minilm_check.py --save DIR --dtypes fp16,int8 --encrt build/bin/encrt
#   .venv/bin/python tests/e2e/minilm_check.py --prebuilt DIR --dtypes fp16,int8 --encrt scripts/encrt-aarch64-qemu.sh
# QEMU_CPU=cortex-a53 (a qemu-user variable) emulates a core without the dot product extension.
# When the build links Debian's arm64 XNNPACK from build-aarch64/arm64-sysroot
# (scripts/arm64_xnnpack_sysroot.sh), the guest's loader finds its libraries through
# LD_LIBRARY_PATH, set for the guest only (-E).
root="$(dirname "$0")/.."
lib="$(cd "$root" && pwd)/build-aarch64/arm64-sysroot/usr/lib/aarch64-linux-gnu"
if [ -d "$lib" ]; then
  exec qemu-aarch64 -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$lib" "$root/build-aarch64/bin/encrt" "$@"
fi
exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$root/build-aarch64/bin/encrt" "$@"
