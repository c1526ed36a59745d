// What the ARM int8 attention kernels (attention_i8_neon.cpp, attention_i8_neondot.cpp) share: the
// scratch layout, the per-token quantization and everything but the products (Q·K, and P·V, which
// each kernel computes with its own instructions: hooks). The quantized values of Q, K and V and
// both integer products are the reference's (kernels/ref/attention_i8_ref.cpp) bit for bit: the
// same per-token quantization (vmaxnm skips NaNs like std::max, frintn rounds half to even like
// nearbyint) and exact integer sums.
//
// Two paths per (sequence, head):
//   dense   without pair masks or a window (every BERT-style run): the real keys are listed once
//           per head (keys[0..n)) and each query row works on that dense list in vectors, with
//           the softmax of the x86 kernels (x86/attention_i8_avx512.h), in base 2 and one pass:
//             y_j = float(dot) · (s_q · scale · log2 e) · s_k,j + (log2 s_v,j - C),
//             C = max_j log2 s_v,j;  W = max_j y_j;  t_j = 255 · 2^(y_j - W);  u_j = rint(t_j);
//             s_p = 2^-E / Σ_j t_j · (2^-E / s_v,j);  out = float(Σ_j u_j v_j,d) · s_p,
//           which is the reference's u and s_p up to rounding (u_j = rint(255 w_j / max w), w_j =
//           e^(S_j) s_v,j) with no exp of S itself and no division per key; 2^-E (a power of two)
//           keeps 1/s_v finite for tiny s_v. The contract against the reference is the x86
//           kernels' near-tie bound (tests/kernels/attention_i8_bound.h): the same exponents, the
//           same 2^x polynomial (exp2_x255_neon, kExp2MaxRelError), the C library's log2f.
//   masked  with pair masks or a window: the reference's masked path, key by key, bit for bit
//           (masked_row, with the C library's expf as the reference).
//
// Quantized rows are stored padded with zeros to a multiple of 16 bytes, so every dot product is
// whole 16-byte steps. Internal linkage, as neon_common.h: each kernel file gets its own copy,
// built with its own flags.
#pragma once

#include <cmath>
#include <cstring>

#include "kernels/arm/exp_neon.h"
#include "kernels/arm/neon_common.h"
#include "kernels/attention_pairs.h"
#include "kernels/x86/exp_coefficients.h"  // plain constants: log2 e

namespace encrt::kernels::arm {
namespace {

inline size_t align64(size_t x) { return (x + 63) & ~static_cast<size_t>(63); }
inline int round16(int x) { return (x + 15) & ~15; }

inline int round4(int x) { return (x + 3) & ~3; }

struct I8AttentionScratch {
  int8_t* q;       // [D16]
  int8_t* k;       // [S][D16]
  int8_t* v;       // [S][D16]
  float* sk;       // [S]
  float* sv;       // [S]
  float* p;        // [S16]: the dense path's exponents y by list position
  int32_t* dots;   // [S16]: Q·K of the current query row (by key, or by list position), then u
  int32_t* acc;    // [D16]: the masked path's P·V sums
  int32_t* keys;   // [S]: the dense path's real keys, in order
  float* sk_list;  // [S4]: s_k of keys[j]
  float* v_log2;   // [S4]: log2 s_v - C of keys[j]
  float* v_inv;    // [S4]: 2^-E / s_v of keys[j] (0 past n)
  int8_t* panel;   // [S4 / 4][D16 / 4][4 keys][4 bytes]: the dense list's K for the sdot hook
  int8_t* vpanel;  // [S16 / 4][D16][4 keys]: the dense list's V for the sdot hook
  int32_t* colsum; // [D16]: Σ over the dense list of V, per dim (the sdot hook)
  int8_t* u8;      // [S16]: u - 128 of the current query row (the sdot hook)
  // The hooks that compute two query rows' Q·K at once (Dense::kQueryPairs, dense_rows):
  int8_t* q2;      // [D16]: the second row's quantized Q
  int32_t* dots2;  // [S16]: its Q·K by list position
  int8_t* qpair;   // [2·D16]: the two rows' operand (the hook's layout)
  int8_t* kpairs;  // [S4][D16]: the listed keys' K in the hook's layout
  uint8_t* upair;  // [2·S16]: the two rows' u (the hook's layout)
  int8_t* vpairs;  // [S16][D16]: the listed keys' V in the hook's layout
};

inline size_t i8_attention_scratch_bytes(int seq, int head_dim) {
  const size_t d16 = static_cast<size_t>(round16(head_dim));
  const size_t s4 = static_cast<size_t>(round4(seq)), s16 = static_cast<size_t>(round16(seq));
  return align64(d16) + 2 * align64(static_cast<size_t>(seq) * d16) + 2 * align64(sizeof(float) * seq) +
         align64(sizeof(float) * s16) + align64(sizeof(int32_t) * s16) + align64(sizeof(int32_t) * d16) +
         align64(sizeof(int32_t) * seq) + 3 * align64(sizeof(float) * s4) + align64(s4 * d16) + align64(s16 * d16) +
         align64(sizeof(int32_t) * d16) + align64(s16) + align64(d16) + align64(sizeof(int32_t) * s16) +
         align64(2 * d16) + align64(s4 * d16) + align64(2 * s16) + align64(s16 * d16);
}

inline I8AttentionScratch carve_i8_attention(void* scratch, int S, int D16) {
  auto* base = static_cast<unsigned char*>(scratch);
  const size_t S4 = static_cast<size_t>(round4(S)), S16 = static_cast<size_t>(round16(S));
  I8AttentionScratch s{};
  size_t off = 0;
  s.q = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(D16));
  s.k = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(S) * D16);
  s.v = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(S) * D16);
  s.sk = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S);
  s.sv = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S);
  s.p = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S16);
  s.dots = reinterpret_cast<int32_t*>(base + off), off += align64(sizeof(int32_t) * S16);
  s.acc = reinterpret_cast<int32_t*>(base + off), off += align64(sizeof(int32_t) * D16);
  s.keys = reinterpret_cast<int32_t*>(base + off), off += align64(sizeof(int32_t) * S);
  s.sk_list = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S4);
  s.v_log2 = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S4);
  s.v_inv = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S4);
  s.panel = reinterpret_cast<int8_t*>(base + off), off += align64(S4 * D16);
  s.vpanel = reinterpret_cast<int8_t*>(base + off), off += align64(S16 * D16);
  s.colsum = reinterpret_cast<int32_t*>(base + off), off += align64(sizeof(int32_t) * D16);
  s.u8 = reinterpret_cast<int8_t*>(base + off), off += align64(S16);
  s.q2 = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(D16));
  s.dots2 = reinterpret_cast<int32_t*>(base + off), off += align64(sizeof(int32_t) * S16);
  s.qpair = reinterpret_cast<int8_t*>(base + off), off += align64(2 * static_cast<size_t>(D16));
  s.kpairs = reinterpret_cast<int8_t*>(base + off), off += align64(S4 * D16);
  s.upair = reinterpret_cast<uint8_t*>(base + off), off += align64(2 * S16);
  s.vpairs = reinterpret_cast<int8_t*>(base + off);
  return s;
}

// The reference's quantize_symmetric: s = max|x|/127 (1 for an all-zero row), q = clamp(rint(x·(1/s)),
// ±127) with NaN → 0; q is written to D16 bytes (zeros past D). Every q is in [-127, 127].
inline float quantize_symmetric(const float* x, int D, int D16, int8_t* q) {
  const int full = D & ~3;
  float32x4_t vmax = vdupq_n_f32(0.0f);
  for (int d = 0; d < full; d += 4) vmax = vmaxnmq_f32(vmax, vabsq_f32(vld1q_f32(x + d)));
  float amax = vmaxnmvq_f32(vmax);
  for (int d = full; d < D; ++d) {
    const float a = std::fabs(x[d]);
    amax = amax < a ? a : amax;
  }
  const float s = amax > 0.0f ? amax / 127.0f : 1.0f;
  const float inv = 1.0f / s;
  const float32x4_t vinv = vdupq_n_f32(inv), lo = vdupq_n_f32(-127.0f), hi = vdupq_n_f32(127.0f);
  std::memset(q, 0, static_cast<size_t>(D16));
  for (int d = 0; d < full; d += 4) {
    const float32x4_t r = vrndnq_f32(vmulq_f32(vld1q_f32(x + d), vinv));
    const uint32x4_t not_nan = vceqq_f32(r, r);
    const int32x4_t v = vandq_s32(vcvtq_s32_f32(vminq_f32(vmaxq_f32(r, lo), hi)), vreinterpretq_s32_u32(not_nan));
    const int16x4_t h = vmovn_s32(v);
    const int8x8_t b = vmovn_s16(vcombine_s16(h, h));
    std::memcpy(q + d, &b, 4);
  }
  for (int d = full; d < D; ++d) {
    const float r = std::nearbyint(x[d] * inv);
    q[d] = std::isnan(r) ? int8_t{0} : static_cast<int8_t>(r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r);
  }
  return s;
}

// P·V of one query row over keys [j_lo, j_hi) from P' (t.p): u_j = rint(P'_j / s_p), s_p =
// max P' / 255; acc[d] += u_j · v_j,d (u_j <= 255, v in [-127, 127] widened to int16), then
// out = float(acc) · s_p.
inline void accumulate_pv(const I8AttentionScratch& t, int j_lo, int j_hi, int D, int D16, float pmax, float* out) {
  // s_p = 1 below float's smallest normal (the reference's rule: 1 / s_p must not overflow).
  const float sp = pmax / 255.0f >= kFloatMinNormal ? pmax / 255.0f : 1.0f;
  const float inv_sp = 1.0f / sp;
  std::memset(t.acc, 0, sizeof(int32_t) * static_cast<size_t>(D16));
  for (int j = j_lo; j < j_hi; ++j) {
    const int32_t u = static_cast<int32_t>(std::nearbyint(t.p[j] * inv_sp));
    if (u == 0) continue;
    const int16_t u16 = static_cast<int16_t>(u);
    const int8_t* v = t.v + static_cast<size_t>(j) * D16;
    for (int d = 0; d < D16; d += 16) {
      const int8x16_t vb = vld1q_s8(v + d);
      const int16x8_t lo = vmovl_s8(vget_low_s8(vb)), hi = vmovl_s8(vget_high_s8(vb));
      int32_t* acc = t.acc + d;
      vst1q_s32(acc, vmlal_n_s16(vld1q_s32(acc), vget_low_s16(lo), u16));
      vst1q_s32(acc + 4, vmlal_n_s16(vld1q_s32(acc + 4), vget_high_s16(lo), u16));
      vst1q_s32(acc + 8, vmlal_n_s16(vld1q_s32(acc + 8), vget_low_s16(hi), u16));
      vst1q_s32(acc + 12, vmlal_n_s16(vld1q_s32(acc + 12), vget_high_s16(hi), u16));
    }
  }
  const int full = D & ~3;
  for (int d = 0; d < full; d += 4) vst1q_f32(out + d, vmulq_n_f32(vcvtq_f32_s32(vld1q_s32(t.acc + d)), sp));
  for (int d = full; d < D; ++d) out[d] = static_cast<float>(t.acc[d]) * sp;
}

// The reference's masked path for query row i (attention_i8_ref.cpp) over keys [j_lo, j_hi): the
// keys outside have score -inf there, exp 0 and add exactly 0 to every sum, so leaving them out
// changes no bit.
inline void masked_row(const I8AttentionScratch& t, const PairMask& pm, int i, int j_lo, int j_hi, int S, int D, int D16,
                       float sq_scaled, const int32_t* mask, bool v_finite, float* out, float* probs) {
  float max_score = -INFINITY;
  bool finite = v_finite;  // every real key's V scale, and the scores of the pairs the query attends
  for (int j = j_lo; j < j_hi; ++j) {
    if (mask && mask[j] == 0) {
      t.p[j] = -INFINITY;
      continue;
    }
    t.p[j] = pm.apply(i, j, static_cast<float>(t.dots[j]) * sq_scaled * t.sk[j]);
    if (t.p[j] != -INFINITY) finite &= std::fabs(t.p[j]) <= kFloatMax;
    max_score = max_score < t.p[j] ? t.p[j] : max_score;
  }
  if (!finite) {
    for (int d = 0; d < D; ++d) out[d] = kQuietNaN;
    if (probs)
      for (int j = 0; j < S; ++j) probs[j] = (mask && mask[j] == 0) ? 0.0f : kQuietNaN;
    return;
  }
  const float shift = max_score == -INFINITY ? 0.0f : max_score;
  float sum = 0.0f;
  for (int j = j_lo; j < j_hi; ++j) {
    t.p[j] = t.p[j] != -INFINITY ? std::exp(t.p[j] - shift) : 0.0f;
    sum += t.p[j];
  }
  const float inv_sum = sum == 0.0f ? 0.0f : 1.0f / sum;
  float pmax = 0.0f;
  if (probs)
    for (int j = 0; j < S; ++j) probs[j] = 0.0f * inv_sum;
  for (int j = j_lo; j < j_hi; ++j) {
    const bool live = t.p[j] != 0.0f;
    t.p[j] *= inv_sum;
    if (probs) probs[j] = t.p[j];
    t.p[j] = live ? t.p[j] * t.sv[j] : 0.0f;
    pmax = pmax < t.p[j] ? t.p[j] : pmax;
  }
  accumulate_pv(t, j_lo, j_hi, D, D16, pmax, out);
}

// out[d] = float(acc) · sp for the dims d0 .. d0 + 4·kVecs below D (P·V's last step).
template <int kVecs>
ENCRT_ARM_INLINE void store_scaled_sums(const int32x4_t* acc, int D, int d0, float sp, float* out) {
  for (int i = 0; i < kVecs; ++i) {
    const int d = d0 + 4 * i;
    if (d >= D) break;
    const float32x4_t y = vmulq_n_f32(vcvtq_f32_s32(acc[i]), sp);
    if (d + 4 <= D) {
      vst1q_f32(out + d, y);
    } else {
      float lanes[4];
      vst1q_f32(lanes, y);
      for (int l = 0; d + l < D; ++l) out[d + l] = lanes[l];
    }
  }
}

// The listed keys' quantized V regrouped once per head for the dense path's P·V (the sdot and the
// smull hooks): t.vpanel = [key block of 4][D16 dims][4 keys] bytes, byte d of key 4kb + kk at
// kb·4·D16 + 4d + kk, up to a multiple of 16 key slots (zero V past n); t.colsum[d] = Σ_j v_j,d over
// the n listed keys. Four keys' rows are interleaved by st4, 16 dims per store.
inline void prepare_value_panels(const I8AttentionScratch& t, int n, int D16) {
  for (int kb = 0; kb < (n + 15) / 16 * 4; ++kb) {
    int8_t* dst = t.vpanel + static_cast<size_t>(kb) * D16 * 4;
    const int8_t* src[4];
    for (int kk = 0; kk < 4; ++kk) {
      const int j = 4 * kb + kk;
      src[kk] = j < n ? t.v + static_cast<size_t>(t.keys[j]) * D16 : nullptr;
    }
    for (int d = 0; d < D16; d += 16) {
      int8x16x4_t rows;
      rows.val[0] = src[0] ? vld1q_s8(src[0] + d) : vdupq_n_s8(0);
      rows.val[1] = src[1] ? vld1q_s8(src[1] + d) : vdupq_n_s8(0);
      rows.val[2] = src[2] ? vld1q_s8(src[2] + d) : vdupq_n_s8(0);
      rows.val[3] = src[3] ? vld1q_s8(src[3] + d) : vdupq_n_s8(0);
      vst4q_s8(dst + 4 * d, rows);
    }
  }
  for (int d = 0; d < D16; ++d) t.colsum[d] = 0;
  for (int j = 0; j < n; ++j) {
    const int8_t* src = t.v + static_cast<size_t>(t.keys[j]) * D16;
    for (int d = 0; d < D16; ++d) t.colsum[d] += src[d];
  }
}

// The listed keys' quantized K regrouped once per head for the dense path's Q·K (the sdot and the
// smull hooks): t.panel = [key block of 4][depth group of 4][4 keys][4 bytes], key slots past n
// zero (up to the next multiple of 4).
inline void prepare_key_panels(const I8AttentionScratch& t, int n, int D16) {
  const int groups = D16 / 4;
  for (int kb = 0; kb < (n + 3) / 4; ++kb)
    for (int kk = 0; kk < 4; ++kk) {
      const int j = 4 * kb + kk;
      int8_t* dst = t.panel + static_cast<size_t>(kb) * groups * 16 + 4 * kk;
      if (j >= n) {
        for (int g = 0; g < groups; ++g) std::memset(dst + 16 * g, 0, 4);
        continue;
      }
      const int8_t* src = t.k + static_cast<size_t>(t.keys[j]) * D16;
      for (int g = 0; g < groups; ++g) std::memcpy(dst + 16 * g, src + 4 * g, 4);
    }
}

// The row's u_j (t.dots, 0..255) as the signed bytes u_j - 128 in t.u8, 16 keys at a time; returns
// the number of 16-key groups. Slots from the next multiple of 4 after n on hold whatever t.dots
// holds there: they meet zero V. Since Σ_j u_j v_j,d = Σ_j (u_j - 128) v_j,d + 128 · colsum[d],
// the P·V hooks multiply signed bytes and add 128 · colsum back (exact in int32).
inline int store_u_minus_128(const I8AttentionScratch& t, int n) {
  const int groups = (n + 15) / 16;
  const int16x8_t offset = vdupq_n_s16(128);
  for (int g = 0; g < groups; ++g) {
    const int32_t* u = t.dots + 16 * g;
    const int16x8_t lo = vsubq_s16(vcombine_s16(vmovn_s32(vld1q_s32(u)), vmovn_s32(vld1q_s32(u + 4))), offset);
    const int16x8_t hi = vsubq_s16(vcombine_s16(vmovn_s32(vld1q_s32(u + 8)), vmovn_s32(vld1q_s32(u + 12))), offset);
    vst1q_s8(t.u8 + 16 * g, vcombine_s8(vmovn_s16(lo), vmovn_s16(hi)));
  }
  return groups;
}

constexpr float kNoKey = -1.0e30f;  // the exponent of the slots past the listed keys: 2^(y - W) = 0

// The per-head factors of the base-2 softmax from the listed keys' V scales s_v (file comment):
// t.v_log2 = log2 s_v - C and t.v_inv = 2^-E / s_v for j < n (kNoKey and 0 up to the next multiple
// of 4); returns 2^-E. As the x86 kernels (attention_i8_avx2.h): 2^E lifts the smallest s_v to at
// least 2^-60, C = log2 of the largest; C library calls, not std:: inline wrappers.
inline float base2_value_factors(const I8AttentionScratch& t, const float* sv, int n) {
  float smin = INFINITY, smax = 0.0f;
  for (int j = 0; j < n; ++j) {
    smin = sv[j] < smin ? sv[j] : smin;
    smax = sv[j] > smax ? sv[j] : smax;
  }
  const int e_min = smin > 0.0f && smin <= kFloatMax ? ::ilogbf(smin) : 0;
  const int e = e_min < -60 ? -60 - e_min : 0;
  const float scale_up = ::ldexpf(1.0f, e);
  const float c = ::log2f(smax);
  for (int j = 0; j < round4(n); ++j) {
    t.v_log2[j] = j < n ? ::log2f(sv[j]) - c : kNoKey;
    t.v_inv[j] = j < n ? 1.0f / (sv[j] * scale_up) : 0.0f;
  }
  return ::ldexpf(1.0f, -e);
}

// The dense path (file comment) for every query row of (b, h): the n real keys are t.keys[0..n),
// with s_k in t.sk_list and the V factors of base2_value_factors. dense.prepare(t, n, D16) runs
// once, then per query row dense.dots(t, n, D16) sets t.dots[j] = Σ_d t.q[d] · k_keys[j],d for
// j < n, and dense.pv(t, n, D, D16, sp, out) writes out_d = float(Σ_j u_j · v_keys[j],d) · sp from
// the u_j in t.dots (0 past n, up to the next multiple of 4). A hook with kQueryPairs also has
// dense.dots2(t, n, D16): the same for two rows at once, t.q into t.dots and t.q2 into t.dots2
// (0 from n up to the next multiple of 4 in both), and dense.pv2(t, n, D, D16, sp0, out0, sp1,
// out1): P·V of both rows, u in t.dots and t.dots2; the rows then go in pairs, an odd last one
// through dense.dots and a pair with a non-finite row through dense.pv.
template <typename Dense>
void dense_rows(const AttentionArgs& a, int b, int h, const I8AttentionScratch& t, int n, bool v_finite,
                float inv_scale_up, Dense& dense) {
  using x86::exp_coefficients::kLog2e;
  const int S = a.seq, D = a.head_dim, D16 = round16(D);
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  dense.prepare(t, n, D16);
  const int n4 = n & ~3, vecs = (n + 3) / 4;
  // Query row i from its Q·K in r.dots (r: t, or t with the pair's second row's dots) up to P·V:
  // the exponents and the softmax into u (in r.dots); returns P·V's scale, or -1 for a row
  // whose outputs are already the reference's NaN (non-finite scores).
  auto softmax_row = [&](int i, const I8AttentionScratch& r, float sq) ENCRT_ARM_INLINE_LAMBDA -> float {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    const float q_scale = sq * a.scale * kLog2e;  // (s_q · scale) as the reference, then · log2 e
    // The exponents y, their max W and min, and whether all are finite: fmax and fmin pass a NaN
    // on, so every y is finite exactly when both extremes are.
    float32x4_t vmax = vdupq_n_f32(-INFINITY), vmin = vdupq_n_f32(INFINITY);
    for (int j = 0; j < n4; j += 4) {
      const float32x4_t s = vmulq_n_f32(vcvtq_f32_s32(vld1q_s32(r.dots + j)), q_scale);
      const float32x4_t y = vfmaq_f32(vld1q_f32(r.v_log2 + j), s, vld1q_f32(r.sk_list + j));
      vst1q_f32(r.p + j, y);
      vmax = vmaxq_f32(vmax, y);
      vmin = vminq_f32(vmin, y);
    }
    float w = vmaxvq_f32(vmax);
    float lowest = vminvq_f32(vmin);
    bool finite = v_finite && (n4 == 0 || (w <= kFloatMax && lowest >= -kFloatMax));
    for (int j = n4; j < 4 * vecs; ++j) {
      if (j >= n) {
        r.p[j] = kNoKey;
        continue;
      }
      r.p[j] = std::fma(static_cast<float>(r.dots[j]) * q_scale, r.sk_list[j], r.v_log2[j]);
      finite &= std::fabs(r.p[j]) <= kFloatMax;
      w = w < r.p[j] ? r.p[j] : w;
      lowest = lowest > r.p[j] ? r.p[j] : lowest;
    }
    if (!finite) {  // the reference's non-finite rule: NaN outputs and NaN probabilities of the real keys
      for (int d = 0; d < D; ++d) out[d] = kQuietNaN;
      if (probs)
        for (int j = 0; j < S; ++j) probs[j] = (mask && mask[j] == 0) ? 0.0f : kQuietNaN;
      return -1.0f;
    }
    // One pass: t_j = 255 · 2^(y_j - W), u_j = rint(t_j) into r.dots, Σ t_j · v_inv_j (two
    // chains), and with probabilities t_j · v_inv_j (scaled by 1/Σ below).
    // Where every y - W of the vectors wholly inside the listed keys is at least -125 (they are
    // then all normal floats), those take exp2_x255_neon_normal, the same bits for less work; the
    // last vector's slots past n (y = kNoKey) always take exp2_x255_neon.
    if (probs) std::memset(probs, 0, sizeof(float) * S);
    const float32x4_t vw = vdupq_n_f32(w);
    const int normal_vecs = lowest - w >= -125.0f ? n / 4 : 0;
    float32x4_t sum0 = vdupq_n_f32(0.0f), sum1 = sum0;
    // Keys 4c..4c+3 from their t: u into r.dots, t · v_inv into `sum` (vector c even: sum0, odd: sum1).
    auto key_vector = [&](int c, float32x4_t tj, float32x4_t& sum) ENCRT_ARM_INLINE_LAMBDA {
      const int j = 4 * c;
      const float32x4_t vinv = vld1q_f32(r.v_inv + j);
      sum = vfmaq_f32(sum, tj, vinv);
      vst1q_s32(r.dots + j, vcvtnq_s32_f32(tj));  // rint, half to even: tj <= 255
      if (probs) {
        float lanes[4];
        vst1q_f32(lanes, vmulq_f32(tj, vinv));
        for (int l = 0; l < 4 && j + l < n; ++l) probs[r.keys[j + l]] = lanes[l];
      }
    };
    auto y_w = [&](int c) ENCRT_ARM_INLINE_LAMBDA { return vsubq_f32(vld1q_f32(r.p + 4 * c), vw); };
    int c = 0;
    for (; c + 2 <= normal_vecs; c += 2) {
      key_vector(c, exp2_x255_neon_normal(y_w(c)), sum0);
      key_vector(c + 1, exp2_x255_neon_normal(y_w(c + 1)), sum1);
    }
    for (; c < vecs; ++c) key_vector(c, exp2_x255_neon(y_w(c)), (c & 1) ? sum1 : sum0);
    const float inv_sum = 1.0f / vaddvq_f32(vaddq_f32(sum0, sum1));
    if (probs)
      for (int j = 0; j < n; ++j) probs[r.keys[j]] *= inv_sum;
    return inv_sum * inv_scale_up;
  };
  auto q_row = [&](int i) { return a.qkv + (row0 + i) * a.ld_qkv + static_cast<size_t>(h) * D; };
  auto out_row = [&](int i) { return a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D; };
  for (int i = 0; i < S; ++i) {
    if constexpr (Dense::kQueryPairs) {
      if (i + 1 < S) {  // rows i and i + 1: dense.dots2 sets t.dots and t.dots2
        const float sq0 = quantize_symmetric(q_row(i), D, D16, t.q);
        const float sq1 = quantize_symmetric(q_row(i + 1), D, D16, t.q2);
        dense.dots2(t, n, D16);
        I8AttentionScratch second = t;
        second.dots = t.dots2;
        const float sp0 = softmax_row(i, t, sq0), sp1 = softmax_row(i + 1, second, sq1);
        if (!(sp0 < 0.0f) && !(sp1 < 0.0f)) {  // (a NaN scale, as before, still runs P·V)
          dense.pv2(t, n, D, D16, sp0, out_row(i), sp1, out_row(i + 1));
        } else {
          if (!(sp0 < 0.0f)) dense.pv(t, n, D, D16, sp0, out_row(i));
          if (!(sp1 < 0.0f)) dense.pv(second, n, D, D16, sp1, out_row(i + 1));
        }
        ++i;
        continue;
      }
    }
    const float sq = quantize_symmetric(q_row(i), D, D16, t.q);
    dense.dots(t, n, D16);
    const float sp = softmax_row(i, t, sq);
    if (!(sp < 0.0f)) dense.pv(t, n, D, D16, sp, out_row(i));
  }
}

// ref::attention_i8 for one (sequence b, head h). Without pair masks or a window, the dense path
// (dense_rows, with the kernel's Dense hooks: prepare, dots and pv). With them, the reference's masked
// path row by row: scores(t, j_lo, j_hi, D16, mask) sets t.dots[j] to the int32 Σ_d t.q[d]·t.k[j·D16 +
// d] for every real key j in [j_lo, j_hi) (mask null or mask[j] != 0); other entries of t.dots are
// not read; each query row goes over the keys within its window only.
template <typename ScoresFn, typename Dense>
void qs8_attention_rows(const AttentionArgs& a, int b, int h, void* scratch, ScoresFn&& scores, Dense&& dense) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim, D16 = round16(D);
  const I8AttentionScratch t = carve_i8_attention(scratch, S, D16);
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  int n = 0;  // real keys
  for (int j = 0; j < S; ++j) n += !mask || mask[j] != 0;
  if (n == 0) {  // no real key: zeros
    for (int i = 0; i < S; ++i) {
      std::memset(a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D, 0, sizeof(float) * D);
      if (a.probs) std::memset(a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S, 0, sizeof(float) * S);
    }
    return;
  }

  bool v_finite = true;  // every real key's V scale is finite (the reference's non-finite rule)
  for (int j = 0; j < S; ++j) {
    const float* row = a.qkv + (row0 + j) * a.ld_qkv + static_cast<size_t>(h) * D;
    t.sk[j] = quantize_symmetric(row + H, D, D16, t.k + static_cast<size_t>(j) * D16);
    t.sv[j] = quantize_symmetric(row + 2 * H, D, D16, t.v + static_cast<size_t>(j) * D16);
    if (!mask || mask[j] != 0) v_finite &= t.sv[j] <= kFloatMax;
  }
  const PairMask pm = pair_mask_of(a, b);
  if (!pm.active()) {
    n = 0;
    for (int j = 0; j < S; ++j)
      if (!mask || mask[j] != 0) {
        t.keys[n] = j;
        t.sk_list[n] = t.sk[j];
        t.p[n] = t.sv[j];  // the listed V scales, for a moment
        ++n;
      }
    for (int j = n; j < round4(n); ++j) t.sk_list[j] = 0.0f;
    const float inv_scale_up = base2_value_factors(t, t.p, n);
    dense_rows(a, b, h, t, n, v_finite, inv_scale_up, dense);
    return;
  }
  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    const float sq = quantize_symmetric(a.qkv + (row0 + i) * a.ld_qkv + static_cast<size_t>(h) * D, D, D16, t.q);
    const float sq_scaled = sq * a.scale;
    int j_lo, j_hi;
    pm.queries_for_keys(i, i, &j_lo, &j_hi);  // symmetric: the keys within ±window of i
    scores(t, j_lo, j_hi, D16, mask);
    masked_row(t, pm, i, j_lo, j_hi, S, D, D16, sq_scaled, mask, v_finite, out, probs);
  }
}
}  // namespace
}  // namespace encrt::kernels::arm
