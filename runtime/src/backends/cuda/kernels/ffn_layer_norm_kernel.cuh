// The device code of ffn_layer_norm.cu (which launches it): post-norm's whole feed-forward block
// in one kernel,
//   h = fp16(act(x · w1ᵀ + b1))                          (the up projection, [M, F])
//   y = fp16(LayerNorm(h · w2ᵀ + b2 + residual) · gamma + beta)   (the down projection, [M, H])
// fp16 operands, fp32 products, sums and statistics; h rounded to fp16 as the separate kernels
// store it (gemm_f16_mma_kernel.cuh), y rounded once.
//
// Why: at MiniLM's batch 1 each kernel of a layer is short and the layer's time is mostly their
// number (build E's H200 trace: 7 kernels a layer of 2-4 µs each). The fused linear + LayerNorm
// (gemm_f16_layer_norm_kernel.cuh) takes the LayerNorms into the linears before them; this kernel
// also takes the up projection into the down projection, so the feed-forward block is one kernel
// instead of two, and h never goes to memory.
//
// A thread-block cluster (cluster.cuh, sm_90) of C blocks owns 16 rows. Its blocks split the down
// projection's H output columns, BN each (C = ⌈H / BN⌉ ≤ 8, or 16 where the GPU runs such
// clusters: gemm_f16_layer_norm_columns), and the up projection's F columns, S each (S = ⌈F / C⌉
// rounded up to 8; MiniLM: C 8, BN 48, S 192, or C 16, BN 24, S 96). A slice goes in chunks of 64
// columns, the last one cut at the slice's end (w1's rows past it are zeros, not loaded, and
// its columns there are not kept).
// 1. Up projection: the block's 16 × S slice of h in chunks of 64 columns (4 warps of 16 columns,
//    gemm_f16_mma_kernel.cuh's fragments and permuted k order). x's 16 rows are loaded once, whole,
//    into shared memory (with the ring's first stage); w1's rows go through a ring of 12 stages of
//    32 K values (4 KB each: stage_ring.cuh, its first weights loaded before waiting for the kernel
//    ahead), the chunks one after another in the same ring; each chunk's epilogue (+ b1, the
//    activation, rounding to fp16) writes it to the block's slice in shared memory.
// 2. The cluster's barrier; every block gathers the cluster's slices through distributed shared
//    memory into its own copy of the 16 rows of h (16 × C·S values; MiniLM 48 KB).
// 3. Down projection and LayerNorm: gemm_f16_layer_norm_kernel.cuh's loop (the K of a 128-value
//    stage split over the 4 warps) with A read from that copy and w2 through a ring of 3 stages,
//    then its epilogue (the warps' partials, + b2 + residual, the statistics over the cluster).
// The residual may be x or y (in place): x is read in step 1 only, by every block of the cluster,
// before the barrier of step 2; y is written after the epilogue's barriers, each block its own
// columns of its own rows.
//
// With a projection (FfnLayerNormArgs::projection, option linear_norm=layer: the kProject build),
// the block's x is made first, so that the attention's output projection, its LayerNorm and the
// feed-forward block after it are one kernel (what follows an encoder layer's attention):
// 0. gemm_f16_layer_norm_kernel.cuh's linear + LayerNorm over the same cluster and columns (BN
//    each, the same ring, in memory that steps 1 and 2 use later: Plan), its epilogue storing x
//    (the projection's output, which the graph may read elsewhere) and keeping the block's 16 × BN
//    tile of it in shared memory; after that epilogue's last cluster barrier every block gathers
//    the cluster's tiles into its x rows through distributed shared memory, instead of loading x
//    in step 1.
// The down projection's residual is then x as stored: the epilogue reads each value with the
// thread that stored it (the same tile layout and columns), so no barrier is needed for it. A
// kept tile lies where the gathered h goes, which a block writes only after the cluster's barrier
// of step 2, which every peer reaches after its gather: a peer may gather from it while this block
// goes on with step 1.
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

namespace encrt::cuda::ffn_norm {

using gemm_f16_norm::kBM;
using gemm_f16_norm::kThreads;
constexpr int kChunk = 64;         // up-projection columns a chunk (4 warps × 16)
constexpr int kUpK = 32;           // K values of an up-projection stage
constexpr int kUpStages = 12;
constexpr size_t kUpStageBytes = static_cast<size_t>(kChunk) * kUpK * 2;  // w1's rows

// The shape of the kernel's work and its dynamic shared memory, made on the host (plan_of) and
// passed to the kernel: the stages (the up projection's, then the down projection's, then the
// partial tiles: one region), x's rows [16][ld_x], the block's slice of h [16][S], the gathered h
// [16][ld_h], the statistics. With a projection, step 0 uses memory that nothing holds before
// step 1: its ring (3 stages of 16 + BN rows) from x's rows on, across the slice and the gathered
// h (or, where those are too small, in the stages grown to it), the epilogue's partial tiles in
// the stages, and the kept tile of x [16][BN] at the gathered h, which is written only after the
// cluster's barrier of step 2, when every peer has gathered from it. So the projection costs no
// shared memory where its ring fits there (MiniLM's: 60 KB in 68; BERT-base's: 105 KB in 134).
struct Plan {
  int cluster = 0, bn = 0, slice = 0;  // C, BN, S
  int h_columns = 0;                   // W = C·S rounded up to 128 (the down projection's stages)
  int ld_h = 0;                        // W + 32: rows 64 bytes apart mod 128 (no bank conflict)
  int ld_x = 0;                        // x's rows in shared memory: H rounded up to 64, + 32 (the same)
  size_t stages_at = 0, x_at = 0, slice_at = 0, gathered_at = 0, stats_at = 0, bytes = 0;
  size_t projection_at = 0, keep_at = 0;  // with a projection: its ring, and the kept tile
};
inline Plan plan_of(int H, int F, int max_cluster = 8, bool projection = false) {
  Plan p;
  p.bn = gemm_f16_layer_norm_columns(H, max_cluster);
  if (p.bn == 0 || F <= 0) return p;
  p.cluster = (H + p.bn - 1) / p.bn;
  p.slice = ((F + p.cluster - 1) / p.cluster + 7) / 8 * 8;
  p.h_columns = (p.cluster * p.slice + gemm_f16_norm::kBlockK - 1) / gemm_f16_norm::kBlockK * gemm_f16_norm::kBlockK;
  p.ld_h = p.h_columns + 32;
  const size_t down = static_cast<size_t>(gemm_f16_norm::kStages) * static_cast<size_t>(p.bn) * gemm_f16_norm::kLd * 2;
  const size_t partials = static_cast<size_t>(gemm_f16_norm::kWarps) * kBM * static_cast<size_t>(p.bn) * 4;
  size_t stages = kUpStages * kUpStageBytes;
  if (down > stages) stages = down;
  if (partials > stages) stages = partials;
  p.ld_x = (H + 63) / 64 * 64 + 32;
  const size_t rows = static_cast<size_t>(kBM) * (static_cast<size_t>(p.ld_x) + static_cast<size_t>(p.slice) +
                                                   static_cast<size_t>(p.ld_h)) * 2;  // x, slice, gathered h
  const size_t projecting = static_cast<size_t>(gemm_f16_norm::kStages) * static_cast<size_t>(kBM + p.bn) * gemm_f16_norm::kLd * 2;
  const bool grown = projection && projecting > rows;
  if (grown && projecting > stages) stages = projecting;
  p.stages_at = 0;
  p.x_at = stages;
  p.slice_at = p.x_at + static_cast<size_t>(kBM) * static_cast<size_t>(p.ld_x) * 2;
  p.gathered_at = p.slice_at + static_cast<size_t>(kBM) * static_cast<size_t>(p.slice) * 2;
  p.stats_at = p.gathered_at + static_cast<size_t>(kBM) * static_cast<size_t>(p.ld_h) * 2;
  p.bytes = p.stats_at + 2 * kBM * sizeof(float);
  p.projection_at = grown ? p.stages_at : p.x_at;
  p.keep_at = p.gathered_at;
  return p;
}

// The up projection's value of column f before rounding: + b1 (when there is one), then the
// activation (gemm_f16_mma_kernel.cuh's formulas).
__device__ __forceinline__ float up_value(float v, const FfnLayerNormArgs& a, int f) {
  if (a.b1) v += __half2float(static_cast<const __half*>(a.b1)[f]);
  if (a.activation == 1) return v != v ? v : v > 0.0f ? v : 0.0f;
  if (a.activation == 2) return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  return v;
}

// grid (C, ⌈M / 16⌉), clusters of C blocks along x; BN the down projection's columns a block;
// kProject: the build with the projection (step 0), for a plan_of(..., projection = true).
template <int BN, bool kProject = false>
__global__ void __launch_bounds__(kThreads) ffn_layer_norm_kernel(FfnLayerNormArgs a, Plan p) {
  constexpr int NT = BN / 8;
  static_assert(BN % 8 == 0 && NT >= 1, "block columns");
  using gemm_f16_norm::kBlockK;
  using gemm_f16_norm::kLd;
  using gemm_f16_norm::kWarpK;
  using mma_gemm_f16::load_rows_async;
  using mma_gemm_f16::words_at;
#ifdef ENCRT_CUDA_HOST_EMULATION
  unsigned char* smem = encrt::emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
  __half* slice = reinterpret_cast<__half*>(smem + p.slice_at);         // [16][S]
  __half* gathered = reinterpret_cast<__half*>(smem + p.gathered_at);   // [16][ld_h]
  float* stats = reinterpret_cast<float*>(smem + p.stats_at);

  const int m0 = static_cast<int>(blockIdx.y) * kBM;
  const int rank = cluster_rank();
  const int f0 = rank * p.slice;  // the block's columns of h
  const int n0 = rank * BN;       // and of y
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
  const __half* x = static_cast<const __half*>(a.x);
  const __half* w1 = static_cast<const __half*>(a.w1);
  const __half* w2 = static_cast<const __half*>(a.w2);

  // 0. With a projection: x = LayerNorm(in · wᵀ + bias + residual) over the cluster, stored, and
  // this block's x rows gathered from the cluster's kept tiles (zeros past M, and from H to the
  // up projection's last K step).
  if constexpr (kProject) {
    const FfnProjection& pr = a.projection;
    __half* keep = reinterpret_cast<__half*>(smem + p.keep_at);  // [16][BN]
    {
      float acc0[NT][4];
      gemm_f16_norm::linear_tile<BN>(acc0, smem + p.projection_at, static_cast<const __half*>(pr.in),
                                     static_cast<const __half*>(pr.w), a.M, a.H, a.H, m0, n0);
      gemm_f16_norm::layer_norm_epilogue<BN>(
          acc0, reinterpret_cast<float*>(smem + p.stages_at), stats,
          gemm_f16_norm::NormEpilogue{a.M, a.H, pr.bias, pr.residual, pr.gamma, pr.beta, pr.eps, pr.out}, m0, n0,
          p.cluster, keep);
    }
    __half* x_s = reinterpret_cast<__half*>(smem + p.x_at);  // [16][ld_x]
    const int ends = (a.H + kUpK - 1) / kUpK * kUpK / 8;  // 16-byte chunks of a row, to the last K step's end
    for (int e = static_cast<int>(threadIdx.x); e < kBM * ends; e += kThreads) {
      const int r = e / ends, c = (e % ends) * 8;
      *reinterpret_cast<uint4*>(x_s + r * p.ld_x + c) =
          c < a.H ? *reinterpret_cast<const uint4*>(cluster_peer(keep, c / BN) + r * BN + c % BN) : make_uint4(0u, 0u, 0u, 0u);
    }
    __syncthreads();
  }

  // 1. The up projection, chunk after chunk of 64 columns, one ring of (chunk, k) steps.
  {
    __half* up_b = reinterpret_cast<__half*>(smem + p.stages_at);  // [kUpStages][64][32]
    __half* x_s = reinterpret_cast<__half*>(smem + p.x_at);        // [16][ld_x]
    const int k_steps = (a.H + kUpK - 1) / kUpK;
    const int f_end = f0 + p.slice < a.F ? f0 + p.slice : a.F;  // w1's rows of this block end here
    float acc[2][4] = {};
    int step = 0;  // the step the warps multiply next
    run_stage_ring<kUpStages>(
        (p.slice + kChunk - 1) / kChunk * k_steps,
        [&](int slot, int s) {
          load_rows_async<kChunk, kUpK, kUpK, kThreads>(up_b + slot * kChunk * kUpK, w1, f_end, a.H,
                                                        f0 + (s / k_steps) * kChunk, (s % k_steps) * kUpK);
        },
        [&](int, int s) {
          if (kProject || s != 0) return;  // x's rows, whole, with the first stage; zeros past M and past H
          const int chunks = k_steps * kUpK / 8;  // 16-byte chunks of a row, to the last step's end
          for (int e = static_cast<int>(threadIdx.x); e < kBM * chunks; e += kThreads) {
            const int r = e / chunks, c = (e % chunks) * 8;
            __half* dst = x_s + r * p.ld_x + c;
            if (m0 + r < a.M && c < a.H)
              copy_async<16>(dst, x + static_cast<size_t>(m0 + r) * static_cast<size_t>(a.H) + static_cast<size_t>(c));
            else
              *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
          }
        },
        [&](int slot) {
          const __half* sb = up_b + slot * kChunk * kUpK;
          const int c = 8 * t;
          const __half* sa = x_s + (step % k_steps) * kUpK;
          const uint4 lo = words_at(sa + g * p.ld_x + c), hi = words_at(sa + (g + 8) * p.ld_x + c);
          const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
            const uint4 bf = words_at(sb + (warp * 16 + nt * 8 + g) * kUpK + c);
            mma_m16n8k16<__half>(acc[nt], a0, bf.x, bf.y);
            mma_m16n8k16<__half>(acc[nt], a1, bf.z, bf.w);
          }
          if (step % k_steps == k_steps - 1) {  // the chunk's last step: its columns into the slice
            const int chunk = step / k_steps;
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                const int col = chunk * kChunk + warp * 16 + nt * 8 + 2 * t + (i & 1), f = f0 + col;
                // Columns past F: w1's rows there are zeros, so 0 (no bias: act(0) = 0). The last
                // chunk may reach past the slice: those columns are the next block's.
                const float v = f < a.F ? up_value(acc[nt][i], a, f) : 0.0f;
                if (col < p.slice) slice[(g + 8 * (i >> 1)) * p.slice + col] = __float2half_rn(v);
                acc[nt][i] = 0.0f;
              }
          }
          ++step;
        });
  }

  // 2. Every block's slice written (the cluster's barrier orders shared memory too), then the
  // cluster's 16 rows of h into this block's copy, 16 bytes a load; columns from C·S to W zeros.
  copy_wait<0>();
  __syncthreads();
  cluster_sync();
  {
    const int chunks = p.cluster * p.slice / 8;  // 16-byte chunks of a row
    for (int e = static_cast<int>(threadIdx.x); e < kBM * chunks; e += kThreads) {
      const int r = e / chunks, col = (e % chunks) * 8;
      const __half* from = cluster_peer(slice, col / p.slice) + r * p.slice + col % p.slice;
      *reinterpret_cast<uint4*>(gathered + r * p.ld_h + col) = *reinterpret_cast<const uint4*>(from);
    }
    const int tail = (p.h_columns - p.cluster * p.slice) / 8;
    for (int e = static_cast<int>(threadIdx.x); e < kBM * tail; e += kThreads) {
      const int r = e / tail, col = p.cluster * p.slice + (e % tail) * 8;
      *reinterpret_cast<uint4*>(gathered + r * p.ld_h + col) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
  __syncthreads();

  // 3. The down projection (K = F, A from the gathered h), then the LayerNorm over the cluster.
  __half* down_b = reinterpret_cast<__half*>(smem + p.stages_at);  // [kStages][BN][kLd]
  float acc[NT][4];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
  int step = 0;
  run_stage_ring<gemm_f16_norm::kStages>(
      (a.F + kBlockK - 1) / kBlockK,
      [&](int slot, int s) { load_rows_async<BN, kBlockK, kLd, kThreads>(down_b + slot * BN * kLd, w2, a.H, a.F, n0, s * kBlockK); },
      [](int, int) {},  // A is in shared memory already
      [&](int slot) {
        const __half* sb = down_b + slot * BN * kLd;
        const int c = step * kBlockK + warp * kWarpK + 8 * t;
        const uint4 lo = words_at(gathered + g * p.ld_h + c), hi = words_at(gathered + (g + 8) * p.ld_h + c);
        const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
        const int cb = warp * kWarpK + 8 * t;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint4 bf = words_at(sb + (nt * 8 + g) * kLd + cb);
          mma_m16n8k16<__half>(acc[nt], a0, bf.x, bf.y);
          mma_m16n8k16<__half>(acc[nt], a1, bf.z, bf.w);
        }
        ++step;
      });
  gemm_f16_norm::layer_norm_epilogue<BN>(acc, reinterpret_cast<float*>(smem + p.stages_at), stats,
                                         gemm_f16_norm::NormEpilogue{a.M, a.H, a.b2, a.residual, a.gamma, a.beta, a.eps, a.y},
                                         m0, n0, p.cluster);
}

}  // namespace encrt::cuda::ffn_norm
