// The device code of attention_i8_mma.cu (which launches it): an int8 model's attention op
// (plan::AttentionParams::int8) on int8 tensor cores, with the semantics of the CPU reference
// (kernels/ref/attention_i8_ref.cpp, whose header states them): fp32 QKV in, per-token symmetric
// int8 Q, K and V of the head, S = float(Σ q·k) · (s_q · scale) · s_k, an fp32 softmax over the
// real keys, P' = p · s_v, s_p = max P' / 255, u = rint(P' / s_p) as u8 and
// out = float(Σ u·v) · s_p, fp32 out.
//
// Structure: one block of 4 warps per (sequence, head, 64 query rows), each warp owning 16 query
// rows. The block first quantizes its Q rows and the K and V rows of the whole sequence (at most
// kAttentionI8MmaMaxSeq keys) into dynamic shared memory: int8 costs a quarter of fp32's bytes,
// so 512 keys of head_dim 64 take 84 KB (sm_80 / sm_87 take 163 KB a block, sm_86 / sm_89 99 KB,
// sm_90 227 KB). The reference needs a row's max, sum and max P' before its first u, so each
// warp then passes over the keys three times, recomputing S with mma.sync m16n8k32 s8 each time
// (int8 mma is cheap: one S pass costs as many mma as the P·V pass at head_dim 32 and 64, and
// holding a 16 × 512 fp32 score tile would take 256 registers a lane or 32 KB of shared memory a
// warp):
//   pass 1: the row's max (exact in any order), whether every real score is finite, and the sum
//     of exp(s − max) (each lane's keys with a running max, the group's four parts rescaled to
//     the row's max: a different order of additions than the reference's, see below);
//   pass 2: max P' over the row;
//   pass 3: u from P' (the same instructions as pass 2, so the same values: u ≤ 255), packed
//     straight from the score fragment into P's A fragment, and O += u·v on mma.sync m16n8k32
//     .u8.s8 (V's bytes stored transposed, in the key order that packing gives: below).
// A K or V row's quantization is done again by each of a sequence's query blocks (seq / 64 of
// them, 2 at MiniLM's 128): cheaper than a second kernel and a scratch buffer at these lengths.
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k32", as gemm_i8_mma_kernel.cuh spells
// them), lane = 4·g + t:
//   A (16 × 32, row-major), four registers of four bytes, the lowest byte the lowest column:
//     a0 = row g, columns 4t .. 4t + 3; a1 = row g + 8, the same; a2 = row g, columns 16 + 4t ..;
//     a3 = row g + 8, columns 16 + 4t ..
//   B (32 × 8, column-major): b0 = column g, rows 4t .. 4t + 3; b1 = column g, rows 16 + 4t ..
//   C (16 × 8 s32): c0, c1 = row g, columns 2t, 2t + 1; c2, c3 = row g + 8, the same.
// S: A = Q's bytes (k = the head dimension), B = K's rows (column = key, contiguous in d), so
// every register is one aligned 32-bit load. P·V: the k index of an mma only has to mean the same
// key in A and B, so the 32 keys of a step are taken in the order the four S tiles leave them in
// a lane: physical key p = 8·nt + 2t + e (tile nt, the lane's pair e) is logical column
// L(p) = 16·(nt ≥ 2) + 4t + 2·(nt & 1) + e. Then a lane's u of tiles 0 and 1 (rows g, g + 8) are
// exactly its a0, a1 and those of tiles 2 and 3 its a2, a3, with no exchange between lanes; V is
// stored transposed (vt[d][key block + L(p)]) so that b0, b1 are single 32-bit loads as well.
// Shared rows are padded by 16 bytes: the fragment loads of a warp (rows g, words t) then fall on
// 32 distinct banks (row strides of 12 or 20 words for K and Q, ≡ 4 mod 16 for vt).
//
// Exactness: the quantized bytes and scales, the int32 dots, S, the row max and the u·v sums are
// the reference's operations, rounded once each (int8_math.h's mul_rn/div_rn: never contracted
// into an FMA). Two steps differ: the GPU's expf (2 ulp) against std::exp, and the order of the
// row sum's additions (a relative difference of a few ulps in 1/sum). So P' and max P' can differ
// by a few ulps, which moves s_p by as much (every output by a few ulps, relatively) and, where
// P'/s_p falls within those ulps of a half-integer, moves that u by one: an output then moves by
// s_p · |v_j,d| ≤ s_p · 127 = 127/255 · max P' ≤ 0.5 · max_j p_j s_v,j ≤ max_j |V_j| / 255 per
// moved u (such ties are rare: about one key in 10^5 at 512 keys).
// Integers: |q·k| ≤ 127² · 64 and Σ u·v ≤ 255 · 127 · 512, far from 2^31.
// Non-finite inputs follow the reference (kernel_types.h's rule): a row with a NaN or infinite
// real score, or a head with a real key of infinite V scale, gets NaN outputs; the quantization
// maps NaN to 0 and ±inf to ±127 (its scale is then inf, 1/inf = 0, inf · 0 = NaN → 0), as the
// reference's; a sequence without a real key gets zeros.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: mma.sync from
// the PTX tables, the dynamic shared memory a buffer of the test's), so the indexing is checked
// on every build.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/int8_math.h"
#include "backends/cuda/kernels/mma_int8.cuh"

namespace encrt::cuda::mma_attention_i8 {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kWarpRows = 16;                     // one m16 tile of query rows per warp
constexpr int kQueryTile = kWarps * kWarpRows;  // query rows per block
constexpr int kKeyStep = 32;                      // keys per P·V mma (k32)
constexpr int kKeyRound = 64;                     // shared-memory key rows: seq rounded up to this
constexpr int kRowPad = 16;                       // bytes after each shared row (banks, alignment)
constexpr int kRowBatch = 4;                      // rows a warp quantizes at a time
static_assert(kQueryTile % (kWarps * kRowBatch) == 0 && kKeyRound % (kWarps * kRowBatch) == 0, "whole batches");
constexpr float kFloatMinNormal = 1.17549435e-38f;  // 2^-126 (kernel_types.h's): 1 / s_p stays finite

// The dynamic shared memory of a block for head_dim D and a sequence bound seq: byte offsets,
// each a multiple of 16.
struct SharedLayout {
  int keys = 0;   // key rows: seq rounded up to kKeyRound
  int ld_qk = 0;  // bytes per Q and K row: D + kRowPad
  int ld_vt = 0;  // bytes per row (one head dimension) of V transposed: keys + kRowPad
  size_t q = 0, k = 0, vt = 0;  // int8 Q [kQueryTile][ld_qk], K [keys][ld_qk], V [D][ld_vt]
  size_t sq = 0;                // float [kQueryTile]: s_q · scale
  size_t sk = 0, sv = 0;        // float [keys]: s_k, s_v
  size_t real = 0;              // uint8 [keys]: the key is a real token
  size_t flags = 0;             // int [2][kWarps]: each warp's "V scales finite", "a real key"
  size_t bytes = 0;
};
__host__ __device__ inline SharedLayout shared_layout(int D, int seq) {
  SharedLayout l;
  l.keys = (seq + kKeyRound - 1) / kKeyRound * kKeyRound;
  l.ld_qk = D + kRowPad;
  l.ld_vt = l.keys + kRowPad;
  size_t off = 0;
  l.q = off, off += static_cast<size_t>(kQueryTile) * static_cast<size_t>(l.ld_qk);
  l.k = off, off += static_cast<size_t>(l.keys) * static_cast<size_t>(l.ld_qk);
  l.vt = off, off += static_cast<size_t>(D) * static_cast<size_t>(l.ld_vt);
  l.sq = off, off += sizeof(float) * kQueryTile;
  l.sk = off, off += sizeof(float) * static_cast<size_t>(l.keys);
  l.sv = off, off += sizeof(float) * static_cast<size_t>(l.keys);
  l.real = off, off += static_cast<size_t>(l.keys);
  l.flags = off, off += sizeof(int) * 2 * kWarps;
  l.bytes = (off + 15) / 16 * 16;
  return l;
}

// The logical column (k index of the P·V mma) of physical key p (0 .. 31) of a 32-key step.
__host__ __device__ inline int pv_column(int p) {
  const int nt = p >> 3, t = (p & 7) >> 1, e = p & 1;
  return (nt >= 2 ? 16 : 0) + 4 * t + 2 * (nt & 1) + e;
}

// Four bytes of shared memory at a 4-byte aligned address, as one fragment register.
__device__ __forceinline__ uint32_t word_at(const int8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

// The reference's symmetric quantization of one D-value row, by a whole warp (lane holds values
// lane + 32·e): s = max|x| / 127 (1 for an all-zero row), q = clamp(rint(x · (1/s)), ±127), NaN
// → 0. The max skips NaN (range_max, as std::max with the new value second) and is exact in any
// order, so every lane gets the reference's s.
template <int D>
__device__ __forceinline__ float quantize_row(const float (&v)[D / 32], int8_t (&q)[D / 32]) {
  float amax = 0.0f;
#pragma unroll
  for (int e = 0; e < D / 32; ++e) amax = int8::range_max(amax, fabsf(v[e]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = int8::range_max(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float s = amax > 0.0f ? int8::div_rn(amax, 127.0f) : 1.0f;
  const float inv = int8::div_rn(1.0f, s);
#pragma unroll
  for (int e = 0; e < D / 32; ++e) {
    const float r = int8::round_even(int8::mul_rn(v[e], inv));
    q[e] = isnan(r) ? int8_t{0} : static_cast<int8_t>(r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r);
  }
  return s;
}
// A row's D values for quantize_row (zeros when not loaded).
template <int D>
__device__ __forceinline__ void load_row(const float* x, bool load, int lane, float (&v)[D / 32]) {
#pragma unroll
  for (int e = 0; e < D / 32; ++e) v[e] = load ? x[lane + 32 * e] : 0.0f;
}

// Per query row (the lane's rows g and g + 8 of its warp): what the passes over the keys need.
struct RowState {
  float sq;       // s_q · scale
  float max;      // the row's max score over real keys
  float inv_sum;  // 1 / Σ exp(s − max)
  float inv_sp;   // 1 / s_p
  float sp;       // s_p
};

template <int D>
__global__ void __launch_bounds__(kThreads) attention_i8_mma_kernel(AttentionArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  static_assert(D == 32 || D == 64, "head_dim 32 or 64");
#if defined(ENCRT_CUDA_HOST_EMULATION)
  unsigned char* smem = encrt::emulation::dynamic_shared_memory();
#else
  extern __shared__ __align__(16) unsigned char smem[];
#endif
  const SharedLayout L = shared_layout(D, a.seq);
  int8_t* const qs = reinterpret_cast<int8_t*>(smem + L.q);
  int8_t* const ks = reinterpret_cast<int8_t*>(smem + L.k);
  int8_t* const vt = reinterpret_cast<int8_t*>(smem + L.vt);
  float* const sq = reinterpret_cast<float*>(smem + L.sq);
  float* const sk = reinterpret_cast<float*>(smem + L.sk);
  float* const sv = reinterpret_cast<float*>(smem + L.sv);
  uint8_t* const real = smem + L.real;
  int* const flags = reinterpret_cast<int*>(smem + L.flags);

  const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * kQueryTile;
  // The sequence's first row and length (a packed run's keys are all real: no mask). n is held
  // to seq, the shared memory's bound, whatever the offsets say.
  const int row0 = a.offsets ? a.offsets[b] : b * a.seq;
  int n = a.offsets ? a.offsets[b + 1] - row0 : a.seq;
  n = n < a.seq ? n : a.seq;
  if (q0 >= n) return;  // the whole block: no __syncthreads is reached
  const int32_t* mask = a.offsets || !a.mask ? nullptr : a.mask + static_cast<size_t>(b) * static_cast<size_t>(a.seq);
  const int H = a.heads * D;
  const size_t ld = 3 * static_cast<size_t>(H);
  const float* seq_base = static_cast<const float*>(a.qkv) + static_cast<size_t>(row0) * ld + static_cast<size_t>(h) * D;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;

  // Quantize: the block's query rows, then every key row (zeros past n), kRowBatch rows per warp
  // at a time: their loads are all issued before the first reduction waits (one row at a time
  // would put a global load's latency, ~0.5 µs, in series for each of a warp's 80 rows at
  // MiniLM's 128 tokens). A warp's flags cover its rows; lane 0 writes them (every lane has the
  // same values).
  for (int r0 = warp * kRowBatch; r0 < kQueryTile; r0 += kWarps * kRowBatch) {
    float v[kRowBatch][D / 32];
#pragma unroll
    for (int k = 0; k < kRowBatch; ++k) {
      const int i = q0 + r0 + k;
      load_row<D>(i < n ? seq_base + static_cast<size_t>(i) * ld : seq_base, i < n, lane, v[k]);
    }
#pragma unroll
    for (int k = 0; k < kRowBatch; ++k) {
      int8_t q[D / 32];
      const float s = quantize_row<D>(v[k], q);
      const int r = r0 + k;
#pragma unroll
      for (int e = 0; e < D / 32; ++e) qs[r * L.ld_qk + lane + 32 * e] = q[e];
      if (lane == 0) sq[r] = int8::mul_rn(s, a.scale);
    }
  }
  bool v_finite = true, any_real = false;
  for (int j0 = warp * kRowBatch; j0 < L.keys; j0 += kWarps * kRowBatch) {
    float kv[kRowBatch][D / 32], vv[kRowBatch][D / 32];
#pragma unroll
    for (int k = 0; k < kRowBatch; ++k) {
      const int j = j0 + k;
      const float* row = j < n ? seq_base + static_cast<size_t>(j) * ld : seq_base;
      load_row<D>(row + H, j < n, lane, kv[k]);
      load_row<D>(row + 2 * H, j < n, lane, vv[k]);
    }
#pragma unroll
    for (int k = 0; k < kRowBatch; ++k) {
      const int j = j0 + k;
      const bool is_real = j < n && (!mask || mask[j] != 0);
      int8_t kq[D / 32], vq[D / 32];
      const float s_k = quantize_row<D>(kv[k], kq);
      const float s_v = quantize_row<D>(vv[k], vq);
      const int vcol = (j & ~(kKeyStep - 1)) + pv_column(j & (kKeyStep - 1));
#pragma unroll
      for (int e = 0; e < D / 32; ++e) {
        ks[j * L.ld_qk + lane + 32 * e] = kq[e];
        vt[(lane + 32 * e) * L.ld_vt + vcol] = vq[e];
      }
      if (lane == 0) {
        sk[j] = s_k;
        sv[j] = s_v;
        real[j] = is_real ? 1 : 0;
      }
      if (is_real) {
        any_real = true;
        v_finite = v_finite && s_v <= int8::kFloatMax;
      }
    }
  }
  if (lane == 0) {
    flags[warp] = v_finite ? 1 : 0;
    flags[kWarps + warp] = any_real ? 1 : 0;
  }
  __syncthreads();  // the only barrier: everything below reads shared memory only
  v_finite = true, any_real = false;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    v_finite = v_finite && flags[w] != 0;
    any_real = any_real || flags[kWarps + w] != 0;
  }

  const int wr = warp * kWarpRows;  // the warp's first row in the query tile
  if (q0 + wr >= n) return;         // warp-uniform; no barrier follows
  const int g = lane >> 2, t = lane & 3;
  float* const out = static_cast<float*>(a.out) + static_cast<size_t>(row0) * static_cast<size_t>(H) +
                     static_cast<size_t>(h) * D;
  // This lane's outputs: rows g (r = 0) and g + 8 (r = 1), dimensions dt·8 + 2t, + 1.
  auto store = [&](const int32_t (&o)[D / 8][4], const float (&sp)[2], const bool (&nan_row)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int i = q0 + wr + g + 8 * r;
      if (i >= n) continue;
      float* row = out + static_cast<size_t>(i) * static_cast<size_t>(H);
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        float2 v;
        v.x = nan_row[r] ? int8::quiet_nan() : int8::mul_rn(static_cast<float>(o[dt][2 * r]), sp[r]);
        v.y = nan_row[r] ? int8::quiet_nan() : int8::mul_rn(static_cast<float>(o[dt][2 * r + 1]), sp[r]);
        *reinterpret_cast<float2*>(row + dt * 8 + 2 * t) = v;
      }
    }
  };
  int32_t o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0;
  if (!any_real) {  // no real key in the sequence: zeros (the reference's)
    const float zero[2] = {0.0f, 0.0f};
    const bool keep[2] = {false, false};
    store(o, zero, keep);
    return;
  }

  // Q's A fragments for the D / 32 k-steps of Q·Kᵀ.
  uint32_t qa[D / 32][4];
#pragma unroll
  for (int kt = 0; kt < D / 32; ++kt) {
    qa[kt][0] = word_at(qs + (wr + g) * L.ld_qk + kt * 32 + 4 * t);
    qa[kt][1] = word_at(qs + (wr + g + 8) * L.ld_qk + kt * 32 + 4 * t);
    qa[kt][2] = word_at(qs + (wr + g) * L.ld_qk + kt * 32 + 16 + 4 * t);
    qa[kt][3] = word_at(qs + (wr + g + 8) * L.ld_qk + kt * 32 + 16 + 4 * t);
  }
  RowState rs[2];
  rs[0].sq = sq[wr + g];
  rs[1].sq = sq[wr + g + 8];
  const int key_end = (n + kKeyStep - 1) / kKeyStep * kKeyStep;  // ≤ L.keys: rows past n are zeros

  // The scores of keys j8 .. j8 + 7 for the lane's rows: c[e] row g, key j8 + 2t + e; c[2 + e]
  // row g + 8. S = float(dot) · (s_q · scale) · s_k, rounded as the reference's.
  auto scores = [&](int j8, float (&s)[4]) {
    int32_t c[4] = {0, 0, 0, 0};
#pragma unroll
    for (int kt = 0; kt < D / 32; ++kt)
      mma_m16n8k32_s8s8(c, qa[kt], word_at(ks + (j8 + g) * L.ld_qk + kt * 32 + 4 * t),
               word_at(ks + (j8 + g) * L.ld_qk + kt * 32 + 16 + 4 * t));
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float skey = sk[j8 + 2 * t + (e & 1)];
      s[e] = int8::mul_rn(int8::mul_rn(static_cast<float>(c[e]), rs[e >> 1].sq), skey);
    }
  };
  // P' = (exp(s − max) · (1 / sum)) · s_v: passes 2 and 3 run these same instructions.
  auto scaled_prob = [&](float s, const RowState& r, float s_v) {
    return int8::mul_rn(int8::mul_rn(expf(s - r.max), r.inv_sum), s_v);
  };

  // Pass 1: max, finiteness, sum (each lane over its keys with a running max of its own).
  float lmax[2] = {-INFINITY, -INFINITY}, lsum[2] = {0.0f, 0.0f}, bad[2] = {0.0f, 0.0f};
  for (int j8 = 0; j8 < key_end; j8 += 8) {
    float s[4];
    scores(j8, s);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (!real[j8 + 2 * t + (e & 1)]) continue;
      const int r = e >> 1;
      if (!(fabsf(s[e]) <= int8::kFloatMax)) bad[r] = 1.0f;  // NaN or ±inf
      if (s[e] > lmax[r]) {
        lsum[r] = lsum[r] * expf(lmax[r] - s[e]) + 1.0f;  // exp(-inf) = 0 at the first key
        lmax[r] = s[e];
      } else {
        lsum[r] += expf(s[e] - lmax[r]);
      }
    }
  }
  bool nan_row[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = lmax[r];
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
    // A lane without a real key of the row adds 0 (its lsum is 0; the -inf difference is not
    // taken). In a row that is not NaN, m is finite and the sum at least 1 (the max's own term).
    float part = lmax[r] == -INFINITY ? 0.0f : lsum[r] * expf(lmax[r] - m);
    part += __shfl_xor_sync(0xffffffffu, part, 1);
    part += __shfl_xor_sync(0xffffffffu, part, 2);
    float b8 = bad[r];
    b8 = fmaxf(b8, __shfl_xor_sync(0xffffffffu, b8, 1));
    b8 = fmaxf(b8, __shfl_xor_sync(0xffffffffu, b8, 2));
    nan_row[r] = b8 != 0.0f || !v_finite;
    rs[r].max = nan_row[r] ? 0.0f : m;  // (a NaN row's later passes compute values nobody stores)
    rs[r].inv_sum = nan_row[r] ? 0.0f : int8::div_rn(1.0f, part);
  }

  // Pass 2: max P' over the row's real keys; s_p = max P' / 255 (1 below float's smallest normal).
  float pmax[2] = {0.0f, 0.0f};
  for (int j8 = 0; j8 < key_end; j8 += 8) {
    float s[4];
    scores(j8, s);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = j8 + 2 * t + (e & 1);
      if (!real[key]) continue;
      pmax[e >> 1] = int8::range_max(pmax[e >> 1], scaled_prob(s[e], rs[e >> 1], sv[key]));
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float m = pmax[r];
    m = int8::range_max(m, __shfl_xor_sync(0xffffffffu, m, 1));
    m = int8::range_max(m, __shfl_xor_sync(0xffffffffu, m, 2));
    const float sp = int8::div_rn(m, 255.0f);
    rs[r].sp = sp >= kFloatMinNormal ? sp : 1.0f;
    rs[r].inv_sp = int8::div_rn(1.0f, rs[r].sp);
  }

  // Pass 3: u = rint(P' / s_p) into P's A fragment (the key order of pv_column), O += u·v.
  for (int j0 = 0; j0 < key_end; j0 += kKeyStep) {
    uint32_t pa[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      float s[4];
      scores(j0 + nt * 8, s);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = j0 + nt * 8 + 2 * t + (e & 1), r = e >> 1;
        uint32_t u = 0;
        if (real[key]) {
          const float x = int8::round_even(int8::mul_rn(scaled_prob(s[e], rs[r], sv[key]), rs[r].inv_sp));
          u = x >= 255.0f ? 255u : x > 0.0f ? static_cast<uint32_t>(x) : 0u;  // x ≤ 255 (pass 2's max)
        }
        pa[(nt >= 2 ? 2 : 0) + r] |= u << (8 * (2 * (nt & 1) + (e & 1)));
      }
    }
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      const int8_t* vrow = vt + (dt * 8 + g) * L.ld_vt + j0;
      mma_m16n8k32_u8s8(o[dt], pa, word_at(vrow + 4 * t), word_at(vrow + 16 + 4 * t));
    }
  }
  const float sp[2] = {rs[0].sp, rs[1].sp};
  store(o, sp, nan_row);
}

}  // namespace encrt::cuda::mma_attention_i8
