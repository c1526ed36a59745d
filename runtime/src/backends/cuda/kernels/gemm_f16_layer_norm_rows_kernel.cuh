// The fused linear + LayerNorm kernel for many rows (gemm_f16_layer_norm.cu launches it; the
// 16-row build and the shared design: gemm_f16_layer_norm_kernel.cuh),
//   y[m, :] = fp16(LayerNorm(x[m, :] · wᵀ + bias + residual[m, :]) · gamma + beta),
// fp16 operands, fp32 products, sums, statistics and epilogue, one rounding to fp16 at the store.
//
// Why a second build: the 16-row build gives each block 16 rows and splits K over its 4 warps,
// which fills a GPU at batch 1 (MiniLM: 8 row tiles × 8 blocks) but makes every block stream its
// BN columns of the weights for 16 rows only. At MiniLM's batch 32 (4096 rows) the FFN's down
// projection (1.2 MB of weights) would then be read 256 times from L2, about 300 MB a call, where
// cuBLASLt's 128-row tiles read it 32 times; so the backend kept cuBLASLt and a LayerNorm kernel
// above 256 rows (build E's H200 trace at batch 32: the 12 LayerNorms alone 6.2 µs each). Here a
// block takes 64 rows, one m16 tile per warp, each warp over the whole K of every stage: a stage's
// weights in shared memory serve 64 rows (4× fewer weight reads than the 16-row build), and there is
// no split of K to add up, so the epilogue works on the accumulators in registers.
//
// A block: 4 warps, warp w on rows 16w .. 16w + 15 of the block's 64 and on all its BN columns; K
// through shared memory 128 values a stage in a ring of 3 cp.async stages (stage_ring.cuh: the first
// stages of weights loaded before waiting for the kernel ahead), rows of 128 + 32 values (320
// bytes) as in the 16-row build. Lane t of a warp reads, for each 32-value quarter kq of a stage,
// the 16 bytes at 64·kq + 16t of a row (gemm_f16_mma_kernel.cuh's permuted k order: two k16 steps
// a load); the two rows a quarter warp reads are 320 bytes apart, in disjoint banks.
//
// The epilogue, in registers: acc[nt][2h + e] is row 16w + g + 8h, column nt·8 + 2t + e of the
// block's tile (lane 4g + t), so a row's BN columns are the 4 lanes of a quad: + bias, then the
// residual (the reference's order), the row's sum over the quad (two shuffles), the quads' sums to
// shared memory, the cluster's barrier, every block adds the cluster's partial sums in rank order
// (each block the same total, so the blocks agree on the mean); the same for Σ(v − mean)², then
// y = (v − mean) · 1/sqrt(var + eps) · gamma + beta, column pairs stored as one 4-byte access where
// N is even and y (and the residual) 4-aligned. A last barrier keeps every block's statistics alive
// until its peers have read them. The residual may be y itself (in place): a block reads its own
// columns of the residual before the first barrier and writes them after the second.
//
// The same code with 8 warps takes 128 rows a block (option norm_rows=128): each stage's weights
// then serve 128 rows, for one block a multiprocessor.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: the blocks of a
// cluster run together there, launch_clusters).
#pragma once

#include <cstdint>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/cluster.cuh"
#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/gemm_f16_layer_norm_kernel.cuh"
#include "backends/cuda/kernels/gemm_f16_mma_kernel.cuh"
#include "backends/cuda/kernels/mma_f16.cuh"
#include "backends/cuda/kernels/stage_ring.cuh"

namespace encrt::cuda::gemm_f16_norm_rows {

using gemm_f16_norm::kBlockK;  // 128 K values a stage
using gemm_f16_norm::kLd;      // 320-byte shared rows
using gemm_f16_norm::kStages;
// A block: kWarps warps of 16 rows each: 4 (64 rows, the backend's choice for large batches,
// gemm_f16_layer_norm_rows) or 8 (128 rows: half the weight reads again, for one block a
// multiprocessor; option norm_rows=128, at most 96 columns a block so that its 3 stages fit).
template <int kWarps>
constexpr int kBMOf = kWarps * 16;
constexpr int kBM = kBMOf<4>;
constexpr int kMaxColumns8 = 96;  // the widest block of 8 warps (3 stages of 128 + 96 rows: 210 KB)

// Dynamic shared memory: the stages (x's BM rows, then w's BN rows, of each); then the rows'
// partial statistics (sums, then squares).
template <int BN, int kWarps = 4>
struct Layout {
  static constexpr int kRows = kBMOf<kWarps>;
  static constexpr size_t kStageA = static_cast<size_t>(kRows) * kLd * 2;
  static constexpr size_t kStageB = static_cast<size_t>(BN) * kLd * 2;
  static constexpr size_t kStats = kStages * (kStageA + kStageB);
  static constexpr size_t kBytes = kStats + 2 * kRows * sizeof(float);
};

// Σ over the cluster's blocks of partial[row] for this thread's two rows (rank order), after one
// cluster barrier.
__device__ __forceinline__ void cluster_totals(float* partial, const int (&row)[2], int cluster, float (&total)[2]) {
  cluster_sync();
  total[0] = total[1] = 0.0f;
  for (int rank = 0; rank < cluster; ++rank) {
    const float* peer = cluster_peer(partial, rank);
    total[0] += peer[row[0]];
    total[1] += peer[row[1]];
  }
}

// The sum of v over a quad (the 4 lanes of a row in the mma layout).
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 2);
  return v;
}

// grid (cluster, ⌈M / BM⌉), clusters of `cluster` blocks along x (block x covers columns
// x·BN .. x·BN + BN − 1; cluster = ⌈N / BN⌉ ≤ 4, 8 or 16: GemmF16LayerNormArgs::max_cluster),
// 32 · kWarps threads a block. pairs: N even, y and the residual 4-aligned (column pairs as one
// access). __launch_bounds__(threads, 1): the shared memory already limits a multiprocessor to two
// blocks (one from 64 columns, or of 8 warps), so the compiler may take up to 255 registers (at 128
// columns the default budget of 128 spilled).
template <int BN, int kWarps = 4>
__global__ void __launch_bounds__(kWarps * 32, 1)
    gemm_f16_layer_norm_rows_kernel(GemmF16LayerNormArgs a, int cluster, bool pairs) {
  static_assert(BN % 8 == 0 && BN >= 8, "block columns");
  static_assert(kWarps == 4 || (kWarps == 8 && BN <= kMaxColumns8), "a block of 4 warps, or of 8 up to 96 columns");
  constexpr int NT = BN / 8;  // n8 tiles of a warp (each warp covers every column)
  constexpr int kThreads = kWarps * 32;
  constexpr int kRows = kBMOf<kWarps>;  // BM
  using L = Layout<BN, kWarps>;
#ifdef ENCRT_CUDA_HOST_EMULATION
  unsigned char* smem = encrt::emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
  __half* stage_a = reinterpret_cast<__half*>(smem);
  __half* stage_b = reinterpret_cast<__half*>(smem + kStages * L::kStageA);
  float* sums = reinterpret_cast<float*>(smem + L::kStats);
  float* squares = sums + kRows;
  const int m0 = static_cast<int>(blockIdx.y) * kRows;
  const int n0 = cluster_rank() * BN;  // grid.x is the cluster: blockIdx.x = rank
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
  const __half* x = static_cast<const __half*>(a.x);
  const __half* w = static_cast<const __half*>(a.w);

  float acc[NT][4];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
  run_stage_ring<kStages>(
      (a.K + kBlockK - 1) / kBlockK,
      [&](int slot, int step) {
        mma_gemm_f16::load_rows_async<BN, kBlockK, kLd, kThreads>(stage_b + slot * (L::kStageB / 2), w, a.N, a.K, n0,
                                                                  step * kBlockK);
      },
      [&](int slot, int step) {
        mma_gemm_f16::load_rows_async<kRows, kBlockK, kLd, kThreads>(stage_a + slot * (L::kStageA / 2), x, a.M, a.K, m0,
                                                                   step * kBlockK);
      },
      [&](int slot) {
        const __half* sa = stage_a + slot * (L::kStageA / 2) + (warp * 16 + g) * kLd;
        const __half* sb = stage_b + slot * (L::kStageB / 2) + g * kLd;
#pragma unroll
        for (int kq = 0; kq < kBlockK / 32; ++kq) {
          const int c = kq * 32 + 8 * t;
          const uint4 lo = mma_gemm_f16::words_at(sa + c), hi = mma_gemm_f16::words_at(sa + 8 * kLd + c);
          const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const uint4 bf = mma_gemm_f16::words_at(sb + nt * 8 * kLd + c);
            mma_m16n8k16<__half>(acc[nt], a0, bf.x, bf.y);
            mma_m16n8k16<__half>(acc[nt], a1, bf.z, bf.w);
          }
        }
      });
  copy_wait<0>();  // the ring's last (empty) groups: nothing is left in flight when the block ends

  // The epilogue (the design above): this thread's rows r[h] = 16w + g + 8h of the tile.
  const int r[2] = {warp * 16 + g, warp * 16 + g + 8};
  const __half* residual = static_cast<const __half*>(a.residual);
  float sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + r[h];
    const bool row_in = m < a.M;
    const size_t row = static_cast<size_t>(row_in ? m : 0) * static_cast<size_t>(a.N);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int n = n0 + nt * 8 + 2 * t;
      float v0 = 0.0f, v1 = 0.0f;
      if (row_in && n < a.N) {
        const bool second = n + 1 < a.N;
        v0 = acc[nt][2 * h];
        v1 = second ? acc[nt][2 * h + 1] : 0.0f;
        if (a.bias) {
          v0 += a.bias[n];
          if (second) v1 += a.bias[n + 1];
        }
        if (residual) {
          if (pairs) {  // n + 1 < N: N is even and n is
            const __half2 rv = *reinterpret_cast<const __half2*>(residual + row + n);
            v0 += __half2float(rv.x);
            v1 += __half2float(rv.y);
          } else {
            v0 += __half2float(residual[row + n]);
            if (second) v1 += __half2float(residual[row + n + 1]);
          }
        }
      }
      acc[nt][2 * h] = v0;  // v from here on: zeros outside M × N
      acc[nt][2 * h + 1] = v1;
      sum[h] += v0 + v1;
    }
  }
  for (int h = 0; h < 2; ++h) {
    sum[h] = quad_sum(sum[h]);
    if (t == 0) sums[r[h]] = sum[h];
  }
  float mean[2];
  cluster_totals(sums, r, cluster, mean);
  float sq[2] = {0.0f, 0.0f};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mean[h] /= static_cast<float>(a.N);
    const bool row_in = m0 + r[h] < a.M;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int n = n0 + nt * 8 + 2 * t + e;
        const float d = acc[nt][2 * h + e] - mean[h];
        if (row_in && n < a.N) sq[h] += d * d;
      }
  }
  for (int h = 0; h < 2; ++h) {
    sq[h] = quad_sum(sq[h]);
    if (t == 0) squares[r[h]] = sq[h];
  }
  float var[2];
  cluster_totals(squares, r, cluster, var);
  __half* y = static_cast<__half*>(a.y);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int m = m0 + r[h];
    if (m >= a.M) continue;
    const float inv = 1.0f / sqrtf(var[h] / static_cast<float>(a.N) + a.eps);
    const size_t row = static_cast<size_t>(m) * static_cast<size_t>(a.N);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int n = n0 + nt * 8 + 2 * t;
      if (n >= a.N) continue;
      const float y0 = (acc[nt][2 * h] - mean[h]) * inv * a.gamma[n] + a.beta[n];
      if (pairs) {
        const float y1 = (acc[nt][2 * h + 1] - mean[h]) * inv * a.gamma[n + 1] + a.beta[n + 1];
        *reinterpret_cast<__half2*>(y + row + n) = __floats2half2_rn(y0, y1);
      } else {
        y[row + n] = __float2half_rn(y0);
        if (n + 1 < a.N) y[row + n + 1] = __float2half_rn((acc[nt][2 * h + 1] - mean[h]) * inv * a.gamma[n + 1] + a.beta[n + 1]);
      }
    }
  }
  cluster_sync();  // no block leaves while a peer may still read its statistics
}

}  // namespace encrt::cuda::gemm_f16_norm_rows
