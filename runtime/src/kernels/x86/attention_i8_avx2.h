// The int8 attention of ymm registers for one (sequence, head), computing what ref::attention_i8
// computes, as a template over its integer products (`Products`): qs8_attention__avx2
// (attention_i8_avx2.cpp; AVX2, and AVX-512 CPUs without VNNI) and qs8_attention__avxvnni
// (attention_i8_avxvnni.cpp; AVX-VNNI's VEX vpdpbusd, Alder Lake-class cores without AVX-512). The
// scheme, the exact parts and the softmax shortcut are those of attention_i8_avx512.h (see there).
// Include only from files built with AVX2 flags; everything here has internal linkage.
//
// The products group kGroup consecutive depths (Q·Kᵀ) or keys (P·V) into one 32-bit lane, so
// that a K or V panel row of 8 keys or dims is one ymm and the broadcast operand one dword:
//   widened (AVX2 has no u8×s8 dot product that cannot saturate: vpmaddubsw adds two products in
//            int16): the values widened to int16, kGroup 2, vpmaddwd + vpaddd, two exact int16
//            products per int32 lane. q and k both signed, so no compensation; u in [0, 255] as
//            int16.
//   vnni     bytes, kGroup 4, vpdpbusd (u8 × s8, four exact products per int32 lane, no
//            saturation): the queries stored as q + 128 (unsigned), the keys and values signed, u
//            unsigned; each key's accumulators start at -128 · Σ_d k_d, which removes the +128.
// The integer sums are the same exact integers either way, so both kernels give the same bits.
// Tiles: 6 query rows × 16 keys (12 ymm accumulators) for the scores, 6 rows × 16 dims for P·V,
// each multiply-add an asm block that keeps the accumulators in registers (Products::madd). The
// score tiles also fold each row's maximum and non-finite check (row_max, row_bad), so the softmax
// starts at the exponentials.
//
// The softmax is attention_i8_avx512.h's, in base 2 with the per-key V scale folded into the
// exponent: the score tiles store y_j = S_j · log2 e + (log2 s_v,j - C) instead of S_j, and one pass
// per query row gives t_j = 255 · 2^(y_j - max y) = 255 · w_j / max w (w_j = e^(S_j) s_v,j), u_j =
// rint(t_j) and s_p = 1 / Σ_j (t_j / s_v,j), with no exp of S itself and no second pass over the
// weights. Its accuracy against the reference is attention_i8_avx512.h's (the same roundings, the
// same 2^t polynomial: exp2_x255_avx2; log2 s_v from the C library, within kLog2MaxAbsError).
#pragma once

#include <cmath>
#include <cstring>

#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_avx2.h"
#include "kernels/attention_keys.h"
#include "kernels/attention_pairs.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {
namespace ymm_attention {

constexpr int kRows = 6;  // query rows per tile
constexpr float kLog2e = 1.44269504088896341f;
// log2 s_v - C of the key slots past the real keys, and y of a masked pair: 2^(y - W) is 0 there.
constexpr float kNoKey = -1.0e30f;

int int_max(int a, int b) { return a > b ? a : b; }  // no std:: template in an ISA-flagged header

size_t align64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

struct Dims {
  int seq, dim;
  int depth_groups;  // ceil(D / kGroup): groups of a quantized row (one dword each)
  int dim_panels;    // ceil(D / 8): 8-dim panels of the transposed V
  int key_slots;     // round_up(seq, 16): keys of K panels, score tiles cover 16 keys
  int key_groups;    // ceil(seq / kGroup): kGroup-key groups of the transposed V
  size_t row_ld;     // values per quantized row buffer: 8 · dim_panels (>= kGroup · depth_groups)
  size_t score_ld;   // floats per score row
  size_t u_ld;       // values per u row
};

Dims dims_of(int S, int D, int group) {
  Dims d;
  d.seq = S;
  d.dim = D;
  d.depth_groups = ceil_div(D, group);
  d.dim_panels = ceil_div(D, 8);
  d.key_slots = round_up(S, 16);
  d.key_groups = ceil_div(S, group);
  d.row_ld = static_cast<size_t>(d.dim_panels) * 8;
  d.score_ld = static_cast<size_t>(d.key_slots);
  d.u_ld = static_cast<size_t>(d.key_slots);
  return d;
}

// KV: the type of quantized keys and values (int16 widened, int8); Q: of the queries (int16,
// uint8 q + 128); U: of u (int16, uint8).
template <class P>
struct Scratch {
  using KV = typename P::KV;
  using Q = typename P::Q;
  using U = typename P::U;
  int32_t* keys;      // [seq] indices of the real keys, ascending
  KV* k_panels;       // [key_slots / 8][depth_groups][8][kGroup]
  int32_t* k_start;   // [key_slots] each key's score accumulators' start (vnni: -128 · Σ_d k_d)
  float* k_scale;     // [key_slots]
  float* v_scale;     // [key_slots]
  float* inv;         // [key_slots] 1 / s of the rows being quantized
  KV* v_panels;       // [dim_panels][key_groups][8][kGroup]
  KV* rows8;          // [8][row_ld] quantized rows before transposing or interleaving
  Q* q;               // [kRows][row_ld] quantized queries
  float* q_scale;     // [kRows] s_q · scale · log2 e
  float* v_log2;      // [key_slots] log2 s_v - C (kNoKey past the real keys)
  float* v_inv;       // [key_slots] 2^-E / s_v (0 past the real keys)
  float* scores;      // [kRows][score_ld] the base-2 exponents y
  U* u;               // [kRows][u_ld]
  float* s_p;         // [kRows]
  float* row_max;     // [kRows][8] lane-wise max of each row's exponents y over the real keys
  float* row_bad;     // [kRows][8] lanes that saw a real key's y NaN or beyond ±FLT_MAX
};

template <class P>
size_t layout(const Dims& d, unsigned char* base, Scratch<P>* s) {
  size_t off = 0;
  auto take = [&](size_t bytes) {
    unsigned char* p = base ? base + off : nullptr;
    off += align64(bytes);
    return p;
  };
  const size_t slots = static_cast<size_t>(d.key_slots);
  using KV = typename P::KV;
  Scratch<P> t;
  t.keys = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * d.seq));
  t.k_panels = reinterpret_cast<KV*>(take(slots * d.depth_groups * P::kGroup * sizeof(KV)));
  t.k_start = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * slots));
  t.k_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.inv = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_log2 = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_inv = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_panels = reinterpret_cast<KV*>(take(static_cast<size_t>(d.dim_panels) * d.key_groups * 8 * P::kGroup * sizeof(KV)));
  t.rows8 = reinterpret_cast<KV*>(take(8 * d.row_ld * sizeof(KV)));
  t.q = reinterpret_cast<typename P::Q*>(take(kRows * d.row_ld * sizeof(typename P::Q)));
  t.q_scale = reinterpret_cast<float*>(take(sizeof(float) * kRows));
  t.scores = reinterpret_cast<float*>(take(sizeof(float) * kRows * d.score_ld));
  t.u = reinterpret_cast<typename P::U*>(take(kRows * d.u_ld * sizeof(typename P::U)));
  t.s_p = reinterpret_cast<float*>(take(sizeof(float) * kRows));
  t.row_max = reinterpret_cast<float*>(take(sizeof(float) * kRows * 8));
  t.row_bad = reinterpret_cast<float*>(take(sizeof(float) * kRows * 8));
  if (s) *s = t;
  return off;
}

// One group (a dword: kGroup values) broadcast to the 8 lanes.
template <class T>
ENCRT_X86_INLINE __m256i broadcast_group(const T* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// 8 int32 in [-32768, 32767] to 8 int16 (in order).
ENCRT_X86_INLINE __m128i narrow_to_int16(__m256i v) {
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(v, v), 0x08);
  return _mm256_castsi256_si128(packed);
}

// 8 int32 to dst[0..8) as T: int16, int8 (values in [-128, 127]) or uint8 (in [0, 255]).
template <class T>
ENCRT_X86_INLINE void store8(__m256i v, T* dst) {
  if constexpr (sizeof(T) == 2) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), narrow_to_int16(v));
  } else {
    const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i bytes = static_cast<T>(-1) < 0 ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), bytes);
  }
}

// 4 × 8 int32 (in order a, b, c, d) to dst[0..32) as T: int16 or uint8 (values in [0, 255]):
// one pack per pair of vectors (packs work within 128-bit lanes) and one cross-lane permute per
// 32-byte store, instead of store8's four operations per 8 values.
template <class T>
ENCRT_X86_INLINE void store32(__m256i a, __m256i b, __m256i c, __m256i d, T* dst) {
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);  // lane L: a, b (then c, d) of 4L..4L+3
  if constexpr (sizeof(T) == 2) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permute4x64_epi64(ab, 0xd8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16), _mm256_permute4x64_epi64(cd, 0xd8));
  } else {
    static_assert(static_cast<T>(-1) > 0, "bytes of u are unsigned");
    // Dword k of lane L: values 4L..4L+3 of a, b, c, d for k = 0..3; gather a's, then b's, ...
    const __m256i bytes = _mm256_packus_epi16(ab, cd);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst),
                        _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
}

// max |x| over one row of D floats (a NaN leaves the maximum as std::max does: vmaxps returns its
// second operand when either is NaN).
ENCRT_X86_INLINE float row_absmax(const float* x, int D) {
  __m256 amax = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  int d = 0;
  for (; d + 8 <= D; d += 8) amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + d)), amax);
  if (d < D) amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_maskload_ps(x + d, lanes_avx2(D - d))), amax);
  return reduce_max_avx2(amax);
}

// The reference's scales of n rows from their maxima m (in place: m[i] becomes s = max|x| / 127,
// 1 for an all-zero row) and inv[i] = 1 / s, 8 rows per vdivps (rounded as vdivss: the same bits),
// so that no division stands in one row's chain.
void row_scales(float* m, int n, float* inv) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), d127 = _mm256_set1_ps(127.0f);
  for (int i = 0; i < n; i += 8) {
    const __m256i mask = lanes_avx2(n - i);
    const __m256 mv = _mm256_maskload_ps(m + i, mask);
    const __m256 s = _mm256_blendv_ps(one, _mm256_div_ps(mv, d127), _mm256_cmp_ps(mv, zero, _CMP_GT_OQ));
    _mm256_maskstore_ps(m + i, mask, s);
    _mm256_maskstore_ps(inv + i, mask, _mm256_div_ps(one, s));
  }
}

// Symmetric int8 of one row of D floats with inv = 1/s, exactly as the reference (q =
// clamp(rint(x · inv), -127, 127); NaN → 0), plus kOffset, stored as T in dst[0 .. 8·ceil(D/8))
// with kOffset past D.
template <int kOffset, class T>
ENCRT_X86_INLINE void quantize_row(const float* x, int D, float inv_s, T* dst) {
  const __m256 inv = _mm256_set1_ps(inv_s);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  for (int d = 0; d < D; d += 8) {
    const __m256 xv = d + 8 <= D ? _mm256_loadu_ps(x + d) : _mm256_maskload_ps(x + d, lanes_avx2(D - d));
    const __m256 y = _mm256_mul_ps(xv, inv);
    const __m256 r = _mm256_round_ps(y, _MM_FROUND_CUR_DIRECTION);
    const __m256 c = _mm256_and_ps(_mm256_min_ps(_mm256_max_ps(r, lo), hi), _mm256_cmp_ps(y, y, _CMP_ORD_Q));
    store8(_mm256_add_epi32(_mm256_cvtps_epi32(c), _mm256_set1_epi32(kOffset)), dst + d);
  }
}

struct Head {
  const float* q;
  const float* k;
  const float* v;
  size_t ld_qkv;
  float* out;
  size_t ld_out;
  float scale;
};

// 8 × 8 dwords transposed: v[i] holds dword i of rows 0..7 on return (row r was in v[r]).
ENCRT_X86_INLINE void transpose_8x8_dwords(__m256i v[8]) {
  __m256i a[8], b[8];
  for (int i = 0; i < 4; ++i) {
    a[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);      // r0 r1 dwords 0,1 | 4,5
    a[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);  // dwords 2,3 | 6,7
  }
  for (int i = 0; i < 2; ++i)
    for (int h = 0; h < 2; ++h) {
      b[4 * i + 2 * h] = _mm256_unpacklo_epi64(a[4 * i + h], a[4 * i + 2 + h]);      // rows 4i..4i+3, dword 2h | 2h+4
      b[4 * i + 2 * h + 1] = _mm256_unpackhi_epi64(a[4 * i + h], a[4 * i + 2 + h]);  // dword 2h+1 | 2h+5
    }
  for (int d = 0; d < 4; ++d) {
    v[d] = _mm256_permute2x128_si256(b[d], b[4 + d], 0x20);
    v[d + 4] = _mm256_permute2x128_si256(b[d], b[4 + d], 0x31);
  }
}

// K of the real keys into [key / 8][depth group][key % 8][kGroup] panels; slots past `real` are
// zero. Eight keys at a time: quantized into rows8, then each run of 8 depth groups (dwords)
// transposed into 8 panel rows. With a query offset, each key's k_start = -kQOffset · Σ_d k_d,
// from the panel rows (a multiply-add with bytes of 1).
template <class P>
void quantize_keys(const Head& hd, const Dims& dm, const Scratch<P>& t, int real) {
  using KV = typename P::KV;
  constexpr int kG = P::kGroup;
  const int G = dm.depth_groups;
  for (int j = 0; j < real; ++j) t.k_scale[j] = row_absmax(hd.k + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim);
  row_scales(t.k_scale, real, t.inv);
  for (int j0 = 0; j0 < round_up(real, 16); j0 += 8) {
    for (int r = 0; r < 8; ++r) {
      KV* row = t.rows8 + r * dm.row_ld;
      const int j = j0 + r;
      if (j < real)
        quantize_row<0>(hd.k + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim, t.inv[j], row);
      else
        std::memset(row, 0, dm.row_ld * sizeof(KV));
    }
    KV* panel = t.k_panels + static_cast<size_t>(j0 / 8) * G * 8 * kG;
    int g0 = 0;
    for (; g0 + 8 <= G; g0 += 8) {
      __m256i v[8];
      for (int r = 0; r < 8; ++r) v[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.rows8 + r * dm.row_ld + kG * g0));
      transpose_8x8_dwords(v);
      for (int g = 0; g < 8; ++g) _mm256_store_si256(reinterpret_cast<__m256i*>(panel + static_cast<size_t>(g0 + g) * 8 * kG), v[g]);
    }
    for (; g0 < G; ++g0)
      for (int r = 0; r < 8; ++r) std::memcpy(panel + static_cast<size_t>(g0) * 8 * kG + kG * r, t.rows8 + r * dm.row_ld + kG * g0, 4);
    // The 8 keys' Σ_d k_d from their panel rows: the products with bytes of 1, one lane per key.
    __m256i start = _mm256_setzero_si256();
    if constexpr (P::kQOffset != 0) {
      const __m256i ones = _mm256_set1_epi8(1);
      __m256i sum = _mm256_setzero_si256();
      for (int g = 0; g < G; ++g)
        P::madd(sum, ones, _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + static_cast<size_t>(g) * 8 * kG)));
      start = _mm256_mullo_epi32(sum, _mm256_set1_epi32(-P::kQOffset));
    }
    _mm256_store_si256(reinterpret_cast<__m256i*>(t.k_start + j0), start);
  }
  for (int j = real; j < round_up(real, 16); ++j) t.k_scale[j] = 0.0f;
}

// V of the real keys, transposed: v_panels[p][g][i][kk] = V[key kGroup·g + kk][8p + i], zero
// for a key past `real`. kGroup keys quantized, then interleaved into [dim][kGroup keys] order.
// Then, as attention_i8_avx512.h's quantize_values, log2 s_v - C (C = max log2 s_v) and 2^-E / s_v
// of the key slots, with 2^-E keeping it finite (E > 0 only when some s_v is below 2^-60).
// Returns 2^-E.
template <class P>
float quantize_values(const Head& hd, const Dims& dm, const Scratch<P>& t, int real) {
  using KV = typename P::KV;
  constexpr int kG = P::kGroup;
  for (int j = 0; j < real; ++j) t.v_scale[j] = row_absmax(hd.v + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim);
  row_scales(t.v_scale, real, t.inv);
  for (int g = 0; g < ceil_div(real, kG); ++g) {
    for (int kk = 0; kk < kG; ++kk) {
      const int j = kG * g + kk;
      KV* dst = t.rows8 + kk * dm.row_ld;
      if (j < real)
        quantize_row<0>(hd.v + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim, t.inv[j], dst);
      else
        std::memset(dst, 0, dm.row_ld * sizeof(KV));
    }
    for (int p = 0; p < dm.dim_panels; ++p) {
      __m128i* dst = reinterpret_cast<__m128i*>(t.v_panels + (static_cast<size_t>(p) * dm.key_groups + g) * 8 * kG);
      if constexpr (kG == 2) {  // int16: [dim][2 keys] words
        const __m128i k0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows8 + 8 * p));
        const __m128i k1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows8 + dm.row_ld + 8 * p));
        _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(k0, k1));  // dims 0-3
        _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(k0, k1));  // dims 4-7
      } else {  // bytes: [dim][4 keys]
        const __m128i k0 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.rows8 + 8 * p));
        const __m128i k1 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.rows8 + dm.row_ld + 8 * p));
        const __m128i k2 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.rows8 + 2 * dm.row_ld + 8 * p));
        const __m128i k3 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(t.rows8 + 3 * dm.row_ld + 8 * p));
        const __m128i k01 = _mm_unpacklo_epi8(k0, k1), k23 = _mm_unpacklo_epi8(k2, k3);  // [dim][2 keys]
        _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(k01, k23));  // dims 0-3
        _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(k01, k23));  // dims 4-7
      }
    }
  }
  for (int j = real; j < round_up(real, 8); ++j) t.v_scale[j] = 0.0f;
  float smin = INFINITY, smax = 0.0f;
  for (int j = 0; j < real; ++j) {
    smin = t.v_scale[j] < smin ? t.v_scale[j] : smin;
    smax = t.v_scale[j] > smax ? t.v_scale[j] : smax;
  }
  // floor(log2 smin) (ilogbf: subnormals too) only for a positive finite smin: it is +inf when
  // every real key's V row is infinite (those queries get NaN outputs, E = 0 will do). C library
  // calls, not std:: inline wrappers: this header is compiled with ISA flags.
  const int e_min = smin > 0.0f && smin <= kFloatMax ? ::ilogbf(smin) : 0;
  const int e = e_min < -60 ? -60 - e_min : 0;  // 2^e = 2^E, at most 2^89
  const float scale_up = ::ldexpf(1.0f, e);
  const float c = ::log2f(smax);
  for (int j = 0; j < dm.key_slots; ++j) {
    t.v_log2[j] = j < real ? ::log2f(t.v_scale[j]) - c : kNoKey;
    t.v_inv[j] = j < real ? 1.0f / (t.v_scale[j] * scale_up) : 0.0f;
  }
  return ::ldexpf(1.0f, -e);
}

// scores[r][c0 .. c0 + 8·NK) = the base-2 exponents y = float(dot) · (s_q · scale · log2 e) · s_k +
// (log2 s_v - C) for R query rows against key panels c0/8 .. c0/8 + NK (attention_i8_avx512.h's
// roundings); folds the y of the real keys (slots below `real`) into row_max and row_bad (|y| not
// below FLT_MAX, NaN included) while they are in registers, so that the softmax needs no pass of
// its own for the row maximum. Without kCheck the caller has proved every y finite and row_bad is
// left as it is.
template <class P, int R, int NK, bool kCheck>
void score_tile(const Dims& dm, const Scratch<P>& t, int c0, int real) {
  constexpr int kG = P::kGroup;
  const int G = dm.depth_groups;
  const typename P::KV* panel = t.k_panels + static_cast<size_t>(c0 / 8) * G * 8 * kG;
  __m256i acc[R][NK];
#pragma GCC unroll 8
  for (int c = 0; c < NK; ++c) {
    const __m256i start = P::kQOffset != 0 ? _mm256_load_si256(reinterpret_cast<const __m256i*>(t.k_start + c0 + 8 * c))
                                           : _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][c] = start;
  }
  for (int g = 0; g < G; ++g) {
    __m256i kv[NK];
#pragma GCC unroll 8
    for (int c = 0; c < NK; ++c)
      kv[c] = _mm256_load_si256(reinterpret_cast<const __m256i*>(panel + (static_cast<size_t>(c) * G + g) * 8 * kG));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i qb = broadcast_group(t.q + r * dm.row_ld + kG * g);
#pragma GCC unroll 8
      for (int c = 0; c < NK; ++c) P::madd(acc[r][c], qb, kv[c]);
    }
  }
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  const __m256 sign = _mm256_set1_ps(-0.0f), largest = _mm256_set1_ps(kFloatMax);
  __m256 mx[R], bad[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    mx[r] = _mm256_load_ps(t.row_max + 8 * r);
    if constexpr (kCheck) bad[r] = _mm256_load_ps(t.row_bad + 8 * r);
  }
#pragma GCC unroll 8
  for (int c = 0; c < NK; ++c) {
    const __m256 sk = _mm256_load_ps(t.k_scale + c0 + 8 * c);
    const __m256 vl = _mm256_load_ps(t.v_log2 + c0 + 8 * c);
    const bool tail = c0 + 8 * (c + 1) > real;
    const __m256 live = _mm256_castsi256_ps(lanes_avx2(real - c0 - 8 * c));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][c]), _mm256_set1_ps(t.q_scale[r]));
      const __m256 y = _mm256_fmadd_ps(s, sk, vl);
      _mm256_store_ps(t.scores + r * dm.score_ld + c0 + 8 * c, y);
      mx[r] = _mm256_max_ps(mx[r], tail ? _mm256_blendv_ps(neg_inf, y, live) : y);
      if constexpr (kCheck) {
        const __m256 not_finite = _mm256_cmp_ps(_mm256_andnot_ps(sign, y), largest, _CMP_NLE_UQ);
        bad[r] = _mm256_or_ps(bad[r], tail ? _mm256_and_ps(not_finite, live) : not_finite);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm256_store_ps(t.row_max + 8 * r, mx[r]);
    if constexpr (kCheck) _mm256_store_ps(t.row_bad + 8 * r, bad[r]);
  }
}

// out[i0 + r][8·p0 .. 8·(p0 + NV)) = float(Σ_g (u[r][kGroup·g + kk])_kk · V panels) · s_p[r].
template <class P, int R, int NV>
void pv_tile(const Head& hd, const Dims& dm, const Scratch<P>& t, int i0, int p0, int g_begin, int groups) {
  constexpr int kG = P::kGroup;
  __m256i acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm256_setzero_si256();
  const typename P::KV* panel = t.v_panels + static_cast<size_t>(p0) * dm.key_groups * 8 * kG;
  const size_t panel_stride = static_cast<size_t>(dm.key_groups) * 8 * kG;
  for (int g = g_begin; g < groups; ++g) {
    __m256i vv[NV];
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c)
      vv[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + c * panel_stride + static_cast<size_t>(g) * 8 * kG));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256i ub = broadcast_group(t.u + r * dm.u_ld + kG * g);
#pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) P::madd(acc[r][c], ub, vv[c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* o = hd.out + static_cast<size_t>(i0 + r) * hd.ld_out;
    const __m256 sp = _mm256_set1_ps(t.s_p[r]);
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      const int d = 8 * (p0 + c);
      const __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][c]), sp);
      if (d + 8 <= dm.dim)
        _mm256_storeu_ps(o + d, y);
      else
        _mm256_maskstore_ps(o + d, lanes_avx2(dm.dim - d), y);
    }
  }
}

template <class P>
using ScoreTileFn = void (*)(const Dims&, const Scratch<P>&, int, int);
template <class P>
using PvTileFn = void (*)(const Head&, const Dims&, const Scratch<P>&, int, int, int, int);

template <class P, int NK, bool kCheck>
constexpr ScoreTileFn<P> kScoreTiles[kRows + 1] = {nullptr,
                                                   score_tile<P, 1, NK, kCheck>,
                                                   score_tile<P, 2, NK, kCheck>,
                                                   score_tile<P, 3, NK, kCheck>,
                                                   score_tile<P, 4, NK, kCheck>,
                                                   score_tile<P, 5, NK, kCheck>,
                                                   score_tile<P, 6, NK, kCheck>};
// The score tiles of NK key panels, with the per-score non-finite check or without.
template <class P, int NK>
ScoreTileFn<P> score_tile_fn(int rows, bool check) {
  return check ? kScoreTiles<P, NK, true>[rows] : kScoreTiles<P, NK, false>[rows];
}
template <class P, int NV>
constexpr PvTileFn<P> kPvTiles[kRows + 1] = {nullptr,           pv_tile<P, 1, NV>, pv_tile<P, 2, NV>, pv_tile<P, 3, NV>,
                                             pv_tile<P, 4, NV>, pv_tile<P, 5, NV>, pv_tile<P, 6, NV>};

// The pass of the softmax over n key slots of one query row (y, v_inv, keys and u from the first
// slot on): t_j = 255 · 2^(y_j - W) (0 past the n slots), u_j = rint(t_j) into u, and with
// probs_row the unnormalized probabilities t_j · v_inv_j into probs_row[keys[j]]. Returns Σ_j t_j ·
// v_inv_j (two independent chains). Four vectors of u are packed into one 32-byte store.
// Specialized on whether probabilities are written (kProbs), so that the common pass has no test
// per vector.
template <bool kProbs, class U>
ENCRT_X86_INLINE float softmax_pass(const float* y, const float* v_inv, const int32_t* keys, int n, float w_max, U* u,
                                    float* probs_row) {
  const int nv = ceil_div(n, 8);
  const __m256 tail = _mm256_castsi256_ps(lanes_avx2(n - 8 * (nv - 1)));
  const __m256 w = _mm256_set1_ps(w_max), one = _mm256_set1_ps(1.0f);
  __m256 sum0 = _mm256_setzero_ps(), sum1 = sum0;
  // u of the 8 slots at 8c, as int32; the sum and probabilities of them.
  auto weights = [&](int c, __m256& sum) {
    // y - W as an FMA (the same rounding as a subtraction), as attention_i8_avx512.h.
    __m256 tj = exp2_x255_avx2(_mm256_fmsub_ps(_mm256_load_ps(y + 8 * c), one, w));
    if (c == nv - 1) tj = _mm256_and_ps(tj, tail);
    const __m256 vinv = _mm256_loadu_ps(v_inv + 8 * c);
    sum = _mm256_fmadd_ps(tj, vinv, sum);
    if constexpr (kProbs) {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, _mm256_mul_ps(tj, vinv));
      for (int l = 0; l < 8 && 8 * c + l < n; ++l) probs_row[keys[8 * c + l]] = lanes[l];
    }
    // rint in the current rounding mode (half to even), as the reference's nearbyint; tj <= 255.
    return _mm256_cvtps_epi32(tj);
  };
  int c = 0;
  for (; c + 4 <= nv; c += 4) {
    const __m256i u0 = weights(c, sum0), u1 = weights(c + 1, sum1);
    const __m256i u2 = weights(c + 2, sum0), u3 = weights(c + 3, sum1);
    store32(u0, u1, u2, u3, u + 8 * c);
  }
  for (; c < nv; ++c) store8(weights(c, sum0), u + 8 * c);
  return reduce_add_avx2(_mm256_add_ps(sum0, sum1));
}

// The softmax of the tile's rows over the real keys in one pass per row (the file comment): t_j =
// 255 · 2^(y_j - W) with W = max_j y_j from the score tiles (row_max), u_j = rint(t_j) into t.u[r]
// and s_p = 2^-E / Σ_j t_j · (2^-E / s_v,j) into t.s_p[r]; with probs, the probabilities t_j ·
// (2^-E / s_v,j) / Σ of the real keys into row r of probs. A row with a non-finite y (row_bad),
// or any row when v_finite is false (an infinite V scale), gets s_p = NaN and u = 0, so NaN
// outputs, and NaN probabilities (the reference's rule, kernel_types.h).
template <class P>
void softmax_quantize_rows(const Dims& dm, const Scratch<P>& t, int rows, int real, bool v_finite, float inv_scale_up,
                           float* probs, size_t probs_ld) {
  for (int r = 0; r < rows; ++r) {
    typename P::U* u = t.u + r * dm.u_ld;
    float* probs_row = probs ? probs + r * probs_ld : nullptr;
    if (!v_finite || _mm256_movemask_ps(_mm256_load_ps(t.row_bad + 8 * r)) != 0) {
      t.s_p[r] = kQuietNaN;
      std::memset(u, 0, sizeof(typename P::U) * 8 * ceil_div(real, 8));
      if (probs_row)
        for (int j = 0; j < real; ++j) probs_row[t.keys[j]] = kQuietNaN;
      continue;
    }
    const float w = reduce_max_avx2(_mm256_load_ps(t.row_max + 8 * r));
    const float* y = t.scores + r * dm.score_ld;
    const float inv_sum = 1.0f / (probs_row ? softmax_pass<true>(y, t.v_inv, t.keys, real, w, u, probs_row)
                                            : softmax_pass<false>(y, t.v_inv, t.keys, real, w, u, probs_row));
    t.s_p[r] = inv_sum * inv_scale_up;
    if (probs_row)
      for (int j = 0; j < real; ++j) probs_row[t.keys[j]] *= inv_sum;
  }
}

// With pair masks or a window (kernel_types.h): softmax_quantize_rows for one row, over the key slots
// [c_lo, c_hi) of the query tile (c_lo a multiple of 16), row r's exponents masked first as
// attention_i8_avx512.h's mask_exponents does: kNoKey where query i may not attend, y + bias ·
// log2 e else (kept above kNoKey / 4). A row without a key gets s_p = 0, u = 0 and zero
// probabilities. The non-finite rule: a NaN or infinite y of a pair the query attends, or
// v_finite false, gives s_p = NaN, u = 0 and NaN probabilities.
template <class P>
void softmax_quantize_row_pairs(const Dims& dm, const Scratch<P>& t, int r, int i, const PairMask& pm, int c_lo, int c_hi,
                                bool v_finite, float inv_scale_up, int real, float* probs_row) {
  float* y = t.scores + r * dm.score_ld;
  bool finite = v_finite;
  if (!pm.blocked && !pm.bias) {  // a window alone: the row's keys are one run of the sorted list
    int lo, hi;
    pm.keys_for_queries(t.keys, c_hi, i, i + 1, &lo, &hi);
    for (int j = c_lo; j < lo; ++j) y[j] = kNoKey;
    for (int j = int_max(hi, c_lo); j < c_hi; ++j) y[j] = kNoKey;
    for (int j = int_max(lo, c_lo); j < hi; ++j) finite &= std::fabs(y[j]) <= kFloatMax;
  } else {
    for (int j = c_lo; j < c_hi; ++j) {
      const float m = pm.apply(i, t.keys[j], 0.0f);
      if (m == -INFINITY) {
        y[j] = kNoKey;
        continue;
      }
      finite &= std::fabs(y[j]) <= kFloatMax;
      if (pm.bias) {
        const float biased = y[j] + m * kLog2e;
        y[j] = biased < 0.25f * kNoKey ? 0.25f * kNoKey : biased;  // NaN stays
      }
    }
  }
  const int nv = ceil_div(c_hi - c_lo, 8);
  typename P::U* u = t.u + r * dm.u_ld;
  if (!finite) {
    t.s_p[r] = kQuietNaN;
    std::memset(u + c_lo, 0, sizeof(typename P::U) * 8 * nv);
    if (probs_row)
      for (int j = 0; j < real; ++j) probs_row[t.keys[j]] = kQuietNaN;
    return;
  }
  const __m256 tail = _mm256_castsi256_ps(lanes_avx2(c_hi - c_lo - 8 * (nv - 1)));
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  __m256 mx = neg_inf;
  for (int c = 0; c + 1 < nv; ++c) mx = _mm256_max_ps(mx, _mm256_load_ps(y + c_lo + 8 * c));
  mx = _mm256_max_ps(mx, _mm256_blendv_ps(neg_inf, _mm256_load_ps(y + c_lo + 8 * (nv - 1)), tail));
  const float w = reduce_max_avx2(mx);
  if (!(w > 0.5f * kNoKey)) {  // no key to attend (probabilities: already 0)
    t.s_p[r] = 0.0f;
    std::memset(u + c_lo, 0, sizeof(typename P::U) * 8 * nv);
    return;
  }
  const int n = c_hi - c_lo;
  const float inv_sum = 1.0f / (probs_row ? softmax_pass<true>(y + c_lo, t.v_inv + c_lo, t.keys + c_lo, n, w, u + c_lo, probs_row)
                                          : softmax_pass<false>(y + c_lo, t.v_inv + c_lo, t.keys + c_lo, n, w, u + c_lo, probs_row));
  t.s_p[r] = inv_sum * inv_scale_up;
  if (probs_row)
    for (int j = c_lo; j < c_hi; ++j) probs_row[t.keys[j]] *= inv_sum;
}

}  // namespace ymm_attention

// The products on bytes with vpdpbusd (Dot::dpbusd(acc, a_u8, b_s8): acc += Σ_4 u8 · s8 per
// int32 lane, exact): the AVX-VNNI instruction in attention_i8_avxvnni.cpp, an emulated one in
// the tests (so that CPUs without AVX-VNNI check this code too).
template <class Dot>
struct VnniProducts {
  static constexpr int kGroup = 4;
  static constexpr int kQOffset = 128;  // queries as q + 128: vpdpbusd's unsigned operand
  using KV = int8_t;
  using Q = uint8_t;
  using U = uint8_t;
  static ENCRT_X86_INLINE void madd(__m256i& acc, __m256i a_u8, __m256i b_s8) { Dot::dpbusd(acc, a_u8, b_s8); }
};

// Scratch bytes of qs8_attention_ymm<P> for one (sequence, head).
template <class P>
size_t qs8_attention_ymm_scratch(int seq, int head_dim) {
  using namespace ymm_attention;
  return layout<P>(dims_of(seq, head_dim, P::kGroup), nullptr, nullptr);
}

// The attention of one (sequence, head) (AttentionFn) with the products of P: kGroup (2 or 4
// values per dword), KV, Q, U (the types above Scratch), kQOffset (added to the stored queries)
// and madd(acc, broadcast, panel row), acc += the group products of each lane.
template <class P>
void qs8_attention_ymm(const AttentionArgs& a, int b, int h, void* scratch) {
  using namespace ymm_attention;
  const int S = a.seq, D = a.head_dim;
  if (S <= 0 || D <= 0) return;
  const Dims dm = dims_of(S, D, P::kGroup);
  Scratch<P> t;
  layout<P>(dm, static_cast<unsigned char*>(scratch), &t);
  const size_t row0 = static_cast<size_t>(b) * S;
  const size_t hd_cols = static_cast<size_t>(a.heads) * D;
  Head hd;
  hd.q = a.qkv + row0 * a.ld_qkv + static_cast<size_t>(h) * D;
  hd.k = hd.q + hd_cols;
  hd.v = hd.q + 2 * hd_cols;
  hd.ld_qkv = static_cast<size_t>(a.ld_qkv);
  hd.out = a.out + row0 * a.ld_out + static_cast<size_t>(h) * D;
  hd.ld_out = static_cast<size_t>(a.ld_out);
  hd.scale = a.scale;
  const int32_t* mask = a.mask ? a.mask + row0 : nullptr;
  float* probs = a.probs ? a.probs + (static_cast<size_t>(b) * a.heads + h) * S * S : nullptr;

  const int real = list_real_keys(mask, S, D, hd.out, hd.ld_out, probs, t.keys);
  if (real == 0) return;
  zero_padded_probs(mask, S, real, probs);

  quantize_keys<P>(hd, dm, t, real);
  const float inv_scale_up = quantize_values<P>(hd, dm, t, real);
  bool v_finite = true;
  for (int j = 0; j < real; ++j) v_finite &= t.v_scale[j] <= kFloatMax;
  // The per-exponent non-finite check can only fire where |y| = |dot · (s_q · scale · log2 e) ·
  // s_k + v_log2| can overflow: |dot| <= 127² · D, so with every factor and v_log2 finite (|v_log2|
  // < 300 then) and the product's bound below 1e37 (a margin for the roundings) no exponent is NaN
  // or infinite and the score tiles skip the check.
  float max_sk = 0.0f;
  bool sk_finite = true;
  for (int j = 0; j < real; ++j) {
    sk_finite &= t.k_scale[j] <= kFloatMax && std::fabs(t.v_log2[j]) <= kFloatMax;
    max_sk = t.k_scale[j] > max_sk ? t.k_scale[j] : max_sk;
  }
  const int groups = ceil_div(real, P::kGroup);
  const PairMask pm = pair_mask_of(a, b);
  // Pair masks or a window: every probability starts at 0 (a window leaves most pairs unwritten).
  if (pm.active() && probs) std::memset(probs, 0, sizeof(float) * S * S);
  for (int i0 = 0, rows = 0; i0 < S; i0 += rows) {
    rows = next_tile_rows(S - i0, kRows);
    float sq[kRows], inv_q[kRows];
    for (int r = 0; r < rows; ++r) sq[r] = row_absmax(hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv, D);
    row_scales(sq, rows, inv_q);
    for (int r = 0; r < rows; ++r) {
      quantize_row<P::kQOffset>(hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv, D, inv_q[r], t.q + r * dm.row_ld);
      t.q_scale[r] = sq[r] * hd.scale * kLog2e;  // (s_q · scale) as the reference, then · log2 e
    }
    float max_q = 0.0f;
    bool bounded = sk_finite;
    for (int r = 0; r < rows; ++r) {
      const float q = std::fabs(t.q_scale[r]);
      bounded &= q <= kFloatMax;
      max_q = q > max_q ? q : max_q;
    }
    const bool check = !(bounded && 127.0 * 127.0 * D * static_cast<double>(max_q) * max_sk < 1e37);
    for (int r = 0; r < kRows; ++r) {
      _mm256_store_ps(t.row_max + 8 * r, _mm256_set1_ps(-INFINITY));
      _mm256_store_ps(t.row_bad + 8 * r, _mm256_setzero_ps());
    }
    if (pm.active()) {
      // Only the 16-key tiles holding a key some query of the tile may attend.
      int lo, hi;
      pm.keys_for_queries(t.keys, real, i0, i0 + rows, &lo, &hi);
      if (lo >= hi) {
        for (int r = 0; r < rows; ++r) std::memset(hd.out + static_cast<size_t>(i0 + r) * hd.ld_out, 0, sizeof(float) * D);
        continue;
      }
      const int c_lo = lo / 16 * 16;
      for (int c0 = c_lo; c0 < hi; c0 += 16) {
        if (hi - c0 > 8)
          score_tile_fn<P, 2>(rows, check)(dm, t, c0, real);
        else
          score_tile_fn<P, 1>(rows, check)(dm, t, c0, real);
      }
      for (int r = 0; r < rows; ++r)
        softmax_quantize_row_pairs<P>(dm, t, r, i0 + r, pm, c_lo, hi, v_finite, inv_scale_up, real,
                                   probs ? probs + static_cast<size_t>(i0 + r) * S : nullptr);
      for (int p0 = 0; p0 < dm.dim_panels; p0 += 2) {
        if (dm.dim_panels - p0 >= 2)
          kPvTiles<P, 2>[rows](hd, dm, t, i0, p0, c_lo / P::kGroup, ceil_div(hi, P::kGroup));
        else
          kPvTiles<P, 1>[rows](hd, dm, t, i0, p0, c_lo / P::kGroup, ceil_div(hi, P::kGroup));
      }
      continue;
    }
    for (int c0 = 0; c0 < real; c0 += 16) {
      if (real - c0 > 8)
        score_tile_fn<P, 2>(rows, check)(dm, t, c0, real);
      else
        score_tile_fn<P, 1>(rows, check)(dm, t, c0, real);
    }
    softmax_quantize_rows<P>(dm, t, rows, real, v_finite, inv_scale_up, probs ? probs + static_cast<size_t>(i0) * S : nullptr,
                          static_cast<size_t>(S));
    for (int p0 = 0; p0 < dm.dim_panels; p0 += 2) {
      if (dm.dim_panels - p0 >= 2)
        kPvTiles<P, 2>[rows](hd, dm, t, i0, p0, 0, groups);
      else
        kPvTiles<P, 1>[rows](hd, dm, t, i0, p0, 0, groups);
    }
  }
}

}  // namespace
}  // namespace encrt::kernels::x86
