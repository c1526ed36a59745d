// How a row kernel's threads hold its rows: a warp per row (eight rows per block of 256 threads)
// for rows up to kWarpRowWidth wide, or a block per row. A thread holds its row's values in chunks
// of kVec consecutive columns: value k of thread `lane` is column
// column(lane, k) = ((k / kVec) · kRowThreads + lane) · kVec + k % kVec, so that each chunk is one
// vector load or store (8 bytes of fp16, 16 of fp32) where the row's width and the pointer allow;
// the row's sums and ranges are taken over the row's threads alone. Row kernels load every value
// they hold before they use any (load_row), so that a thread's loads are in flight together
// rather than one latency after another.
//
// Measured on an H200 (MiniLM, hidden 384; each kernel's duration inside a CUDA-graph replay,
// scripts/kernel_trace.py, and whole runs of `encrt bench --backend cuda`), 2026-12-04:
//   - a warp per row against a block per row, one column per access: at batch 32 (4096 rows per
//     row kernel) whole runs fp16 616 against 658 µs, int8 1101 against 1208 µs; at batch 1 (128
//     rows) fp16 229 against 209 µs, int8 406 against 324 µs (a block per row spreads 128 rows
//     over 128 multiprocessors where eight warp rows per block use 16). So the launchers' default
//     (RowKernels::kAuto) is a warp per row from kWarpRowsFrom rows and a block per row below,
//     for every row kernel; rows=warp|block (the backend option) forces one.
//   - chunks of 4 in the warp layouts, at batch 32: LayerNorm 8.34 → 6.19 µs a call, LayerNorm +
//     quantize 20.3 → 14.7 (also warp now), fp16 run 614 → 538 µs. Chunks of 2 in the block
//     layout (2 values a thread at width 384) made batch 1 slower: LayerNorm 2.12 → 2.77 µs a
//     call, LayerNorm + quantize 2.72 → 3.63 (192 of 256 threads busy, the same latency chain),
//     so the block layouts keep one column per access (kVec 1).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION).
#pragma once

#include <climits>
#include <cstdint>
#include <cstring>

#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda {

// The widest row a warp holds in registers (32 values per lane).
constexpr int kWarpRowWidth = 1024;
// From how many rows kAuto gives a row kernel a warp per row (between the 128 rows where a block
// per row was faster and the 4096 where a warp per row was).
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
  // Consecutive columns per chunk (one vector access): 4 in a warp's row, 1 in a block's (above).
  static constexpr int kVec = kThreadsPerRow == 32 ? 4 : 1;
  static_assert(kPer % kVec == 0, "whole chunks per thread");
  static constexpr int kChunks = kPer / kVec;

  // The column of value k of the row's thread `lane` (0 .. kRowThreads - 1).
  __host__ __device__ static constexpr int column(int lane, int k) {
    return ((k / kVec) * kRowThreads + lane) * kVec + k % kVec;
  }

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

// A warp per row: rows up to 384 wide in 12 values per lane (MiniLM's), up to 512 in 16, up to
// 1024 in 32. The 384-wide layout is for occupancy (not yet measured on a GPU): ptxas (sm_90) gives
// the LayerNorm kernel 63 registers a thread in it against 79 in the 512-wide one (embed: 76 / 96,
// LayerNorm + quantize: 93 / 127), so 4 blocks of 8 rows fit a multiprocessor instead of 3, and
// MiniLM's 4096 rows at batch 32 run in one wave on 132 multiprocessors (4224 at once) instead of
// two (3168, then 928).
using Warp384Rows = RowLayout<32, 384>;
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
// of the block layouts that holds the row), or a warp per row (12 values per lane up to 384 wide,
// 16 up to 512, 32 up to kWarpRowWidth) under rows=warp, or under rows=auto from warp_from_rows rows (INT_MAX:
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
  else if (width <= Warp384Rows::kMaxWidth)
    launch(Warp384Rows{});
  else if (width <= NarrowWarpRows::kMaxWidth)
    launch(NarrowWarpRows{});
  else
    launch(WarpRows{});
}

// The unsigned type of n bytes, for one vector load or store of a chunk.
template <int kBytes>
struct ChunkBits;
template <>
struct ChunkBits<16> {
  using type = uint4;
};
template <>
struct ChunkBits<8> {
  using type = uint2;
};
template <>
struct ChunkBits<4> {
  using type = uint32_t;
};
template <>
struct ChunkBits<2> {
  using type = uint16_t;
};
template <>
struct ChunkBits<1> {
  using type = uint8_t;
};

// Whether a row at p, `width` wide, is read and written in whole chunks of kVec values of T: the
// width a multiple of kVec and p aligned to a chunk (the row's first column; rows of the same
// buffer then are too). Uniform over the row's threads.
template <class L, typename T>
__device__ __forceinline__ bool chunked(const T* p, int width) {
  return width % L::kVec == 0 && reinterpret_cast<uintptr_t>(p) % (sizeof(T) * L::kVec) == 0;
}

// The row's values at p that thread `lane` holds (L::column; 0 past width) into v, every load
// issued before any value is used: a vector load per chunk where chunked(), else one per value.
template <class L, typename T>
__device__ __forceinline__ void load_row_as(float (&v)[L::kPer], const T* p, int width, int lane) {
  constexpr int V = L::kVec;
  using Bits = typename ChunkBits<sizeof(T) * V>::type;
  if (chunked<L>(p, width)) {
#pragma unroll
    for (int j = 0; j < L::kChunks; ++j) {
      const int c0 = L::column(lane, j * V);
      T e[V] = {};
      if (c0 < width) {
        const Bits bits = *reinterpret_cast<const Bits*>(p + c0);
        memcpy(e, &bits, sizeof(bits));
      }
#pragma unroll
      for (int i = 0; i < V; ++i) v[j * V + i] = c0 < width ? to_float(e[i]) : 0.0f;
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
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

// The values thread `lane` holds (L::column) to the row at p, columns below width only: a vector
// store per chunk where chunked(), else one per value; each value rounded once to T.
template <class L, typename T>
__device__ __forceinline__ void store_row_as(T* p, const float (&v)[L::kPer], int width, int lane) {
  constexpr int V = L::kVec;
  using Bits = typename ChunkBits<sizeof(T) * V>::type;
  if (chunked<L>(p, width)) {
#pragma unroll
    for (int j = 0; j < L::kChunks; ++j) {
      const int c0 = L::column(lane, j * V);
      if (c0 >= width) continue;
      T e[V];
#pragma unroll
      for (int i = 0; i < V; ++i) e[i] = from_float<T>(v[j * V + i]);
      Bits bits;
      memcpy(&bits, e, sizeof(bits));
      *reinterpret_cast<Bits*>(p + c0) = bits;
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c < width) p[c] = from_float<T>(v[k]);
  }
}
template <class L>
__device__ __forceinline__ void store_row(void* p, Elem e, size_t first, const float (&v)[L::kPer], int width, int lane) {
  if (e == Elem::kF16)
    store_row_as<L>(static_cast<__half*>(p) + first, v, width, lane);
  else
    store_row_as<L>(static_cast<float*>(p) + first, v, width, lane);
}

}  // namespace encrt::cuda
