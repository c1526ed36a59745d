# Cross-compiling encrt for 64-bit ARM Linux (Raspberry Pi 4/5, Graviton, Jetson's CPU side)
# with Debian's g++-aarch64-linux-gnu. Run the results under qemu-user on x86 hosts:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake
#   cmake --build build-arm -j && qemu-aarch64 -L /usr/aarch64-linux-gnu build-arm/bin/encrt --help
# (scripts/test_aarch64.sh does this in build-aarch64, with Debian's arm64 XNNPACK: see below.)
# FlatBuffers, nlohmann-json and Catch2 are header-only for encrt; flatc runs on the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Host-installed header-only packages (and their CMake configs) are usable as they are.
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# Optional: a folder of extracted arm64 Debian packages (scripts/arm64_xnnpack_sysroot.sh DIR puts
# Debian's arm64 XNNPACK, pthreadpool and cpuinfo there), searched after the cross libc, so that
# the top-level XNNPACK detection finds the arm64 libraries:
#   -DENCRT_AARCH64_EXTRA_ROOT=$PWD/build-aarch64/arm64-sysroot
# Their shared libraries need each other (libXNNPACK.so.0 -> libcpuinfo.so.0): the linker finds
# them through -rpath-link, and programs run under qemu (the emulator below, which runs the test
# executables to list their tests) through the guest's LD_LIBRARY_PATH.
set(ENCRT_AARCH64_EXTRA_ROOT "" CACHE PATH "Extracted arm64 packages (scripts/arm64_xnnpack_sysroot.sh), or empty")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ENCRT_AARCH64_EXTRA_ROOT)
if(ENCRT_AARCH64_EXTRA_ROOT)
  list(APPEND CMAKE_FIND_ROOT_PATH ${ENCRT_AARCH64_EXTRA_ROOT})
  set(_encrt_extra_lib ${ENCRT_AARCH64_EXTRA_ROOT}/usr/lib/aarch64-linux-gnu)
  # (set, not appended: CMake reads a toolchain file more than once)
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_encrt_extra_lib}")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_encrt_extra_lib}")
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=${_encrt_extra_lib})
endif()
# The host's FlatBuffers CMake package lives under the host's multiarch directory: only its
# headers and flatc are used, so the host package serves the cross build as it is.
if(EXISTS /usr/lib/x86_64-linux-gnu/cmake/flatbuffers)
  set(FlatBuffers_DIR /usr/lib/x86_64-linux-gnu/cmake/flatbuffers CACHE PATH "")
endif()
