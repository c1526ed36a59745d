// Launches the int8-to-fp16 weight kernel (dequantize_weights_kernel.cuh: the formula).
#include "backends/cuda/kernels/dequantize_weights_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

cudaError_t dequantize_weights(const DequantizeWeightsArgs& a, cudaStream_t stream) {
  if (a.N <= 0 || a.K <= 0 || !a.q || !a.scales || !a.out) return cudaErrorInvalidValue;
  const size_t n = static_cast<size_t>(a.N) * static_cast<size_t>(a.K);
  const size_t blocks = (n + dequantize_weights_kernels::kThreads - 1) / dequantize_weights_kernels::kThreads;
  if (blocks > 0x7fffffffu) return cudaErrorInvalidValue;
  const cudaError_t e = launch_kernel(dequantize_weights_kernels::dequantize_weights_kernel, static_cast<unsigned>(blocks),
                                      dequantize_weights_kernels::kThreads, 0, stream, a);
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace encrt::cuda
