// Launchers of the kernels in layer_norm_quantize_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/layer_norm_quantize_kernel.cuh"

namespace encrt::cuda {

using namespace layer_norm_quantize_kernels;

cudaError_t layer_norm_quantize(const LayerNormQuantizeArgs& a, cudaStream_t stream) {
  const LayerNormArgs& n = a.norm;
  if (n.rows == 0) return cudaSuccess;
  if (n.width <= 0 || n.width > kMaxRowWidth || n.x_type != Elem::kF32 || n.y_type != Elem::kF32 ||
      (n.residual && n.residual_type != Elem::kF32) || !a.q || !a.scale || !a.zero_point)
    return cudaErrorInvalidValue;
  if (n.width <= kWarpRowWidth)
    layer_norm_quantize_kernel<WarpRows><<<row_blocks<WarpRows>(n.rows), WarpRows::kBlockThreads, 0, stream>>>(a);
  else
    layer_norm_quantize_kernel<BlockRows><<<row_blocks<BlockRows>(n.rows), BlockRows::kBlockThreads, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
