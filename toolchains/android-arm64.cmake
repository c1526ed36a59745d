# Cross-compiling encrt for Android phones and tablets (arm64-v8a) with the Android NDK: a thin
# wrapper over the NDK's own toolchain file, which knows its clang, sysroot and flags.
#   export ANDROID_NDK=/path/to/android-ndk-r26d      # or ANDROID_NDK_ROOT
#   cmake -S . -B build-android -DCMAKE_TOOLCHAIN_FILE=toolchains/android-arm64.cmake
#   cmake --build build-android -j
#   adb push build-android/bin/encrt /data/local/tmp/ && adb shell /data/local/tmp/encrt bench ...
# UNTESTED: the NDK cannot be installed on this project's build machines, so this file has never
# been run (README, "Android").
#
# The choices, each overridable with -D on the first configure:
#   ANDROID_ABI=arm64-v8a        every phone of the last years; AArch64, so the NEON kernels and
#                                the dot product / fp16 / i8mm levels are built and chosen at run
#                                time by HWCAP as on Linux (getauxval: bionic has it from API 18).
#   ANDROID_PLATFORM=android-24  Android 7.0 (2016): a common minSdkVersion of today's apps, so an
#                                app need not raise its own to link encrt. encrt needs nothing
#                                newer from bionic: mmap, pthreads, getauxval (API 18),
#                                posix_memalign (it avoids C11 aligned_alloc, API 28).
#   ANDROID_STL=c++_static       libc++ linked into libencrt.so and the CLI: an app ships one .so
#                                and no libc++_shared.so. An app that has other C++ libraries
#                                exchanging STL objects with encrt across .so boundaries must use
#                                c++_shared for all of them (the NDK's rule: one STL per app);
#                                encrt's own API passes only its own types and std::string/vector
#                                inside one library, so static is safe for the usual case.
# Tests are off by default here: the suites must run on a device (adb) and some of them allocate
# with aligned_alloc, which needs -DANDROID_PLATFORM=android-28; -DENCRT_BUILD_TESTS=ON builds them.
if(DEFINED ENV{ANDROID_NDK} AND NOT "$ENV{ANDROID_NDK}" STREQUAL "")
  set(ENCRT_ANDROID_NDK "$ENV{ANDROID_NDK}")
elseif(DEFINED ENV{ANDROID_NDK_ROOT} AND NOT "$ENV{ANDROID_NDK_ROOT}" STREQUAL "")
  set(ENCRT_ANDROID_NDK "$ENV{ANDROID_NDK_ROOT}")
elseif(ANDROID_NDK)
  set(ENCRT_ANDROID_NDK "${ANDROID_NDK}")
else()
  message(FATAL_ERROR "toolchains/android-arm64.cmake: set ANDROID_NDK (or ANDROID_NDK_ROOT) to the Android NDK's "
                      "folder, e.g. export ANDROID_NDK=$HOME/Android/Sdk/ndk/26.3.11579264")
endif()
set(ENCRT_ANDROID_TOOLCHAIN "${ENCRT_ANDROID_NDK}/build/cmake/android.toolchain.cmake")
if(NOT EXISTS "${ENCRT_ANDROID_TOOLCHAIN}")
  message(FATAL_ERROR "toolchains/android-arm64.cmake: ${ENCRT_ANDROID_TOOLCHAIN} does not exist "
                      "(ANDROID_NDK must be the NDK's top folder, the one holding build/cmake/)")
endif()

if(NOT DEFINED ANDROID_ABI)
  set(ANDROID_ABI arm64-v8a)
endif()
if(NOT DEFINED ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-24)
endif()
if(NOT DEFINED ANDROID_STL)
  set(ANDROID_STL c++_static)
endif()
include("${ENCRT_ANDROID_TOOLCHAIN}")

# The NDK's file searches only its sysroot. FlatBuffers, nlohmann-json and Catch2 are header-only
# for encrt and flatc runs on the host, so the host's packages (and their CMake configs) serve this
# build; the host's libraries sit under its own multiarch folder, which this target never searches.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
if(EXISTS /usr/lib/x86_64-linux-gnu/cmake/flatbuffers)
  set(FlatBuffers_DIR /usr/lib/x86_64-linux-gnu/cmake/flatbuffers CACHE PATH "")
endif()
# No Debian XNNPACK, CUDA or libpng for Android: the cpu backend alone, `encrt attention` as SVG.
set(ENCRT_WITH_XNNPACK OFF CACHE STRING "")
set(ENCRT_WITH_CUDA OFF CACHE STRING "")
set(ENCRT_BUILD_TESTS OFF CACHE BOOL "")
set(ENCRT_BUILD_BENCHMARKS OFF CACHE BOOL "")
