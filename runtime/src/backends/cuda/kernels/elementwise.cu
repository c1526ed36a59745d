// Launchers of the kernels in elementwise_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/elementwise_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

using namespace elementwise_kernels;

cudaError_t activation(const ActivationArgs& a, cudaStream_t stream) {
  if (a.n == 0) return cudaSuccess;
  const size_t chunk = 16 / elem_size(a.y_type);  // values per 16-byte access
  if (a.n % chunk == 0 && reinterpret_cast<uintptr_t>(a.y) % 16 == 0) {
    if (a.y_type == Elem::kF16)
      launch_kernel(activation_chunk_kernel<__half, 8>, blocks_for(a.n / 8, kThreads), kThreads, 0, stream, a);
    else
      launch_kernel(activation_chunk_kernel<float, 4>, blocks_for(a.n / 4, kThreads), kThreads, 0, stream, a);
  } else {
    launch_kernel(activation_kernel, blocks_for(a.n, kThreads), kThreads, 0, stream, a);
  }
  return cudaGetLastError();
}

cudaError_t tanh_in_place(size_t n, void* y, Elem type, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  launch_kernel(tanh_kernel, blocks_for(n, kThreads), kThreads, 0, stream, n, y, type);
  return cudaGetLastError();
}

cudaError_t pool(const PoolArgs& a, cudaStream_t stream) {
  if (a.batch == 0) return cudaSuccess;
  if (a.width <= 0) return cudaErrorInvalidValue;
  launch_kernel(pool_kernel, pool_blocks(a.batch, a.width), kPoolThreads, 0, stream, a);
  return cudaGetLastError();
}

cudaError_t kernels_loadable() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, activation_kernel);
}

}  // namespace encrt::cuda
