// The device code of attention_mma.cu (which launches it): multi-head attention on tensor cores
// (fp16 or fp32 QKV, head_dim 16, 32 or 64, no probabilities), in the flash-attention form: one
// block of 4 warps per (sequence, head, 64 query rows), each warp owning 16 query rows; K and V
// go through shared memory 64 keys at a time, and each tile runs
//   S = Q·Kᵀ (mma.sync m16n8k16, fp16 inputs, fp32 accumulation), scaled in fp32;
//   the online softmax in fp32 registers (running max and sum per query row, the accumulator
//     rescaled as the max grows);
//   O += P·V with P rounded to fp16 (the second mma.sync's A operand).
// fp32 QKV (an int8 model's activations; an fp32 model's only when the user asks: attention=mma)
// runs the same instructions on bf16 (mma.sync ...f32.bf16.bf16.f32, the same fragment layout):
// Q, K and V rounded to bf16 as they are staged in shared memory, P rounded to bf16, the output
// stored as fp32. bf16 rather than fp16 because fp32 activations are not bounded by fp16's 65504
// (an int8 model's QKV rows have no such bound): bf16 has fp32's exponent range.
// Inline-PTX mma.sync rather than WMMA: its fragment layout is specified (PTX ISA, "Matrix
// Fragments for mma.m16n8k16"), so the softmax works on the score fragment in registers and the
// score fragment of two adjacent 8-key tiles *is* P's A fragment for 16 keys, with no trip
// through shared memory; WMMA's fragments are opaque and would need one per tile. The operands
// are read from shared memory with plain 32-bit loads (no ldmatrix), each register's two halves
// named by the layout, so every index below can be checked against the PTX table by hand.
//
// Semantics are attention.cu's (its header comment) with these differences:
//   - P is rounded to fp16 before P·V (relative error ≤ 2^-11 per probability, absolute ≤ 2^-25
//     below fp16's normal range); the row sum is of the fp32 probabilities, so an output is off
//     by at most 2^-11 · Σ_j p_j |v_j| ≤ 2^-11 · max |v| from this rounding;
//   - fp32 QKV: each of q, k, v and p is rounded to bf16, relative error ≤ u = 2^-8 (8 significant
//     bits, round to nearest even; no subnormal loss above 2^-126, fp32's own normal range), so a
//     score moves by at most Δ_i = 2.004u · scale · max_j Σ_d |q_id k_jd| (the products of two bf16
//     values and their fp32 sums are as in the fp16 path), each probability by a factor within
//     e^{±2Δ_i}, and an output is off from the fp32 inputs' exact attention by at most
//     (e^{2Δ_i} (1 + u)^2 − 1) · Σ_j p_j |v_jd| (about (4Δ_i + 2u) · max |v|) plus fp32 rounding;
//     against attention on the bf16-rounded q, k, v only P's rounding is left: u · Σ_j p_j |v_jd|.
//     That is the order of the CPU's int8 attention (kernels/ref/attention_i8_ref.cpp: q, k, v
//     per-row int8, up to max |row| / 254 per value, and P as u8 of the row max). A finite value
//     above bf16's largest (3.39e38) rounds to ±Inf, and the output follows (Inf or NaN);
//   - a padded key's K and V rows are zeros in shared memory (its score is -inf and its p 0 as
//     in the SIMT kernel), but a real key whose probability underflows to 0 still goes through
//     the product: where its V holds Inf or NaN the output is NaN (0 · Inf), where the reference
//     and the SIMT kernel skip p == 0 and give a finite value. Every other non-finite case is
//     as theirs: a NaN or +Inf score makes its row NaN, fmaxf ignores NaN in the running max.
// A query row of a sequence with no real key gets zeros (its row sum is 0: every p is 0). One
// corner is closer to the reference than the SIMT kernel: a real key's -inf score in a tile
// where every score is -inf gives p = 0 here (the reference's exp(-inf - max) with the row's
// final, finite max), where the SIMT kernel's exp(-inf - -inf) makes the row NaN.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: that test
// defines __half, __nv_bfloat16, the warp's shuffles and mma.sync from the PTX fragment tables and
// runs 128 host threads per block), so the kernel's index logic is checked on every build, without
// a GPU.
#pragma once

#include <cstdint>
#include <type_traits>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/mma_f16.cuh"

namespace encrt::cuda::mma_attention {

constexpr int kMmaWarps = 4;
constexpr int kWarpRows = 16;  // one m16 tile of query rows per warp
constexpr int kKeyTile = 64;   // keys per shared-memory tile
// kSplit: how many of a block's warps share one m16 tile of query rows, each taking kKeyTile /
// kSplit keys of every key tile (their partial softmax states merged at the end through shared
// memory). 1: each warp owns 16 query rows and every key (64 query rows per block); 4: the
// block's 4 warps split the keys of 16 query rows, four times the blocks and a quarter of each
// warp's chain of dependent steps, for grids that would not fill the GPU (MiniLM at batch 1: 24
// blocks of 64 rows on an H200's 132 multiprocessors, 10.4 µs per layer).
template <int kSplit>
constexpr int kQueryTileOf = kMmaWarps * kWarpRows / kSplit;  // query rows per block
constexpr int kQueryTile = kQueryTileOf<1>;

// The 16-bit type a kernel instance stages in shared memory and multiplies on the tensor cores,
// by the activations' type in global memory (Io): fp16 as it is, fp32 rounded to bf16.
template <typename Io>
using Staged = std::conditional_t<std::is_same_v<Io, float>, __nv_bfloat16, __half>;

// Rows padded by 8 16-bit values (16 bytes): rows stay 16-byte aligned for the vector stores, and
// the fragment loads (lane 4g + t reads row g, word t) fall on 32 distinct banks for D = 16, 32, 64.
// kKeys: the keys staged at once (a tile of kKeyTile; the whole-keys layout's kWholeKeys).
template <int D, typename T, int kQueryRows = kQueryTile, int kKeys = kKeyTile>
struct __align__(16) MmaTiles {
  static constexpr int kLd = D + 8;
  T q[kQueryRows][kLd];
  T k[kKeys][kLd];
  T v[kKeys][kLd];
  int real[kKeys];  // key j0 + r is a real token of the sequence
};
static_assert(sizeof(MmaTiles<64, __half>) <= 48 * 1024, "static shared memory per block");
static_assert(sizeof(MmaTiles<64, __nv_bfloat16>) == sizeof(MmaTiles<64, __half>), "bf16 stages as fp16 does");

// Where the warps of a split query tile (kSplit > 1) leave their partial states for the merge:
// each lane's output fragment (lane-fastest, so the stores and loads are conflict-free), and per
// query row of the tile the warp's running max and row sum, and whether it saw a real key.
template <int D>
struct SplitStates {
  float o[kMmaWarps][D / 8][4][32];
  float m[kMmaWarps][kWarpRows];
  float l[kMmaWarps][kWarpRows];
  int any_real[kMmaWarps];
};
static_assert(sizeof(MmaTiles<64, __half, kQueryTileOf<4>>) + sizeof(SplitStates<64>) <= 48 * 1024,
              "static shared memory per block");

__device__ __forceinline__ uint16_t bits_of(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint16_t bits_of(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
// fp32 to T, round to nearest even (fp32's NaN stays NaN, ±Inf stays ±Inf).
template <typename T>
__device__ __forceinline__ T round_to(float f);
template <>
__device__ __forceinline__ __half round_to<__half>(float f) {
  return __float2half_rn(f);
}
template <>
__device__ __forceinline__ __nv_bfloat16 round_to<__nv_bfloat16>(float f) {
  return __float2bfloat16_rn(f);
}

// Two 16-bit values as one fragment register: the lower-indexed element in the low 16 bits.
template <typename T>
__device__ __forceinline__ uint32_t pack(T lo, T hi) {
  return static_cast<uint32_t>(bits_of(lo)) | (static_cast<uint32_t>(bits_of(hi)) << 16);
}
template <typename T>
__device__ __forceinline__ uint32_t pack_rounded(float lo, float hi) {
  return pack(round_to<T>(lo), round_to<T>(hi));
}
// Two consecutive 16-bit values of a row (an even column: 4-byte aligned).
template <typename T>
__device__ __forceinline__ uint32_t pair_at(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// Eight consecutive values of a row in global memory (16-byte aligned) as loaded (RawChunk:
// fp16, one 16-byte load; fp32, two), and as eight staged 16-bit values (staged: fp16 copied,
// fp32 rounded to bf16). Zero-initialized, a RawChunk is eight zeros.
template <typename Io>
struct RawChunk;
template <>
struct RawChunk<__half> {
  uint4 bits;
};
template <>
struct RawChunk<float> {
  float4 lo, hi;
};
__device__ __forceinline__ RawChunk<__half> load_raw(const __half* p) { return {*reinterpret_cast<const uint4*>(p)}; }
__device__ __forceinline__ RawChunk<float> load_raw(const float* p) {
  return {reinterpret_cast<const float4*>(p)[0], reinterpret_cast<const float4*>(p)[1]};
}
__device__ __forceinline__ uint4 staged(const RawChunk<__half>& r) { return r.bits; }
__device__ __forceinline__ uint4 staged(const RawChunk<float>& r) {
  return make_uint4(pack_rounded<__nv_bfloat16>(r.lo.x, r.lo.y), pack_rounded<__nv_bfloat16>(r.lo.z, r.lo.w),
                    pack_rounded<__nv_bfloat16>(r.hi.x, r.hi.y), pack_rounded<__nv_bfloat16>(r.hi.z, r.hi.w));
}
template <typename Io>
__device__ __forceinline__ uint4 load_chunk(const Io* p) {
  return staged(load_raw(p));
}

// Two adjacent outputs (an even column) in the activations' type.
__device__ __forceinline__ void store_pair(__half* p, float lo, float hi) {
  *reinterpret_cast<__half2*>(p) = __floats2half2_rn(lo, hi);
}
__device__ __forceinline__ void store_pair(float* p, float lo, float hi) {
  *reinterpret_cast<float2*>(p) = make_float2(lo, hi);
}

// Query rows r0 .. r0 + kRows - 1 of the sequence, D columns from `column`, into `tile` with
// 16-byte stores; rows at or past n are zeros (a query row is never masked).
template <int D, typename Io, int kRows = 64>
__device__ __forceinline__ void load_rows(Staged<Io> (*tile)[D + 8], const Io* seq_base, size_t ld, int column, int r0,
                                          int n) {
  constexpr int kChunks = D / 8;  // 8-value chunks per row (16 bytes staged)
#pragma unroll 2
  for (int e = threadIdx.x; e < kRows * kChunks; e += kMmaWarps * 32) {
    const int r = e / kChunks, c = (e % kChunks) * 8, j = r0 + r;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (j < n) v = load_chunk(seq_base + static_cast<size_t>(j) * ld + column + c);
    *reinterpret_cast<uint4*>(&tile[r][c]) = v;
  }
}

// A thread's share of one key tile held in registers, as loaded, from the loads' issue until
// the tile is stored to shared memory. Every load is independent of every other loaded value: a
// key's K and V chunks are loaded whether or not the key is real, and its mask word is applied
// when the tile is stored (a masked key's rows are zeros in shared memory, as load_rows leaves
// them); fp32 values are rounded to bf16 then too. So a tile costs one round trip to memory, not
// two (the kernel's chain per tile was: wait for the mask word, then load K and V, then compute;
// at MiniLM's batch 1 its time was that chain's latency, 8.2 µs a layer on an H200, build D).
// The first tile's loads are issued before Q's, so that both land in one trip. The split layout
// (small grids) also holds the next tile's loads in registers while the warps compute on this
// one (see kHoldNextTile); the other issues and stores each later tile at its turn.
template <int D, typename Io>
struct KeyTileLoads {
  static constexpr int kRowChunks = D / 8;                                  // 8-value chunks per row
  static constexpr int kChunks = kKeyTile * kRowChunks / (kMmaWarps * 32);  // per thread: D / 16
  static_assert(kKeyTile * kRowChunks % (kMmaWarps * 32) == 0, "whole chunks per thread");
  RawChunk<Io> k[kChunks], v[kChunks];
  int32_t key_real[kChunks];  // the chunk's key: in the sequence and, with a mask, its mask word
  int32_t tile_real;          // threads 0 .. kKeyTile - 1: key j0 + threadIdx.x, the same
};

// Issues the loads of key tile j0 (nothing waits for them here).
template <int D, typename Io>
__device__ __forceinline__ void issue_key_tile(KeyTileLoads<D, Io>& l, const Io* seq_base, size_t ld, int k_column,
                                               int v_column, int j0, int n, const int32_t* mask) {
  using L = KeyTileLoads<D, Io>;
#pragma unroll
  for (int i = 0; i < L::kChunks; ++i) {
    const int e = threadIdx.x + i * kMmaWarps * 32;
    const int r = e / L::kRowChunks, c = (e % L::kRowChunks) * 8, j = j0 + r;
    l.k[i] = l.v[i] = RawChunk<Io>{};
    l.key_real[i] = 0;
    if (j < n) {
      const Io* row = seq_base + static_cast<size_t>(j) * ld + c;
      l.k[i] = load_raw(row + k_column);
      l.v[i] = load_raw(row + v_column);
      l.key_real[i] = mask ? mask[j] : 1;
    }
  }
  const int j = j0 + static_cast<int>(threadIdx.x);
  l.tile_real = threadIdx.x < kKeyTile && j < n ? (mask ? mask[j] : 1) : 0;
}

// Stores an issued key tile into the block's tiles (waits for its loads).
template <int D, typename Io, int kQueryRows>
__device__ __forceinline__ void store_key_tile(MmaTiles<D, Staged<Io>, kQueryRows>& t, const KeyTileLoads<D, Io>& l) {
  using L = KeyTileLoads<D, Io>;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
  for (int i = 0; i < L::kChunks; ++i) {
    const int e = threadIdx.x + i * kMmaWarps * 32;
    const int r = e / L::kRowChunks, c = (e % L::kRowChunks) * 8;
    *reinterpret_cast<uint4*>(&t.k[r][c]) = l.key_real[i] != 0 ? staged(l.k[i]) : zero;
    *reinterpret_cast<uint4*>(&t.v[r][c]) = l.key_real[i] != 0 ? staged(l.v[i]) : zero;
  }
  if (threadIdx.x < kKeyTile) t.real[threadIdx.x] = l.tile_real != 0 ? 1 : 0;
}

// One key tile's step of the online softmax for a warp's 16 query rows (the header comment's
// flash-attention form): s[nt] are the warp's scores of the tile (rows g (0, 1) and g + 8 (2, 3),
// keys nt·8 + 2tg, + 1 of the warp's keys), real[j] whether its key j is real. Scales and masks
// (-inf) s, takes the tile's row max over the group's 4 lanes, rescales the running sum l (this
// lane's part) and the output o to the new running max m, and leaves p = exp(s − max) in s.
template <int kKeyGroups, int D>
__device__ __forceinline__ void softmax_step(float (&s)[kKeyGroups][4], const int* real, int tg, float scale,
                                             float (&m)[2], float (&l)[2], float (&o)[D / 8][4], bool& any_real) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int nt = 0; nt < kKeyGroups; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const bool is_real = real[nt * 8 + 2 * tg + e] != 0;
      any_real |= is_real;
      s[nt][e] = is_real ? s[nt][e] * scale : -INFINITY;
      s[nt][2 + e] = is_real ? s[nt][2 + e] * scale : -INFINITY;
      tile_max[0] = fmaxf(tile_max[0], s[nt][e]);
      tile_max[1] = fmaxf(tile_max[1], s[nt][2 + e]);
    }
  float correction[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float m_new = fmaxf(m[r], tile_max[r]);
    correction[r] = m[r] == m_new ? 1.0f : expf(m[r] - m_new);  // (-inf - -inf would be NaN)
    m[r] = m_new;
    l[r] *= correction[r];
  }
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) {
    o[dt][0] *= correction[0];
    o[dt][1] *= correction[0];
    o[dt][2] *= correction[1];
    o[dt][3] *= correction[1];
  }
  // p = exp(s - max), 0 for a -inf score (a padded key, or a real one): the running max may
  // still be -inf here while a later tile's is finite, and the reference's exp(-inf - max) is 0
  // then; a row whose every real score is -inf is made NaN at the end, as the reference's
  // exp(-inf - -inf). A NaN score gives a NaN p (and row).
#pragma unroll
  for (int nt = 0; nt < kKeyGroups; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      s[nt][e] = s[nt][e] == -INFINITY ? 0.0f : expf(s[nt][e] - m[0]);
      s[nt][2 + e] = s[nt][2 + e] == -INFINITY ? 0.0f : expf(s[nt][2 + e] - m[1]);
      l[0] += s[nt][e];
      l[1] += s[nt][2 + e];
    }
}

// O += P·V over the warp's keys of the tile, 16 at a time: P's A fragment is the score fragments
// of key groups 2kk (columns 2tg, 2tg + 1 of the step) and 2kk + 1 (columns 2tg + 8, 2tg + 9),
// rows g then g + 8, rounded to T. B (k = the key, n = the dimension) from V's row-major
// [key][d] (v: the warp's first key, rows ld values apart): keys 2tg, 2tg + 1 (and + 8) of the
// step at dimension dt·8 + g, two 16-bit loads per register.
template <int kKeyGroups, int D, typename T>
__device__ __forceinline__ void add_pv(float (&o)[D / 8][4], const float (&s)[kKeyGroups][4], const T* v, int ld, int g,
                                       int tg) {
#pragma unroll
  for (int kk = 0; kk < kKeyGroups / 2; ++kk) {
    const uint32_t pa[4] = {pack_rounded<T>(s[2 * kk][0], s[2 * kk][1]), pack_rounded<T>(s[2 * kk][2], s[2 * kk][3]),
                            pack_rounded<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                            pack_rounded<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
    const T* key = v + (kk * 16 + 2 * tg) * ld;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      const int d = dt * 8 + g;
      mma_m16n8k16<T>(o[dt], pa, pack(key[d], key[ld + d]), pack(key[8 * ld + d], key[9 * ld + d]));
    }
  }
}

// The split layout's merge of the warps' softmax states of the same 16 rows: each warp leaves its
// own (leave_state), then, after a barrier, warp 0 (take_states) rescales each to the largest
// running max M, as softmax_step rescales a tile's (a factor of 1 where the max is M itself, so a
// +Inf max stays NaN; 0 where a warp's max is -inf: it added nothing), and adds them in warp order.
template <int D>
__device__ __forceinline__ void leave_state(SplitStates<D>& states, int warp, int lane, int g, int tg,
                                            const float (&o)[D / 8][4], const float (&m)[2], const float (&l)[2],
                                            bool has_real) {
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) states.o[warp][dt][e][lane] = o[dt][e];
  if (tg == 0) {
    states.m[warp][g] = m[0], states.m[warp][g + 8] = m[1];
    states.l[warp][g] = l[0], states.l[warp][g + 8] = l[1];
  }
  if (lane == 0) states.any_real[warp] = has_real ? 1 : 0;
}
template <int D, int kWarpsMerged>
__device__ __forceinline__ void take_states(const SplitStates<D>& states, int lane, int g, float (&o)[D / 8][4],
                                            float (&l)[2], bool& has_real) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = g + 8 * r;
    float M = states.m[0][row];
    for (int w = 1; w < kWarpsMerged; ++w) M = fmaxf(M, states.m[w][row]);
    float sum = 0.0f;
    float acc[D / 8][2];
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) acc[dt][0] = acc[dt][1] = 0.0f;
    for (int w = 0; w < kWarpsMerged; ++w) {
      const float mw = states.m[w][row];
      const float f = mw == M ? 1.0f : mw == -INFINITY ? 0.0f : expf(mw - M);
      sum += states.l[w][row] * f;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        acc[dt][0] += states.o[w][dt][2 * r][lane] * f;
        acc[dt][1] += states.o[w][dt][2 * r + 1][lane] * f;
      }
    }
    l[r] = sum;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) o[dt][2 * r] = acc[dt][0], o[dt][2 * r + 1] = acc[dt][1];
  }
  for (int w = 1; w < kWarpsMerged; ++w) has_real = has_real || states.any_real[w] != 0;
}

// Q's A fragments for the D / 16 k-steps of Q·Kᵀ (q: the staged query tile, wr: the warp's first
// row in it): rows g and g + 8, columns 2tg, 2tg + 1 and 2tg + 8, 2tg + 9 of each step.
template <int D, typename T>
__device__ __forceinline__ void load_q_fragments(uint32_t (&qa)[D / 16][4], const T (*q)[D + 8], int wr, int g, int tg) {
#pragma unroll
  for (int kt = 0; kt < D / 16; ++kt) {
    qa[kt][0] = pair_at(&q[wr + g][kt * 16 + 2 * tg]);
    qa[kt][1] = pair_at(&q[wr + g + 8][kt * 16 + 2 * tg]);
    qa[kt][2] = pair_at(&q[wr + g][kt * 16 + 8 + 2 * tg]);
    qa[kt][3] = pair_at(&q[wr + g + 8][kt * 16 + 8 + 2 * tg]);
  }
}

// S = Q·Kᵀ over kKeyGroups · 8 keys from k (the staged K rows of the warp's first key): s[nt] holds
// rows g (0, 1) and g + 8 (2, 3), keys nt·8 + 2tg, + 1. B (k = the head dimension, n = the key) is
// K's row-major [key][d]: registers at (key nt·8 + g, d 2tg).
template <int kKeyGroups, int D, typename T>
__device__ __forceinline__ void compute_scores(float (&s)[kKeyGroups][4], const uint32_t (&qa)[D / 16][4],
                                               const T (*k)[D + 8], int g, int tg) {
#pragma unroll
  for (int nt = 0; nt < kKeyGroups; ++nt) {
    s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kt = 0; kt < D / 16; ++kt)
      mma_m16n8k16<T>(s[nt], qa[kt], pair_at(&k[nt * 8 + g][kt * 16 + 2 * tg]),
                      pair_at(&k[nt * 8 + g][kt * 16 + 8 + 2 * tg]));
  }
}

// Adds the group's 4 lanes' parts of the row sums.
__device__ __forceinline__ void add_group_sums(float (&l)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
}

// 1 / the row sum for the output. A zero sum: no real key in the sequence (zeros), or every real
// score -inf (NaN, as the reference). With a finite max the sum is at least 1 (the max's own p),
// so nothing else gives 0.
__device__ __forceinline__ void output_scale(const float (&l)[2], bool sequence_has_real, float (&inv)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r)
    inv[r] = l[r] != 0.0f ? 1.0f / l[r] : sequence_has_real ? __int_as_float(0x7fc00000) : 0.0f;
}

// The warp's 16 output rows (the sequence's rows i0 + g and i0 + g + 8 where below n; the sequence's
// first row is row0, its head h): o over the row sums l (the group's, added).
template <int D, typename Io>
__device__ __forceinline__ void store_rows(const AttentionArgs& a, const float (&o)[D / 8][4], const float (&l)[2],
                                           bool sequence_has_real, int row0, int i0, int n, int h, int g, int tg) {
  float inv[2];
  output_scale(l, sequence_has_real, inv);
  const size_t H = static_cast<size_t>(a.heads) * D;
  Io* out = static_cast<Io*>(a.out) + static_cast<size_t>(row0) * H + static_cast<size_t>(h) * D;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = i0 + g + 8 * r;
    if (i >= n) continue;
    Io* row = out + static_cast<size_t>(i) * H;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) store_pair(row + dt * 8 + 2 * tg, o[dt][2 * r] * inv[r], o[dt][2 * r + 1] * inv[r]);
  }
}

// One block's work (the kernels below are this with their launch bounds). Io: the activations'
// type in global memory (__half or float); kSplit: see kQueryTileOf; kHold: see kHoldNextTile.
template <int D, typename Io, int kSplit, bool kHold>
__device__ __forceinline__ void attention_mma_block(const AttentionArgs& a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  static_assert(D % 16 == 0 && D <= 64, "head_dim: a multiple of 16, at most 64");
  static_assert(std::is_same_v<Io, __half> || std::is_same_v<Io, float>, "fp16 or fp32 activations");
  static_assert(kSplit == 1 || kSplit == 2 || kSplit == 4, "1, 2 or 4 warps per query tile");
  using T = Staged<Io>;
  constexpr int kQueryRows = kQueryTileOf<kSplit>;
  constexpr int kWarpKeys = kKeyTile / kSplit;  // keys of each tile that a warp takes
  constexpr int kKeyGroups = kWarpKeys / 8;     // its n8 tiles of S per key tile
  __shared__ MmaTiles<D, T, kQueryRows> t;
  __shared__ std::conditional_t<(kSplit > 1), SplitStates<D>, char> states;
  const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * kQueryRows;
  // The sequence's first row and length; a packed run's keys are all real (no mask).
  const int row0 = a.offsets ? a.offsets[b] : b * a.seq;
  const int n = a.offsets ? a.offsets[b + 1] - row0 : a.seq;
  if (q0 >= n) return;  // the whole block: no __syncthreads is reached
  const int32_t* mask = a.offsets || !a.mask ? nullptr : a.mask + static_cast<size_t>(b) * a.seq;
  const int H = a.heads * D;
  const size_t ld = 3 * static_cast<size_t>(H);
  const Io* seq_base = static_cast<const Io*>(a.qkv) + static_cast<size_t>(row0) * ld;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, tg = lane & 3;             // the fragment layout's groupID and threadID_in_group
  const int wr = kSplit == 1 ? warp * kWarpRows : 0;  // the warp's first row in the query tile
  const int kb = (warp % kSplit) * kWarpKeys;         // the warp's first key in each key tile
  const bool active = q0 + wr < n;                    // the warp has a query row (warp-uniform)

  // kHoldNextTile: where the grid is small (the split layout's reason), the next key tile's loads
  // are in flight while the warps compute, so that each block's own chain is the time; large
  // grids may hide it with other blocks' warps, and the registers held across the computation (19
  // more a thread at D = 32, fp16: 96 → 128 on sm_90) cost them resident blocks: there each later
  // tile is loaded (one trip) and stored at its turn, unless the launcher asks for the hold
  // (AttentionArgs::prefetch_keys: MiniLM at batch 32 runs 768 blocks in two waves either way, so
  // the hold may pay there; measured by the device check). Both layouts issue the first tile's
  // loads before Q's and store it with Q (KeyTileLoads: one trip for both).
  constexpr bool kHoldNextTile = kHold;
  KeyTileLoads<D, Io> next{};
  issue_key_tile<D, Io>(next, seq_base, ld, H + h * D, 2 * H + h * D, 0, n, mask);
  load_rows<D, Io, kQueryRows>(t.q, seq_base, ld, h * D, q0, n);
  store_key_tile<D, Io, kQueryRows>(t, next);
  __syncthreads();
  uint32_t qa[D / 16][4];
  load_q_fragments<D, T>(qa, t.q, wr, g, tg);

  // The output fragment: o[dt] holds rows g (0, 1) and g + 8 (2, 3), dimensions dt·8 + 2tg, + 1.
  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  // Rows g and g + 8: the running max (the same in the 4 lanes of a group) and this lane's part
  // of the running sum (its keys of each tile; the group's 4 parts are added at the end).
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  bool any_real = false;  // a real key among this lane's (a group's 4 lanes see every key of the warp's)

  for (int j0 = 0; j0 < n; j0 += kKeyTile) {
    if (j0 > 0) {  // (the first tile was stored with Q)
      __syncthreads();  // every warp is done with the previous tile
      if constexpr (kHoldNextTile) {
        store_key_tile<D, Io, kQueryRows>(t, next);
      } else {
        KeyTileLoads<D, Io> tile{};
        issue_key_tile<D, Io>(tile, seq_base, ld, H + h * D, 2 * H + h * D, j0, n, mask);
        store_key_tile<D, Io, kQueryRows>(t, tile);
      }
      __syncthreads();
    }
    if (kHoldNextTile && j0 + kKeyTile < n)
      issue_key_tile<D, Io>(next, seq_base, ld, H + h * D, 2 * H + h * D, j0 + kKeyTile, n, mask);
    if (!active) continue;

    float s[kKeyGroups][4];  // keys kb + nt·8 + 2tg, + 1 of the tile
    compute_scores<kKeyGroups, D, T>(s, qa, &t.k[kb], g, tg);

    softmax_step<kKeyGroups, D>(s, &t.real[kb], tg, a.scale, m, l, o, any_real);
    add_pv<kKeyGroups, D, T>(o, s, &t.v[kb][0], MmaTiles<D, T, kQueryRows>::kLd, g, tg);
  }
  add_group_sums(l);
  bool sequence_has_real = __any_sync(0xffffffffu, any_real);
  if constexpr (kSplit > 1) {
    // Merge the kSplit warps' states of the same rows (here every warp is active: q0 < n).
    leave_state<D>(states, warp, lane, g, tg, o, m, l, sequence_has_real);
    __syncthreads();
    if (warp != 0) return;
    take_states<D, kSplit>(states, lane, g, o, l, sequence_has_real);
  }
  if (!active) return;  // after the loop and the merge: no __syncthreads follows
  store_rows<D, Io>(a, o, l, sequence_has_real, row0, q0 + wr, n, h, g, tg);
}

template <int D, typename Io, int kSplit = 1, bool kHold = (kSplit > 1)>
__global__ void __launch_bounds__(kMmaWarps * 32) attention_mma_kernel(AttentionArgs a) {
  attention_mma_block<D, Io, kSplit, kHold>(a);
}

// The unsplit layout without the held tile, compiled so that kSixBlocks blocks fit on one
// multiprocessor at once (the compiler caps a thread's registers at 65536 / (128 · 6) = 85; ptxas
// sm_90 takes 80): the backend's option attention_occupancy=6, at head_dim 32
// (AttentionArgs::six_blocks; at 16 the default build takes 75 registers, so 6 blocks fit
// without the cap's spills, and the launcher keeps it). At the default bounds the kernel takes 102 registers a thread
// (fp16, D = 32), so 4 blocks fit and MiniLM at batch 32 (768 blocks) runs in two waves on an
// H200's 132 multiprocessors (528 at once); at 80, 792 fit at once: one wave, for 36 bytes of
// spill stores a thread (ptxas: fp16 D = 32; 48 for fp32; 452 at D = 64, where the option does
// not apply). Every block computes what attention_mma_kernel's would.
constexpr int kSixBlocks = 6;
template <int D, typename Io>
__global__ void __launch_bounds__(kMmaWarps * 32, kSixBlocks) attention_mma_six_blocks_kernel(AttentionArgs a) {
  attention_mma_block<D, Io, 1, false>(a);
}

}  // namespace encrt::cuda::mma_attention
