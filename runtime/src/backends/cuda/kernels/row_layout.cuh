// How a row kernel's threads hold its rows: a warp per row (eight rows per block of 256 threads)
// for rows up to kWarpRowWidth wide, or a block per row. Each thread of a row owns the columns
// lane, lane + kRowThreads, ... and the row's sums and ranges are taken over those threads alone.
// Row kernels load every value they hold before they use any (load_row), so that a thread's
// loads are in flight together rather than one latency after another.
//
// Which is faster depends on the number of rows. On an H200 (MiniLM, hidden 384; per-op GPU
// profiles of `encrt bench --profile`, the first GPU runs), with kernels that still loaded a
// value, used it, then loaded the next: at batch 32 (4096 rows) the LayerNorm took 350 µs per run
// (13 calls) a warp per row against 440 a block per row, but at batch 1 (128 rows) 198 against
// 114: a block per row spreads 128 rows over 128 multiprocessors where eight warp rows per block
// use 16. LayerNorm + quantize (4096 rows): 436 against 400; quantize: 220 against 216. So the
// launchers' default (RowKernels::kAuto) is a warp per row for the LayerNorm and the embedding
// from kWarpRowsFrom rows, and a block per row everywhere else; rows=warp|block (the backend
// option) forces one, so that a GPU run measures both (scripts/device_check.sh).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION).
#pragma once

#include <climits>

#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda {

// The widest row a warp holds in registers (32 values per lane).
constexpr int kWarpRowWidth = 1024;
// From how many rows kAuto gives the LayerNorm and embedding kernels a warp per row (between the
// 128 rows where a block per row was faster and the 4096 where a warp per row was).
constexpr int kWarpRowsFrom = 2048;

template <int kThreadsPerRow, int kWidest>
struct RowLayout {
  static_assert(kThreadsPerRow == 32 || kThreadsPerRow == 128 || kThreadsPerRow == 256,
                "a warp, or a block of 128 or 256 threads, per row");
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

// A warp per row: rows up to 512 wide in 16 values per lane (MiniLM's 384), up to 1024 in 32.
using NarrowWarpRows = RowLayout<32, 512>;
using WarpRows = RowLayout<32, kWarpRowWidth>;
// A block of 256 threads per row: 2 values per thread up to 512 wide, 4 up to 1024, 16 up to
// kMaxRowWidth (each a layout of its own so that a narrow row does not hold, and load into,
// registers for 16: ptxas gives the 4096-wide LayerNorm + quantize 128 registers a thread, which
// would leave two blocks per multiprocessor); and the quantize kernel's 128 (it loops over the
// row, so its width has no bound).
using NarrowBlockRows = RowLayout<256, 512>;
using MidBlockRows = RowLayout<256, 1024>;
using BlockRows = RowLayout<256, kMaxRowWidth>;
using QuantizeBlockRows = RowLayout<128, 128>;

// The launch: blocks for `rows` rows.
template <class L>
inline unsigned row_blocks(int rows) {
  return static_cast<unsigned>((static_cast<size_t>(rows) + L::kRowsPerBlock - 1) / L::kRowsPerBlock);
}

// Calls launch(L{}) with the layout L for `rows` rows `width` wide: a block per row (the narrowest
// of the block layouts that holds the row), or a warp per row (16 values per lane up to 512 wide,
// 32 up to kWarpRowWidth) under rows=warp, or under rows=auto from warp_from_rows rows (INT_MAX:
// never).
template <typename Launch>
inline void with_row_layout(RowKernels choice, int rows, int width, int warp_from_rows, Launch&& launch) {
  const bool warp = width <= kWarpRowWidth && choice != RowKernels::kBlock &&
                    (choice == RowKernels::kWarp || rows >= warp_from_rows);
  if (!warp && width <= NarrowBlockRows::kMaxWidth)
    launch(NarrowBlockRows{});
  else if (!warp && width <= MidBlockRows::kMaxWidth)
    launch(MidBlockRows{});
  else if (!warp)
    launch(BlockRows{});
  else if (width <= NarrowWarpRows::kMaxWidth)
    launch(NarrowWarpRows{});
  else
    launch(WarpRows{});
}

// Columns lane + k · L::kRowThreads of a row at p (0 past width) into v, every load issued before
// any value is used.
template <class L, typename T>
__device__ __forceinline__ void load_row_as(float (&v)[L::kPer], const T* p, int width, int lane) {
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = lane + k * L::kRowThreads;
    v[k] = c < width ? to_float(p[c]) : 0.0f;
  }
}
template <class L>
__device__ __forceinline__ void load_row(float (&v)[L::kPer], const void* p, Elem e, size_t first, int width, int lane) {
  if (e == Elem::kF16)
    load_row_as<L>(v, static_cast<const __half*>(p) + first, width, lane);
  else
    load_row_as<L>(v, static_cast<const float*>(p) + first, width, lane);
}

}  // namespace encrt::cuda
