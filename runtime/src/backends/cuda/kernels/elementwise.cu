// Launchers of the kernels in elementwise_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/elementwise_kernel.cuh"

namespace encrt::cuda {

using namespace elementwise_kernels;

cudaError_t activation(const ActivationArgs& a, cudaStream_t stream) {
  if (a.n == 0) return cudaSuccess;
  activation_kernel<<<blocks_for(a.n, kThreads), kThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t tanh_in_place(size_t n, void* y, Elem type, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  tanh_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(n, y, type);
  return cudaGetLastError();
}

cudaError_t pool(const PoolArgs& a, cudaStream_t stream) {
  if (a.batch == 0) return cudaSuccess;
  if (a.width <= 0) return cudaErrorInvalidValue;
  pool_kernel<<<pool_blocks(a.batch, a.width), kPoolThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t kernels_loadable() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, activation_kernel);
}

}  // namespace encrt::cuda
