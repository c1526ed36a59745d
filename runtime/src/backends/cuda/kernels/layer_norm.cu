// Launchers of the kernels in layer_norm_kernel.cuh (the design: its header comment; the choice
// of layout: row_layout.cuh).
#include "backends/cuda/kernels/layer_norm_kernel.cuh"

namespace encrt::cuda {

using namespace layer_norm_kernels;

namespace {

// A warp per row: rows=warp, or rows=auto from kWarpRowsFrom rows; either way only up to
// kWarpRowWidth wide.
bool warp_rows(RowKernels choice, int rows, int width) {
  if (width > kWarpRowWidth || choice == RowKernels::kBlock) return false;
  return choice == RowKernels::kWarp || rows >= kWarpRowsFrom;
}

template <class L>
void launch_embed(const EmbedArgs& a, cudaStream_t stream) {
  embed_kernel<L><<<row_blocks<L>(a.rows), L::kBlockThreads, 0, stream>>>(a);
}
template <class L>
void launch_layer_norm(const LayerNormArgs& a, cudaStream_t stream) {
  layer_norm_kernel<L><<<row_blocks<L>(a.rows), L::kBlockThreads, 0, stream>>>(a);
}

}  // namespace

cudaError_t embed_layer_norm(const EmbedArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth || a.seq < 1 || (a.source && (!a.offsets || a.batch < 1))) return cudaErrorInvalidValue;
  if (!warp_rows(a.layout, a.rows, a.width))
    launch_embed<BlockRows>(a, stream);
  else if (a.width <= NarrowWarpRows::kMaxWidth)
    launch_embed<NarrowWarpRows>(a, stream);
  else
    launch_embed<WarpRows>(a, stream);
  return cudaGetLastError();
}

cudaError_t layer_norm(const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.width > kMaxRowWidth) return cudaErrorInvalidValue;
  if (!warp_rows(a.layout, a.rows, a.width))
    launch_layer_norm<BlockRows>(a, stream);
  else if (a.width <= NarrowWarpRows::kMaxWidth)
    launch_layer_norm<NarrowWarpRows>(a, stream);
  else
    launch_layer_norm<WarpRows>(a, stream);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
