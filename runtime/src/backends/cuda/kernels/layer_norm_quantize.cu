// Launchers of the kernels in layer_norm_quantize_kernel.cuh (the design: its header comment).
#include <climits>

#include "backends/cuda/kernels/layer_norm_quantize_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

using namespace layer_norm_quantize_kernels;

cudaError_t layer_norm_quantize(const LayerNormQuantizeArgs& a, cudaStream_t stream) {
  const LayerNormArgs& n = a.norm;
  if (n.rows == 0) return cudaSuccess;
  if (n.width <= 0 || n.width > kMaxRowWidth || n.x_type != Elem::kF32 || n.y_type != Elem::kF32 ||
      (n.residual && n.residual_type != Elem::kF32) || !a.q || !a.scale || !a.zero_point)
    return cudaErrorInvalidValue;
  // Under auto a warp per row from kWarpRowsFrom rows for rows up to 512 wide only: the 1024-wide
  // warp layout holds six 32-value arrays a lane (ptxas: 255 registers), a block per row then.
  const int warp_from = n.width <= NarrowWarpRows::kMaxWidth ? kWarpRowsFrom : INT_MAX;
  with_row_layout(n.layout, n.rows, n.width, warp_from, [&](auto layout) {
    using L = decltype(layout);
    launch_kernel(layer_norm_quantize_kernel<L>, row_blocks<L>(n.rows), L::kBlockThreads, 0, stream, a);
  });
  return cudaGetLastError();
}

}  // namespace encrt::cuda
