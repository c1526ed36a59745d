# Cross-compiling encrt for 64-bit ARM Linux (Raspberry Pi 4/5, Graviton, Jetson's CPU side)
# with Debian's g++-aarch64-linux-gnu. Run the results under qemu-user on x86 hosts:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake
#   cmake --build build-arm -j && qemu-aarch64 -L /usr/aarch64-linux-gnu build-arm/bin/encrt --help
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
# The host's FlatBuffers CMake package lives under the host's multiarch directory: only its
# headers and flatc are used, so the host package serves the cross build as it is.
if(EXISTS /usr/lib/x86_64-linux-gnu/cmake/flatbuffers)
  set(FlatBuffers_DIR /usr/lib/x86_64-linux-gnu/cmake/flatbuffers CACHE PATH "")
endif()
