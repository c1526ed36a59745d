// How a row kernel's threads hold its rows: a warp per row (eight rows per block of 256 threads)
// for rows up to kWarpRowWidth wide, or a block of 256 threads per row for wider ones. Each thread
// of a row owns the columns lane, lane + kRowThreads, ... and the row's sums and ranges are taken
// over those threads alone.
//
// Why both: a block per row leaves a row of MiniLM's 384 values 1.5 values per thread and pays two
// block barriers per statistic; on an H200 the LayerNorm over 4096 such rows took 27 µs that way
// (the first GPU run's profile) where the bytes take 2-3 µs. A warp per row needs no barrier (the
// shuffles are the reduction), and a short run (batch 1: 128 rows) spreads over 16 blocks of 8
// independent rows. The block layout stays for rows up to kMaxRowWidth (it holds 16 values per
// thread where a warp would need 128).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION).
#pragma once

#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda {

// The widest row a warp holds in registers (32 values per lane).
constexpr int kWarpRowWidth = 1024;

template <int kThreadsPerRow, int kWidest>
struct RowLayout {
  static_assert(kThreadsPerRow == 32 || kThreadsPerRow == 256, "a warp or a block of 256 threads per row");
  static constexpr int kRowThreads = kThreadsPerRow;
  static constexpr int kPer = kWidest / kThreadsPerRow;  // values per thread
  static constexpr int kRowsPerBlock = kThreadsPerRow == 32 ? 8 : 1;
  static constexpr int kBlockThreads = kThreadsPerRow * kRowsPerBlock;
  static constexpr bool kWarp = kThreadsPerRow == 32;
  static constexpr int kMaxWidth = kWidest;

  __device__ static int lane() { return static_cast<int>(threadIdx.x) % kThreadsPerRow; }
  __device__ static size_t row() {
    return static_cast<size_t>(blockIdx.x) * kRowsPerBlock + static_cast<size_t>(threadIdx.x) / kThreadsPerRow;
  }
  // The sum of v over the row's threads (every one gets it); scratch: one float per warp of a block.
  __device__ static float sum(float v, float* scratch) {
    if (kWarp) return warp_sum(v);
    return block_sum(v, scratch);
  }
};

using WarpRows = RowLayout<32, kWarpRowWidth>;
using BlockRows = RowLayout<256, kMaxRowWidth>;

// The launch: blocks for `rows` rows.
template <class L>
inline unsigned row_blocks(int rows) {
  return static_cast<unsigned>((static_cast<size_t>(rows) + L::kRowsPerBlock - 1) / L::kRowsPerBlock);
}

}  // namespace encrt::cuda
