# Cross-compiling encrt for NVIDIA Jetson Orin (Cortex-A78AE CPU cores, an sm_87 GPU that shares
# the board's DRAM) on an x86-64 host: the CPU part with Debian's g++-aarch64-linux-gnu, the CUDA
# backend with JetPack's cross toolkit. README.md ("Jetson") walks through it step by step.
#
#   cmake -S . -B build-jetson -DCMAKE_TOOLCHAIN_FILE=toolchains/jetson.cmake \
#         -DENCRT_JETSON_CUDA=/usr/local/cuda-12.6 [-DENCRT_JETSON_SYSROOT=/path/to/l4t-rootfs]
#
# ENCRT_JETSON_CUDA is a CUDA toolkit with the aarch64 target libraries, as JetPack 6's
# cuda-cross-aarch64 package installs it on the host: nvcc in bin/ (an x86-64 program) and the
# board's cudart, cuBLAS and cuBLASLt in targets/aarch64-linux/. nvcc compiles the device code for
# sm_87 and hands host code to the aarch64 g++ (CMAKE_CUDA_HOST_COMPILER). CUDA 13 toolkits
# (like the one on our CI machines) ship no aarch64-linux target: Orin stays on JetPack 6's CUDA 12.
# Without ENCRT_JETSON_CUDA the same file builds the CPU part only (ENCRT_WITH_CUDA=OFF), which is
# how CI exercises it: scripts/test_aarch64.sh builds its aarch64 suites through this file and runs
# them under qemu, also with a CPU model of Orin's class (armv8.2-a with dot product and fp16
# arithmetic, no i8mm).
#
# ENCRT_JETSON_SYSROOT (optional) is the board's root file system (L4T's sample rootfs, or a copy
# of the board's /usr/lib): searched for libraries after the cross toolchain's own, for apps that
# link against more of L4T than encrt does (encrt needs only libc, libstdc++ and pthreads, and
# links cudart statically; libcuda.so is the board's driver, loaded by cudart at run time).

include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)

# Tuning only: the kernels are chosen at run time from the CPU's features (an Orin gets the
# neonfp16 level: dot product and fp16 arithmetic), so nothing here narrows where the binaries run.
set(CMAKE_C_FLAGS_INIT "-mtune=cortex-a78ae")
set(CMAKE_CXX_FLAGS_INIT "-mtune=cortex-a78ae")

set(ENCRT_JETSON_CUDA "" CACHE PATH "JetPack's CUDA cross toolkit (with targets/aarch64-linux), or empty for the CPU part only")
set(ENCRT_JETSON_SYSROOT "" CACHE PATH "The board's root file system (L4T), or empty")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ENCRT_JETSON_CUDA ENCRT_JETSON_SYSROOT)

if(ENCRT_JETSON_SYSROOT)
  if(NOT EXISTS "${ENCRT_JETSON_SYSROOT}/usr/lib/aarch64-linux-gnu")
    message(FATAL_ERROR "ENCRT_JETSON_SYSROOT=${ENCRT_JETSON_SYSROOT} has no usr/lib/aarch64-linux-gnu: "
                        "give the board's root file system (L4T)")
  endif()
  # (set, not appended: CMake reads a toolchain file more than once)
  list(APPEND CMAKE_FIND_ROOT_PATH ${ENCRT_JETSON_SYSROOT})
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${ENCRT_JETSON_SYSROOT}/usr/lib/aarch64-linux-gnu")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${ENCRT_JETSON_SYSROOT}/usr/lib/aarch64-linux-gnu")
endif()

if(ENCRT_JETSON_CUDA)
  if(NOT EXISTS "${ENCRT_JETSON_CUDA}/bin/nvcc")
    message(FATAL_ERROR "ENCRT_JETSON_CUDA=${ENCRT_JETSON_CUDA} has no bin/nvcc")
  endif()
  if(NOT EXISTS "${ENCRT_JETSON_CUDA}/targets/aarch64-linux/lib")
    message(FATAL_ERROR "ENCRT_JETSON_CUDA=${ENCRT_JETSON_CUDA} has no targets/aarch64-linux/lib: it is a toolkit "
                        "for the host only; install JetPack's cross toolkit (cuda-cross-aarch64) for the board's CUDA")
  endif()
  set(CMAKE_CUDA_COMPILER ${ENCRT_JETSON_CUDA}/bin/nvcc)
  set(CMAKE_CUDA_HOST_COMPILER aarch64-linux-gnu-g++)
  # Orin's GPU only; the sm_90 code and PTX of the x86 default would be dead weight on the board.
  set(CMAKE_CUDA_ARCHITECTURES 87-real)
  # FindCUDAToolkit takes the target libraries from targets/aarch64-linux when cross compiling
  # for aarch64 Linux.
  set(CUDAToolkit_ROOT ${ENCRT_JETSON_CUDA})
  list(APPEND CMAKE_FIND_ROOT_PATH ${ENCRT_JETSON_CUDA}/targets/aarch64-linux)
  set(ENCRT_WITH_CUDA ON CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
else()
  set(ENCRT_WITH_CUDA OFF CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
endif()
