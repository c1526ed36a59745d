// The device code of gemm_f16_layer_norm.cu (which launches it): post-norm's "linear with a
// residual, then LayerNorm" in one kernel,
//   y[m, :] = fp16(LayerNorm(x[m, :] · wᵀ + bias + residual[m, :]) · gamma + beta),
// fp16 operands, fp32 products, sums, statistics and epilogue, one rounding to fp16 at the store.
//
// Why: at MiniLM's batch 1 every kernel of a layer is short and the layer's time is mostly their
// number (build E's H200 trace: 7 kernels a layer of 2-4 µs each). Two of the seven are the
// LayerNorms after the attention's output projection and after the FFN's down projection; a
// LayerNorm needs the whole row, which one block of a GEMM does not have. Here the row's columns
// are spread over a thread-block cluster (cluster.cuh: sm_90 and newer), one block per BN columns
// and 16 rows, up to 8 blocks (N ≤ 8·BN; 16 where the GPU runs such clusters), and the blocks add
// up the rows' statistics through distributed shared memory: the LayerNorm costs two cluster
// barriers instead of a kernel, and the linear's output never goes to memory before it is
// normalized.
//
// A block: 4 warps on one 16 × BN tile of the linear, the K of a stage split over the warps (each
// warp takes 32 of the stage's 128 values: a warp's chain of mma.sync is a quarter of K, as in a
// split-K GEMM, without a second kernel); K through shared memory in a ring of 3 cp.async stages
// (stage_ring.cuh: the first stages of weights are loaded before waiting for the kernel ahead).
// Fragments and the permuted k order inside a warp's 32 values are gemm_f16_mma_kernel.cuh's (that
// file explains them): lane t reads 16 bytes at 64·warp + 16t of a row. A shared row is 128 + 32
// values (320 bytes), so that the two rows a quarter warp reads fall in disjoint banks.
//
// The epilogue: the warps' partial tiles are added in shared memory (in warp order: the same sums
// on every run), then each row's 8 threads hold BN/8 of its columns (column q + 8j for thread q),
// add the bias and then the residual (the reference's order), and compute the statistics two-pass
// as layer_norm_kernel.cuh does: the row's sum over the block's columns goes to shared memory,
// the cluster's barrier, every block adds the cluster's partial sums in rank order (each block the
// same total, so the blocks agree on the mean), the same for Σ(v − mean)², then y = (v − mean) ·
// 1/sqrt(var + eps) · gamma + beta. A last barrier keeps every block's shared memory alive until
// its peers have read it. The residual may be y itself (in place): a block reads its own columns
// of the residual before the first barrier and writes them after the second.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: the blocks of a
// cluster run together there, launch_clusters).
#pragma once

#include <cstdint>
#include <type_traits>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/cluster.cuh"
#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/gemm_f16_mma_kernel.cuh"
#include "backends/cuda/kernels/mma_f16.cuh"
#include "backends/cuda/kernels/stage_ring.cuh"

namespace encrt::cuda::gemm_f16_norm {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBM = 16;                   // rows of a block: one m16 fragment
constexpr int kWarpK = 32;                // K values of a stage per warp (two k16 steps)
constexpr int kBlockK = kWarps * kWarpK;  // 128 K values a stage
constexpr int kLd = kBlockK + 32;         // 320-byte shared rows (see above)
constexpr int kStages = 3;
constexpr int kRowThreads = 8;  // threads of a row in the epilogue (kBM · 8 = kThreads)
static_assert(kBM * kRowThreads == kThreads, "epilogue layout");

// Dynamic shared memory: the stages (x's 16 rows, then w's BN rows, of each), reused by the
// epilogue for the warps' partial tiles; then the rows' partial statistics.
template <int BN>
struct Layout {
  static constexpr size_t kStageA = static_cast<size_t>(kBM) * kLd * 2;
  static constexpr size_t kStageB = static_cast<size_t>(BN) * kLd * 2;
  static constexpr size_t kStagesBytes = kStages * (kStageA + kStageB);
  static constexpr size_t kPartials = static_cast<size_t>(kWarps) * kBM * BN * 4;
  static constexpr size_t kStats = kStagesBytes > kPartials ? kStagesBytes : kPartials;
  static constexpr size_t kBytes = kStats + 2 * kBM * sizeof(float);  // sums, then squares
};

// The row sum of v over the row's 8 threads (8 consecutive lanes of one warp).
__device__ __forceinline__ float row_sum(float v) {
#pragma unroll
  for (int o = kRowThreads / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Σ over the cluster's blocks of their partial[row] (rank order), after a cluster barrier.
__device__ __forceinline__ float cluster_total(float* partial, int row, int cluster) {
  cluster_sync();
  float total = 0.0f;
  for (int rank = 0; rank < cluster; ++rank) total += cluster_peer(partial, rank)[row];
  return total;
}

// What the epilogue adds and where it writes: a GemmF16LayerNormArgs's, or the FFN kernel's second
// linear's (ffn_layer_norm_kernel.cuh).
struct NormEpilogue {
  int M = 0, N = 0;
  const float* bias = nullptr;
  const void* residual = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 0.0f;
  void* y = nullptr;
};

// The block's 16 × BN tile from the warps' accumulators (each warp's over its quarter of K:
// acc[nt][2h + e] is row g + 8h, column nt·8 + 2t + e) to y: + bias + residual, LayerNorm over the
// cluster's columns, · gamma + beta (the design above). partials: kWarps · 16 · BN floats of shared
// memory free once the K loop is done (its stages); stats: 2 · 16 floats of shared memory that
// nothing else uses (the rows' partial sums, then squares, which the cluster's peers read).
// keep (optional): 16 · BN fp16 of shared memory that receives the tile as stored to y, zeros
// outside M × N, visible to the cluster's peers when this returns (the fused layer tail,
// ffn_layer_norm_kernel.cuh, gathers its rows from there).
template <int BN>
__device__ __forceinline__ void layer_norm_epilogue(const float (&acc)[BN / 8][4], float* partials, float* stats,
                                                    const NormEpilogue& a, int m0, int n0, int cluster,
                                                    __half* keep = nullptr) {
  constexpr int NT = BN / 8;
  constexpr int kPer = BN / kRowThreads;  // columns of a thread in the epilogue
  float* sums = stats;
  float* squares = stats + kBM;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
  // The warps' partial tiles into shared memory (the stages are free once every copy has landed
  // and every warp is past its last stage): acc[nt][2h + e] is row g + 8h, column nt·8 + 2t + e.
  copy_wait<0>();
  __syncthreads();
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      partials[(warp * kBM + g + 8 * (i >> 1)) * BN + nt * 8 + 2 * t + (i & 1)] = acc[nt][i];
  __syncthreads();

  // The epilogue's layout: row r of the tile, columns q + 8j.
  const int r = static_cast<int>(threadIdx.x) / kRowThreads, q = static_cast<int>(threadIdx.x) % kRowThreads;
  const int m = m0 + r;
  const bool row_in = m < a.M;
  const size_t row = static_cast<size_t>(row_in ? m : 0) * static_cast<size_t>(a.N);
  const __half* residual = static_cast<const __half*>(a.residual);
  float v[kPer];
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = q + kRowThreads * j, n = n0 + c;
    v[j] = 0.0f;
    if (!row_in || n >= a.N) continue;
    float s = partials[r * BN + c];
#pragma unroll
    for (int k = 1; k < kWarps; ++k) s += partials[(k * kBM + r) * BN + c];
    if (a.bias) s += a.bias[n];
    if (residual) s += __half2float(residual[row + n]);
    v[j] = s;
    sum += s;
  }
  sum = row_sum(sum);
  if (q == 0) sums[r] = sum;
  const float mean = cluster_total(sums, r, cluster) / static_cast<float>(a.N);
  float sq = 0.0f;
#pragma unroll
  for (int j = 0; j < kPer; ++j)
    if (row_in && n0 + q + kRowThreads * j < a.N) sq += (v[j] - mean) * (v[j] - mean);
  sq = row_sum(sq);
  if (q == 0) squares[r] = sq;
  const float var = cluster_total(squares, r, cluster) / static_cast<float>(a.N);
  const float inv = 1.0f / sqrtf(var + a.eps);
  __half* y = static_cast<__half*>(a.y);
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int c = q + kRowThreads * j, n = n0 + c;
    const bool in = row_in && n < a.N;
    const __half out = __float2half_rn(in ? (v[j] - mean) * inv * a.gamma[n] + a.beta[n] : 0.0f);
    if (in) y[row + n] = out;
    if (keep) keep[r * BN + c] = out;
  }
  cluster_sync();  // no block leaves while a peer may still read its statistics (or its keep)
}

// The block's 16 × BN tile of x · wᵀ (x [M, K], w [N, K], fp16 row-major, 16-byte aligned) into
// the warps' accumulators, each warp over its quarter of every stage's K (the design above): the
// ring of kStages cp.async stages at smem (Layout<BN>::kStagesBytes), which holds the last
// stages' copies in flight when this returns (the epilogue waits for them).
template <int BN>
__device__ __forceinline__ void linear_tile(float (&acc)[BN / 8][4], unsigned char* smem, const __half* x, const __half* w,
                                            int M, int N, int K, int m0, int n0) {
  constexpr int NT = BN / 8;  // n8 tiles of a warp (each warp covers every column)
  using L = Layout<BN>;
  __half* stage_a = reinterpret_cast<__half*>(smem);
  __half* stage_b = reinterpret_cast<__half*>(smem + kStages * L::kStageA);
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
  run_stage_ring<kStages>(
      (K + kBlockK - 1) / kBlockK,
      [&](int slot, int step) {
        mma_gemm_f16::load_rows_async<BN, kBlockK, kLd, kThreads>(stage_b + slot * (L::kStageB / 2), w, N, K, n0,
                                                                  step * kBlockK);
      },
      [&](int slot, int step) {
        mma_gemm_f16::load_rows_async<kBM, kBlockK, kLd, kThreads>(stage_a + slot * (L::kStageA / 2), x, M, K, m0,
                                                                   step * kBlockK);
      },
      [&](int slot) {
        const __half* sa = stage_a + slot * (L::kStageA / 2);
        const __half* sb = stage_b + slot * (L::kStageB / 2);
        const int c = warp * kWarpK + 8 * t;
        const uint4 lo = mma_gemm_f16::words_at(sa + g * kLd + c), hi = mma_gemm_f16::words_at(sa + (g + 8) * kLd + c);
        const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint4 bf = mma_gemm_f16::words_at(sb + (nt * 8 + g) * kLd + c);
          mma_m16n8k16<__half>(acc[nt], a0, bf.x, bf.y);
          mma_m16n8k16<__half>(acc[nt], a1, bf.z, bf.w);
        }
      });
}

// grid (cluster, ⌈M / 16⌉), clusters of `cluster` blocks along x (block x covers columns
// x·BN .. x·BN + BN − 1; cluster = ⌈N / BN⌉ ≤ 8, or 16: GemmF16LayerNormArgs::max_cluster).
template <int BN>
__global__ void __launch_bounds__(kThreads) gemm_f16_layer_norm_kernel(GemmF16LayerNormArgs a, int cluster) {
  static_assert(BN % 8 == 0 && BN >= 8, "block columns");
#ifdef ENCRT_CUDA_HOST_EMULATION
  unsigned char* smem = encrt::emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
  const int m0 = static_cast<int>(blockIdx.y) * kBM;
  const int n0 = cluster_rank() * BN;  // grid.x is the cluster: blockIdx.x = rank
  float acc[BN / 8][4];
  linear_tile<BN>(acc, smem, static_cast<const __half*>(a.x), static_cast<const __half*>(a.w), a.M, a.N, a.K, m0, n0);
  layer_norm_epilogue<BN>(acc, reinterpret_cast<float*>(smem), reinterpret_cast<float*>(smem + Layout<BN>::kStats),
                          NormEpilogue{a.M, a.N, a.bias, a.residual, a.gamma, a.beta, a.eps, a.y}, m0, n0, cluster);
}

// The launchers' (gemm_f16_layer_norm.cu, ffn_layer_norm.cu) choice of the kernel's instance for
// BN columns a block (gemm_f16_layer_norm_columns): f(std::integral_constant<int, BN>).
template <class F>
cudaError_t with_block_columns(int bn, const F& f) {
  switch (bn) {
    case 24: return f(std::integral_constant<int, 24>{});
    case 32: return f(std::integral_constant<int, 32>{});
    case 48: return f(std::integral_constant<int, 48>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 96: return f(std::integral_constant<int, 96>{});
    case 128: return f(std::integral_constant<int, 128>{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace encrt::cuda::gemm_f16_norm
