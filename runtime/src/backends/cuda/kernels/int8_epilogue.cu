// Launchers of the kernels in int8_epilogue_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/int8_epilogue_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using namespace int8_epilogue_kernels;

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

cudaError_t int8_epilogue(const Int8EpilogueArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.N <= 0 || a.ld_d < a.N || a.ld_d % 4 != 0) return cudaErrorInvalidValue;
  if (a.next_q) {
    if (a.N > kMaxRowWidth || !a.next_scale || !a.next_zero_point) return cudaErrorInvalidValue;
    launch_kernel(int8_epilogue_quantize_kernel, a.rows, kRowThreads, 0, stream, a);
    return cudaGetLastError();
  }
  if (!a.y) return cudaErrorInvalidValue;
  const size_t threads = static_cast<size_t>(a.rows) * static_cast<size_t>(a.ld_d / 4);
  const bool vector = a.N % 4 == 0 && a.ld_d == a.N && aligned16(a.d) && aligned16(a.w_sum) && aligned16(a.w_scale) &&
                      (!a.bias || aligned16(a.bias)) && (!a.residual || aligned16(a.residual)) && aligned16(a.y);
  if (vector)
    launch_kernel(int8_epilogue_kernel<true>, blocks_for(threads, kElementwiseThreads), kElementwiseThreads, 0, stream, a);
  else
    launch_kernel(int8_epilogue_kernel<false>, blocks_for(threads, kElementwiseThreads), kElementwiseThreads, 0, stream, a);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
