// The emulated GPU: the CUDA runtime's API as the cuda backend uses it (emulated_cuda_runtime.cpp),
// on the host, so that the backend itself — its host code, its launchers (the kernels' .cu files)
// and the kernels' own source — runs whole models on a machine without a GPU. The kernels run on
// warp_emulation.h's fibers; the runtime's objects (device memory, pinned memory, streams, CUDA
// graphs, events, the current device's attributes) are host objects that keep CUDA's rules where a
// program can break them without a GPU noticing otherwise:
// - device memory starts as 0xff bytes (NaN in fp16 and fp32), as cudaMalloc promises nothing, so
//   a kernel that reads what nothing wrote gives NaN, not a plausible zero;
// - a launch is checked as the driver checks it: a grid or block of zero, a block of more than 1024
//   threads (or, here, not a multiple of 32, or not 1-D: the emulator's), more dynamic shared memory
//   than the kernel was allowed (48 KB until cudaFuncSetAttribute raises it, and never more than
//   the opt-in limit), clusters before sm_90, of more than 8 blocks unless the kernel allows it, or
//   a grid.x that is not a multiple of the cluster: each is the launch's error (cudaGetLastError);
// - a stream being captured records its launches, copies and event records into the graph, which
//   each cudaGraphLaunch replays (what a replay reads is what the buffers hold then); allocating,
//   freeing or synchronizing while a capture is under way is an error and invalidates the capture
//   (cudaStreamCaptureModeGlobal's rule);
// - cudaMemcpyAsync checks that its device side lies in one allocation of the emulated GPU (or in
//   host memory mapped for it);
// - under AddressSanitizer (scripts/test_sanitizers.sh emulated_gpu) each allocation is a heap
//   block of its own whose rounding to 256 bytes is poisoned, so a kernel's or copy's access past a
//   buffer's end is reported even where a real cudaMalloc's rounding would hide it.
// Streams run their work at once, in order, one piece of work at a time in the process (one GPU):
// a valid CUDA program cannot tell that from a GPU that is merely fast. What it cannot show: the
// hardware's timing and memory ordering, the tensor cores' rounding (warp_emulation.h), the
// occupancy that registers limit (it counts threads and shared memory only).
//
// The device is an sm_90 GPU with 132 multiprocessors and 227 KB of shared memory a block (an
// H100/H200's) and 16 GiB of memory, discrete. The environment changes it, for the backend's error
// paths: ENCRT_EMULATED_GPU_INTEGRATED=1 makes it integrated (a Jetson's memory shared with the
// CPU: cudaHostRegister and cudaHostGetDevicePointer map host memory); ENCRT_EMULATED_GPU_ARCH=72
// (any but 90) another architecture, for which no kernel loads (cudaErrorNoKernelImageForDevice,
// as on a GPU this build has no code for); ENCRT_EMULATED_GPU_MEMORY=BYTES its memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace encrt::emulation::device {

// Launches `body` (every thread of the grid runs it: warp_emulation.h) on `stream` after the checks
// above; `kernel` identifies the kernel for its attributes (cudaFuncSetAttribute).
cudaError_t launch(const void* kernel, dim3 grid, dim3 block, size_t shared_bytes, unsigned cluster_x,
                   cudaStream_t stream, bool dependent_launch, std::function<void()> body);

// What the emulated runtime has done, for tests that count (allocations during a run, say).
struct Counters {
  long device_allocations = 0;  // cudaMalloc
  long device_frees = 0;        // cudaFree
  long host_allocations = 0;    // cudaHostAlloc
  long launches = 0;            // kernels run (replays included)
  long captured_launches = 0;   // kernels recorded into graphs
  long graph_launches = 0;      // cudaGraphLaunch
};
Counters counters();

}  // namespace encrt::emulation::device

// cuda_runtime.h's C++ forms that take a kernel rather than a const void*, which it declares for
// nvcc only (__CUDACC__); the host compiler needs them here to compile the launchers.
template <typename... Params>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
template <typename... Params>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, void (*kernel)(Params...)) {
  return ::cudaFuncGetAttributes(attributes, reinterpret_cast<const void*>(kernel));
}
template <typename... Params>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void (*kernel)(Params...), int threads,
                                                          size_t shared_bytes) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void*>(kernel), threads,
                                                         shared_bytes);
}
