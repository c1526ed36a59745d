# Cross-compiling encrt for 32-bit ARM Linux boards with NEON (Raspberry Pi 2/3/4 on a 32-bit OS,
# BeagleBone-class and i.MX 6/7 boards with Cortex-A7/A15/A53 cores) with Debian's
# g++-arm-linux-gnueabihf. Run the results under qemu-user on x86 hosts:
#   cmake -S . -B build-armv7 -DCMAKE_TOOLCHAIN_FILE=toolchains/armv7-linux-gnueabihf.cmake
#   cmake --build build-armv7 -j && qemu-arm -L /usr/arm-linux-gnueabihf build-armv7/bin/encrt --help
# (scripts/test_armv7.sh does this in build-armv7 and runs every suite.)
#
# The target flags:
#   -march=armv7-a         the ARMv7-A profile (Cortex-A5 and later; an ARMv8 core in AArch32 mode
#                          runs it too). It is also Debian armhf's baseline architecture.
#   -mfpu=neon-vfpv4       Advanced SIMD (NEON) with VFPv4: 32 double registers, fused multiply-add
#                          and half-precision conversions. Cortex-A7, A15, A17 and every ARMv8 core
#                          have it; Cortex-A8/A9 (VFPv3) do not: those need -mfpu=neon, at the cost
#                          of nothing encrt relies on. Debian's own armhf default is vfpv3-d16
#                          without NEON, which would leave the integer loops unvectorized.
#   -mfloat-abi=hard       floats passed in VFP registers: the armhf ABI of Debian, Raspberry Pi OS
#                          and Ubuntu (their libc and libstdc++ are built for it).
# GCC vectorizes only integer loops with NEON at these flags: ARMv7's Advanced SIMD flushes
# subnormals to zero and has no IEEE NaN propagation, so GCC keeps float arithmetic on the VFP unit
# (which is IEEE-exact) unless -funsafe-math-optimizations is given. That is also why encrt's ARM
# float kernels are not built here: its NEON kernels (runtime/src/kernels/arm/) are AArch64 code
# (vaddvq, vfmaq lane forms, sdot, fp16 arithmetic, usmmla, 32 vector registers) and the 32-bit
# build runs the portable reference kernels (isa level "scalar"; runtime/CMakeLists.txt).
#
# FlatBuffers, nlohmann-json and Catch2 are header-only for encrt; flatc runs on the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
# -Wno-psabi: g++ notes at every std::vector<int64_t> insert that GCC 7.1 changed how such
# arguments are passed on ARM; it matters only when linking code built by g++ older than 7.1.
set(ENCRT_ARMV7_FLAGS "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -Wno-psabi")
# (set, not appended: CMake reads a toolchain file more than once)
set(CMAKE_C_FLAGS_INIT "${ENCRT_ARMV7_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${ENCRT_ARMV7_FLAGS}")
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Host-installed header-only packages (and their CMake configs) are usable as they are; the
# host's libraries live under its own multiarch directory, which this target never searches.
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)
# The host's FlatBuffers CMake package lives under the host's multiarch directory: only its
# headers and flatc are used, so the host package serves the cross build as it is.
if(EXISTS /usr/lib/x86_64-linux-gnu/cmake/flatbuffers)
  set(FlatBuffers_DIR /usr/lib/x86_64-linux-gnu/cmake/flatbuffers CACHE PATH "")
endif()
