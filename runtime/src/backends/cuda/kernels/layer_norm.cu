// Launchers of the kernels in layer_norm_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/layer_norm_kernel.cuh"

namespace encrt::cuda {

using namespace layer_norm_kernels;

cudaError_t embed_layer_norm(const EmbedArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth || a.seq < 1 || (a.source && (!a.offsets || a.batch < 1))) return cudaErrorInvalidValue;
  if (a.width <= kWarpRowWidth)
    embed_kernel<WarpRows><<<row_blocks<WarpRows>(a.rows), WarpRows::kBlockThreads, 0, stream>>>(a);
  else
    embed_kernel<BlockRows><<<row_blocks<BlockRows>(a.rows), BlockRows::kBlockThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

cudaError_t layer_norm(const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth) return cudaErrorInvalidValue;
  if (a.width <= kWarpRowWidth)
    layer_norm_kernel<WarpRows><<<row_blocks<WarpRows>(a.rows), WarpRows::kBlockThreads, 0, stream>>>(a);
  else
    layer_norm_kernel<BlockRows><<<row_blocks<BlockRows>(a.rows), BlockRows::kBlockThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
