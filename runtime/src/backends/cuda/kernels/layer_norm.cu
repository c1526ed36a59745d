// Launchers of the kernels in layer_norm_kernel.cuh (the design: its header comment; the choice
// of layout: row_layout.cuh).
#include "backends/cuda/kernels/layer_norm_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

using namespace layer_norm_kernels;

cudaError_t embed_layer_norm(const EmbedArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth || a.seq < 1 || (a.source && (!a.offsets || a.batch < 1))) return cudaErrorInvalidValue;
  with_row_layout(a.layout, a.rows, a.width, kWarpRowsFrom, [&](auto layout) {
    using L = decltype(layout);
    launch_kernel(embed_kernel<L>, row_blocks<L>(a.rows), L::kBlockThreads, 0, stream, a);
  });
  return cudaGetLastError();
}

cudaError_t layer_norm(const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth) return cudaErrorInvalidValue;
  with_row_layout(a.layout, a.rows, a.width, kWarpRowsFrom, [&](auto layout) {
    using L = decltype(layout);
    launch_kernel(layer_norm_kernel<L>, row_blocks<L>(a.rows), L::kBlockThreads, 0, stream, a);
  });
  return cudaGetLastError();
}

}  // namespace encrt::cuda
