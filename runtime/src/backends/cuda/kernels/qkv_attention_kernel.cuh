// The device code of qkv_attention.cu (which launches it): an encoder layer's QKV projection and
// its multi-head attention in one kernel, for short sequences (fp16, padded rows, seq ≤ 128),
//   q, k, v = fp16(x · w_{q,k,v}ᵀ + b)  (head h's D columns of each),
//   out[i, h·D + d] = Σ_j softmax_j(scale · q_i·k_j, the key padding mask) v_jd,
// with attention_mma_kernel.cuh's semantics (fp16 q, k, v and P on tensor cores, fp32 scores, row
// max and sums; a -inf score's p is 0, a sequence without a real key gives zeros, a row whose every
// real score is -inf NaN).
//
// Why: at MiniLM's batch 1 the QKV GEMM (3.3-3.7 µs) and the attention kernel (8.2 µs a layer in
// build D's H200 trace) are two of a layer's kernels, each mostly waiting for memory, and the
// attention's blocks cannot start their loads before the GEMM has ended. Here a thread-block
// cluster (cluster.cuh, sm_90) of C = ⌈seq / 16⌉ blocks takes one (sequence, head): block r
// projects the sequence's 16 rows r·16 .. r·16 + 15 to their q, k and v of head h (a GEMM of
// 16 × 3D over x's width, its weights loaded before waiting for the kernel ahead), then reads
// every block's k and v through distributed shared memory, and computes those 16 rows' attention
// over the sequence's keys (its 4 warps take one key tile of 16 in 4 each, and merge their
// softmax states as attention_mma_kernel.cuh's split layout does). The QKV buffer never goes to
// memory; the launch is one kernel instead of two.
//
// 1. The projection: 4 warps of 3D/4 columns over the block's 16 rows (gemm_f16_mma_kernel.cuh's
//    fragments and permuted k order), K = x's width through a ring of 32-value cp.async stages
//    (stage_ring.cuh). Its epilogue adds the bias, rounds to fp16 (as the QKV GEMM stores it) and
//    keeps q, k and v of the block's rows in shared memory; k and v of a padded key (mask 0, or
//    past the sequence's end) are stored as zeros, and its flag says so.
// 2. The cluster's barrier; the block gathers every block's k and v rows and flags.
// 3. Attention for the block's 16 query rows: warp w takes key tiles w, w + 4 (16 keys each),
//    S = Q·Kᵀ, the online softmax, O += P·V (attention_mma_kernel.cuh's loop, its helpers); the 4
//    warps' states merged through shared memory in warp order; rows past the sequence's end not
//    stored. A last cluster barrier keeps every block's k and v alive until its peers have read them.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: the blocks of a
// cluster run together there, launch_clusters).
#pragma once

#include <cstdint>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/attention_mma_kernel.cuh"
#include "backends/cuda/kernels/cluster.cuh"
#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/gemm_f16_mma_kernel.cuh"
#include "backends/cuda/kernels/mma_f16.cuh"
#include "backends/cuda/kernels/stage_ring.cuh"

namespace encrt::cuda::qkv_attention_kernels {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = 16;      // a block's query rows, and its share of the keys
constexpr int kMaxBlocks = 8;  // a portable cluster: seq ≤ 128
constexpr int kStageK = 32;    // x's width per projection stage
template <int D>
constexpr int kStagesOf = D <= 32 ? 8 : 4;

// The dynamic shared memory of a block, by D (fp16 rows padded by 8 values: the fragment loads fall
// on 32 distinct banks, attention_mma_kernel.cuh's MmaTiles).
template <int D>
struct Layout {
  static constexpr int kLd = D + 8;
  static constexpr size_t kStage = static_cast<size_t>(kRows + 3 * D) * kStageK * 2;  // x rows, then w rows
  static constexpr size_t kStages = kStagesOf<D> * kStage;
  // The warps' softmax states for the merge (after the projection: the stages' region).
  static constexpr size_t kStates = sizeof(mma_attention::SplitStates<D>);
  static constexpr size_t kRegion = kStages > kStates ? kStages : kStates;
  static constexpr size_t kQ = kRegion;                                      // [16][kLd] this block's q
  static constexpr size_t kOwnK = kQ + kRows * kLd * 2;                      // [16][kLd] its k
  static constexpr size_t kOwnV = kOwnK + kRows * kLd * 2;                   // [16][kLd] its v
  static constexpr size_t kOwnReal = kOwnV + kRows * kLd * 2;                // [16] int
  static constexpr size_t kK = kOwnReal + kRows * 4;                         // [128][kLd] every key's k
  static constexpr size_t kV = kK + static_cast<size_t>(kMaxBlocks * kRows) * kLd * 2;  // and v
  static constexpr size_t kReal = kV + static_cast<size_t>(kMaxBlocks * kRows) * kLd * 2;  // [128] int
  static constexpr size_t kBytes = kReal + kMaxBlocks * kRows * 4;
};

// grid (C, heads, batch), clusters of C = ⌈seq / 16⌉ blocks along x.
template <int D>
__global__ void __launch_bounds__(kThreads) qkv_attention_kernel(QkvAttentionArgs a) {
  using L = Layout<D>;
  using mma_attention::pair_at;
  using mma_gemm_f16::load_rows_async;
  using mma_gemm_f16::words_at;
  constexpr int kLd = L::kLd;
  constexpr int kStages = kStagesOf<D>;
  constexpr int WN = 3 * D / kWarps;  // projection columns of a warp
  constexpr int NT = WN / 8;
  static_assert(WN % 8 == 0, "head dimension");
#ifdef ENCRT_CUDA_HOST_EMULATION
  unsigned char* smem = encrt::emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
  __half* q_s = reinterpret_cast<__half*>(smem + L::kQ);
  __half* own_k = reinterpret_cast<__half*>(smem + L::kOwnK);
  __half* own_v = reinterpret_cast<__half*>(smem + L::kOwnV);
  int* own_real = reinterpret_cast<int*>(smem + L::kOwnReal);
  __half* k_s = reinterpret_cast<__half*>(smem + L::kK);
  __half* v_s = reinterpret_cast<__half*>(smem + L::kV);
  int* real_s = reinterpret_cast<int*>(smem + L::kReal);

  const int blocks = a.cluster;  // C
  const int rank = cluster_rank();
  const int h = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int H = a.heads * D;  // the width of q (and of k, v, out)
  const int seq_begin = b * a.seq, seq_end = seq_begin + a.seq;  // the sequence's rows of x
  const int r0 = seq_begin + rank * kRows;                       // the block's first row
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
  const __half* x = static_cast<const __half*>(a.x);
  const __half* w = static_cast<const __half*>(a.w);

  // 1. The projection of the block's rows to head h's q | k | v (D columns each).
  {
    float acc[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    __half* stages = reinterpret_cast<__half*>(smem);
    constexpr int kStageValues = static_cast<int>(L::kStage / 2);
    run_stage_ring<kStages>(
        (a.width + kStageK - 1) / kStageK,
        [&](int slot, int step) {
          __half* tile = stages + slot * kStageValues + kRows * kStageK;
#pragma unroll
          for (int part = 0; part < 3; ++part)  // w's rows of head h in q, k and v
            load_rows_async<D, kStageK, kStageK, kThreads>(tile + part * D * kStageK, w, 3 * H, a.width, part * H + h * D,
                                                           step * kStageK);
        },
        [&](int slot, int step) {
          load_rows_async<kRows, kStageK, kStageK, kThreads>(stages + slot * kStageValues, x, seq_end, a.width, r0,
                                                             step * kStageK);
        },
        [&](int slot) {
          const __half* sa = stages + slot * kStageValues;
          const __half* sb = sa + kRows * kStageK;
          const int c = 8 * t;
          const uint4 lo = words_at(sa + g * kStageK + c), hi = words_at(sa + (g + 8) * kStageK + c);
          const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const uint4 bf = words_at(sb + (warp * WN + nt * 8 + g) * kStageK + c);
            mma_m16n8k16<__half>(acc[nt], a0, bf.x, bf.y);
            mma_m16n8k16<__half>(acc[nt], a1, bf.z, bf.w);
          }
        });
    // The epilogue: acc[nt][2e + f] is row g + 8e, column warp·WN + nt·8 + 2t + f of q | k | v.
    const int32_t* mask = a.mask;
    const __half* bias = static_cast<const __half*>(a.bias);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = g + 8 * (i >> 1), j = warp * WN + nt * 8 + 2 * t + (i & 1);
        const int part = j / D, d = j % D;
        const bool inside = r0 + row < seq_end;
        const bool real = inside && (!mask || mask[r0 + row] != 0);
        float v = acc[nt][i];
        if (bias) v += __half2float(bias[part * H + h * D + d]);
        const __half hv = __float2half_rn(v);
        if (part == 0)
          q_s[row * kLd + d] = hv;
        else
          (part == 1 ? own_k : own_v)[row * kLd + d] = real ? hv : __float2half_rn(0.0f);
        if (j == 0) own_real[row] = real ? 1 : 0;
      }
  }
  copy_wait<0>();
  __syncthreads();

  // 2. Every block's k, v and flags, once all are written.
  cluster_sync();
  {
    constexpr int kChunks = D / 8;  // 16-byte chunks of a row
    for (int e = static_cast<int>(threadIdx.x); e < blocks * kRows * kChunks; e += kThreads) {
      const int key = e / kChunks, col = (e % kChunks) * 8;
      const int peer = key / kRows, row = key % kRows;
      *reinterpret_cast<uint4*>(k_s + key * kLd + col) =
          *reinterpret_cast<const uint4*>(cluster_peer(own_k, peer) + row * kLd + col);
      *reinterpret_cast<uint4*>(v_s + key * kLd + col) =
          *reinterpret_cast<const uint4*>(cluster_peer(own_v, peer) + row * kLd + col);
    }
    for (int key = static_cast<int>(threadIdx.x); key < blocks * kRows; key += kThreads)
      real_s[key] = cluster_peer(own_real, key / kRows)[key % kRows];
  }
  __syncthreads();

  // 3. The block's 16 query rows against the sequence's keys, warp w taking key tiles w, w + 4.
  uint32_t qa[D / 16][4];
#pragma unroll
  for (int kt = 0; kt < D / 16; ++kt) {
    qa[kt][0] = pair_at(q_s + g * kLd + kt * 16 + 2 * t);
    qa[kt][1] = pair_at(q_s + (g + 8) * kLd + kt * 16 + 2 * t);
    qa[kt][2] = pair_at(q_s + g * kLd + kt * 16 + 8 + 2 * t);
    qa[kt][3] = pair_at(q_s + (g + 8) * kLd + kt * 16 + 8 + 2 * t);
  }
  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  bool any_real = false;
  for (int tile = warp; tile < blocks; tile += kWarps) {
    const int kb = tile * kRows;
    float s[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
      for (int kt = 0; kt < D / 16; ++kt)
        mma_m16n8k16<__half>(s[nt], qa[kt], pair_at(k_s + (kb + nt * 8 + g) * kLd + kt * 16 + 2 * t),
                             pair_at(k_s + (kb + nt * 8 + g) * kLd + kt * 16 + 8 + 2 * t));
    }
    mma_attention::softmax_step<2, D>(s, real_s + kb, t, a.scale, m, l, o, any_real);
    mma_attention::add_pv<2, D, __half>(o, s, v_s + kb * kLd, kLd, g, t);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // the group's 4 parts of the row sum
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
  bool sequence_has_real = __any_sync(0xffffffffu, any_real);

  // The 4 warps' states merged by warp 0 (attention_mma_kernel.cuh's split layout); a warp without
  // a tile adds nothing.
  auto& states = *reinterpret_cast<mma_attention::SplitStates<D>*>(smem);
  mma_attention::leave_state<D>(states, warp, lane, g, t, o, m, l, sequence_has_real);
  __syncthreads();
  if (warp == 0) {
    mma_attention::take_states<D, kWarps>(states, lane, g, o, l, sequence_has_real);
    float inv[2];
    mma_attention::output_scale(l, sequence_has_real, inv);
    __half* out = static_cast<__half*>(a.out);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = r0 + g + 8 * r;
      if (row >= seq_end) continue;
      __half* p = out + static_cast<size_t>(row) * static_cast<size_t>(H) + static_cast<size_t>(h) * D;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        *reinterpret_cast<__half2*>(p + dt * 8 + 2 * t) = __floats2half2_rn(o[dt][2 * r] * inv[r], o[dt][2 * r + 1] * inv[r]);
    }
  }
  cluster_sync();  // no block leaves while a peer may still read its k and v
}

}  // namespace encrt::cuda::qkv_attention_kernels
