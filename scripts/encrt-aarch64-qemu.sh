#!/bin/sh
# The aarch64 build of the encrt CLI (scripts/test_aarch64.sh builds it in build-aarch64/) run
# under qemu-user, usable wherever a script takes the CLI's path, e.g. the MiniLM accuracy check on
# the ARM kernels (about 12 minutes under emulation, so not part of CI):
#   .venv/bin/python tests/e2e/minilm_check.py --save DIR --dtypes fp16,int8 --encrt build/bin/encrt
#   .venv/bin/python tests/e2e/minilm_check.py --prebuilt DIR --dtypes fp16,int8 --encrt scripts/encrt-aarch64-qemu.sh
# QEMU_CPU=cortex-a53 (a qemu-user variable) emulates a core without the dot product extension.
exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$(dirname "$0")/../build-aarch64/bin/encrt" "$@"
