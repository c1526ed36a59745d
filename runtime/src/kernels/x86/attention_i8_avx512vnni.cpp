// qs8_attention__avx512vnni: int8 attention for one (sequence, head) with vpdpbusd, computing
// what ref::attention_i8 computes (kernels/ref/attention_i8_ref.cpp):
//   Q, K, V per-token symmetric int8, s = max|x| / 127, q = clamp(rint(x · (1/s)), ±127);
//   S_ij = float(Σ_d q_i,d k_j,d) · (s_q,i · scale) · s_k,j;  p = softmax_j(S_i·) in fp32;
//   u_ij = rint(p_ij s_v,j / s_p,i) with s_p,i = max_j p_ij s_v,j / 255;  out = float(Σ_j u_ij v_j,d) · s_p,i.
//
// Exact parts: the quantized values and both integer dot products are the reference's bit for
// bit, and so is every score (same fp32 operations in the same order).
// Q·Kᵀ: vpdpbusd needs one unsigned operand, so each query byte is stored as q + 128 and the
// dot product corrected by 128 · Σ_d k_j,d, an int32 computed once per key:
//   Σ_d (q_d + 128) k_d - 128 Σ_d k_d = Σ_d q_d k_d   (exact in int32).
// P·V: u is already unsigned and V signed: vpdpbusd directly, summing over groups of 4 keys.
//
// The softmax uses the vector exp (relative error < 1e-7) and skips the normalization pass:
// with e_j = exp(S_j - max) and w_j = e_j s_v,j,
//   u_j = rint(w_j · (255 / max_k w_k)),   s_p = (max_k w_k) · (1/Σ_k e_k) / 255,
// the reference's ratio P'_j / s_p with Σ e cancelled. A u_j can therefore differ from the
// reference's by one step only where w_j · 255 / max w lies within ~1e-6 relative of a half
// integer; tests/kernels/test_x86_attention.cpp bounds the output by exactly those keys.
//
// Per call: the real keys are listed, their K quantized into 16-key × 4-depth panels
// (PanelN16K4, keys as N) and their V transposed into 16-dim × 4-key panels, both in scratch.
// Then per tile of 8 query rows: Q quantized, the 8 × real-keys scores materialized (8 rows ×
// 32 keys per register tile), softmax and uint8 u per row, P·V (8 rows × 32 dims per register
// tile). Padded keys never enter: their probability is exactly 0.
#include <cmath>
#include <cstring>

#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_avx512.h"
#include "kernels/x86/x86_tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kRows = 8;  // query rows per tile

size_t align64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Sizes of one call's scratch, from seq and head_dim alone (the number of real keys is not known
// when the session plans its arena).
struct Dims {
  int seq, dim;
  int depth_groups;  // ceil(D / 4): 4-byte groups of a quantized row
  int dim_panels;    // ceil(D / 16): 16-dim panels of the transposed V
  int key_slots;     // round_up(seq, 32): keys of K panels, score tiles cover 32 keys
  int key_groups;    // ceil(seq / 4): 4-key groups of the transposed V
  size_t score_ld;   // floats per score row
  size_t u_ld;       // bytes per u row
};

Dims dims_of(int S, int D) {
  Dims d;
  d.seq = S;
  d.dim = D;
  d.depth_groups = ceil_div(D, 4);
  d.dim_panels = ceil_div(D, 16);
  d.key_slots = round_up(S, 32);
  d.key_groups = ceil_div(S, 4);
  d.score_ld = static_cast<size_t>(d.key_slots);
  d.u_ld = align64(static_cast<size_t>(d.key_slots));
  return d;
}

struct Scratch {
  int32_t* keys;      // [seq] indices of the real keys, ascending
  int8_t* k_panels;   // [key_slots / 16][depth_groups][16][4]
  int32_t* k_comp;    // [key_slots] 128 · Σ_d k_j,d
  float* k_scale;     // [key_slots]
  float* v_scale;     // [key_slots]
  int8_t* v_panels;   // [dim_panels][key_groups][16][4]
  int8_t* rows4;      // [4][dim_panels · 16] quantized rows before interleaving
  uint8_t* q;         // [kRows][depth_groups · 4] quantized queries + 128
  float* q_scale;     // [kRows] s_q · scale
  float* scores;      // [kRows][score_ld] scores, then w = e · s_v
  uint8_t* u;         // [kRows][u_ld]
  float* s_p;         // [kRows]
};

// Walks the layout once; with base == null it only counts the bytes.
size_t layout(const Dims& d, unsigned char* base, Scratch* s) {
  size_t off = 0;
  auto take = [&](size_t bytes) {
    unsigned char* p = base ? base + off : nullptr;
    off += align64(bytes);
    return p;
  };
  const size_t slots = static_cast<size_t>(d.key_slots);
  const size_t row_bytes = static_cast<size_t>(d.depth_groups) * 4;
  Scratch t;
  t.keys = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * d.seq));
  t.k_panels = reinterpret_cast<int8_t*>(take(slots * row_bytes));
  t.k_comp = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * slots));
  t.k_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_panels = reinterpret_cast<int8_t*>(take(static_cast<size_t>(d.dim_panels) * d.key_groups * 64));
  t.rows4 = reinterpret_cast<int8_t*>(take(4 * static_cast<size_t>(d.dim_panels) * 16));
  t.q = reinterpret_cast<uint8_t*>(take(kRows * row_bytes));
  t.q_scale = reinterpret_cast<float*>(take(sizeof(float) * kRows));
  t.scores = reinterpret_cast<float*>(take(sizeof(float) * kRows * d.score_ld));
  t.u = reinterpret_cast<uint8_t*>(take(kRows * d.u_ld));
  t.s_p = reinterpret_cast<float*>(take(sizeof(float) * kRows));
  if (s) *s = t;
  return off;
}

// acc += Σ_4 u8(a) · s8(b) per int32 lane. As asm with the accumulator tied in place: with the
// intrinsic GCC 12 tends to copy accumulators around every step (see gemm_u8s8_avx512vnni.cpp).
ENCRT_X86_INLINE void dpbusd(__m512i& acc, __m512i a_u8, __m512i b_s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a_u8), "v"(b_s8));
}

ENCRT_X86_INLINE __m512i broadcast_4bytes(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// Symmetric int8 of one row of D floats, exactly as the reference: s = max|x| / 127 (1 when the
// row is all zero), q = clamp(rint(x · (1/s)), -127, 127), NaN → 0. Writes the int8 values plus
// `offset` (0, or 128 for the unsigned queries) into dst[0 .. 16·ceil(D/16)) (zero values past
// D), returns s, and Σ_d q_d in *sum if sum is not null.
float quantize_row(const float* x, int D, int offset, int8_t* dst, int32_t* sum) {
  __m512 amax = _mm512_setzero_ps();
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int d = 0; d < D; d += 16) {
    const __m512 a = _mm512_andnot_ps(sign, _mm512_maskz_loadu_ps(lanes_avx512(D - d), x + d));
    amax = _mm512_max_ps(a, amax);  // a NaN leaves amax unchanged, as std::max(amax, NaN)
  }
  const float m = _mm512_reduce_max_ps(amax);
  const float s = m > 0.0f ? m / 127.0f : 1.0f;
  const __m512 inv = _mm512_set1_ps(1.0f / s);
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512i off = _mm512_set1_epi32(offset);
  __m512i total = _mm512_setzero_si512();
  for (int d = 0; d < D; d += 16) {
    const __mmask16 lanes = lanes_avx512(D - d);
    const __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + d), inv);
    const __m512 r = _mm512_roundscale_ps(y, _MM_FROUND_CUR_DIRECTION);
    const __m512 c = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
    const __mmask16 keep = _mm512_cmp_ps_mask(y, y, _CMP_ORD_Q) & lanes;
    const __m512i qi = _mm512_maskz_cvtps_epi32(keep, c);
    total = _mm512_add_epi32(total, qi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + d), _mm512_cvtepi32_epi8(_mm512_add_epi32(qi, off)));
  }
  if (sum) *sum = _mm512_reduce_add_epi32(total);
  return s;
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

// K of the real keys into PanelN16K4 panels (keys as N, head_dim as K), with their scales and
// 128 · Σk; key slots from `real` to key_slots are zero.
void quantize_keys(const Head& hd, const Dims& dm, const Scratch& t, int real) {
  const int G = dm.depth_groups;
  for (int j = 0; j < real; ++j) {
    int32_t sum = 0;
    t.k_scale[j] = quantize_row(hd.k + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim, 0, t.rows4, &sum);
    t.k_comp[j] = 128 * sum;
    int8_t* panel = t.k_panels + (static_cast<size_t>(j / 16) * G) * 64 + (j % 16) * 4;
    for (int g = 0; g < G; ++g) std::memcpy(panel + static_cast<size_t>(g) * 64, t.rows4 + 4 * g, 4);
  }
  const int slots = round_up(real, 32);
  for (int j = real; j < slots; ++j) {
    t.k_scale[j] = 0.0f;
    t.k_comp[j] = 0;
    int8_t* panel = t.k_panels + (static_cast<size_t>(j / 16) * G) * 64 + (j % 16) * 4;
    for (int g = 0; g < G; ++g) std::memset(panel + static_cast<size_t>(g) * 64, 0, 4);
  }
}

// V of the real keys, transposed: v_panels[p][g][i][kk] = V[key 4g + kk][16p + i], zero for
// keys from `real` to the next multiple of 4. Quantized 4 keys at a time, then interleaved
// bytewise (keys 0,1 and 2,3) and wordwise (pairs 01 and 23) into [dim][4 keys] order.
void quantize_values(const Head& hd, const Dims& dm, const Scratch& t, int real) {
  const size_t row = static_cast<size_t>(dm.dim_panels) * 16;
  for (int g = 0; g < ceil_div(real, 4); ++g) {
    for (int kk = 0; kk < 4; ++kk) {
      const int j = 4 * g + kk;
      int8_t* dst = t.rows4 + kk * row;
      if (j < real)
        t.v_scale[j] = quantize_row(hd.v + static_cast<size_t>(t.keys[j]) * hd.ld_qkv, dm.dim, 0, dst, nullptr);
      else
        std::memset(dst, 0, row);
    }
    for (int p = 0; p < dm.dim_panels; ++p) {
      const __m128i k0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows4 + 0 * row + 16 * p));
      const __m128i k1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows4 + 1 * row + 16 * p));
      const __m128i k2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows4 + 2 * row + 16 * p));
      const __m128i k3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.rows4 + 3 * row + 16 * p));
      const __m128i k01_lo = _mm_unpacklo_epi8(k0, k1), k01_hi = _mm_unpackhi_epi8(k0, k1);
      const __m128i k23_lo = _mm_unpacklo_epi8(k2, k3), k23_hi = _mm_unpackhi_epi8(k2, k3);
      __m128i* dst = reinterpret_cast<__m128i*>(t.v_panels + (static_cast<size_t>(p) * dm.key_groups + g) * 64);
      _mm_storeu_si128(dst + 0, _mm_unpacklo_epi16(k01_lo, k23_lo));  // dims 0-3
      _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(k01_lo, k23_lo));  // dims 4-7
      _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(k01_hi, k23_hi));  // dims 8-11
      _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(k01_hi, k23_hi));  // dims 12-15
    }
  }
  for (int j = real; j < round_up(real, 16); ++j) t.v_scale[j] = 0.0f;
}

// scores[r][c0 .. c0 + 16·NK) for R query rows against key panels c0/16 .. c0/16 + NK.
template <int R, int NK>
void score_tile(const Dims& dm, const Scratch& t, int c0) {
  const int G = dm.depth_groups;
  const size_t q_ld = static_cast<size_t>(G) * 4;
  const int8_t* panel = t.k_panels + static_cast<size_t>(c0 / 16) * G * 64;
  __m512i acc[R][NK];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) acc[r][c] = _mm512_setzero_si512();
  for (int g = 0; g < G; ++g) {
    __m512i kv[NK];
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) kv[c] = _mm512_load_si512(panel + (static_cast<size_t>(c) * G + g) * 64);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i qb = broadcast_4bytes(t.q + r * q_ld + 4 * g);
      #pragma GCC unroll 8
      for (int c = 0; c < NK; ++c) dpbusd(acc[r][c], qb, kv[c]);
    }
  }
  #pragma GCC unroll 8
  for (int c = 0; c < NK; ++c) {
    const __m512i comp = _mm512_load_si512(t.k_comp + c0 + 16 * c);
    const __m512 sk = _mm512_load_ps(t.k_scale + c0 + 16 * c);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      // float(dot) · (s_q · scale) · s_k, in the reference's order.
      const __m512 dot = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][c], comp));
      const __m512 s = _mm512_mul_ps(_mm512_mul_ps(dot, _mm512_set1_ps(t.q_scale[r])), sk);
      _mm512_store_ps(t.scores + r * dm.score_ld + c0 + 16 * c, s);
    }
  }
}

// out[i0 + r][16·p0 .. 16·(p0 + NV)) = float(Σ_g u[r][4g..4g+3] · V panels) · s_p[r].
template <int R, int NV>
void pv_tile(const Head& hd, const Dims& dm, const Scratch& t, int i0, int p0, int groups) {
  __m512i acc[R][NV];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_si512();
  const int8_t* panel = t.v_panels + static_cast<size_t>(p0) * dm.key_groups * 64;
  const size_t panel_stride = static_cast<size_t>(dm.key_groups) * 64;
  for (int g = 0; g < groups; ++g) {
    __m512i vv[NV];
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) vv[c] = _mm512_loadu_si512(panel + c * panel_stride + static_cast<size_t>(g) * 64);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i ub = broadcast_4bytes(t.u + r * dm.u_ld + 4 * g);
      #pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) dpbusd(acc[r][c], ub, vv[c]);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* o = hd.out + static_cast<size_t>(i0 + r) * hd.ld_out;
    const __m512 sp = _mm512_set1_ps(t.s_p[r]);
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      const int d = 16 * (p0 + c);
      _mm512_mask_storeu_ps(o + d, lanes_avx512(dm.dim - d), _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][c]), sp));
    }
  }
}

using ScoreTileFn = void (*)(const Dims&, const Scratch&, int);
using PvTileFn = void (*)(const Head&, const Dims&, const Scratch&, int, int, int);

template <int NK>
constexpr ScoreTileFn kScoreTiles[kRows + 1] = {nullptr,
                                                score_tile<1, NK>,
                                                score_tile<2, NK>,
                                                score_tile<3, NK>,
                                                score_tile<4, NK>,
                                                score_tile<5, NK>,
                                                score_tile<6, NK>,
                                                score_tile<7, NK>,
                                                score_tile<8, NK>};
template <int NV>
constexpr PvTileFn kPvTiles[kRows + 1] = {nullptr,       pv_tile<1, NV>, pv_tile<2, NV>,
                                          pv_tile<3, NV>, pv_tile<4, NV>, pv_tile<5, NV>,
                                          pv_tile<6, NV>, pv_tile<7, NV>, pv_tile<8, NV>};

// Softmax of row r's scores over the real keys, then u = rint(w · 255 / max w) into t.u[r] and
// s_p into t.s_p[r]; with probs, the probabilities e / Σe of the real keys into probs_row.
void softmax_quantize_row(const Dims& dm, const Scratch& t, int r, int real, float* probs_row) {
  float* s = t.scores + r * dm.score_ld;
  const int nv = ceil_div(real, 16);
  const __mmask16 tail = lanes_avx512(real - 16 * (nv - 1));
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int c = 0; c + 1 < nv; ++c) mx = _mm512_max_ps(mx, _mm512_load_ps(s + 16 * c));
  mx = _mm512_mask_max_ps(mx, tail, mx, _mm512_load_ps(s + 16 * (nv - 1)));
  const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(mx));

  __m512 sum = _mm512_setzero_ps(), wmax = _mm512_setzero_ps();
  for (int c = 0; c < nv; ++c) {
    __m512 e = exp_avx512(_mm512_sub_ps(_mm512_load_ps(s + 16 * c), vmax));
    if (c == nv - 1) e = _mm512_maskz_mov_ps(tail, e);
    if (probs_row)
      for (int l = 0; l < 16 && 16 * c + l < real; ++l) probs_row[t.keys[16 * c + l]] = e[l];
    sum = _mm512_add_ps(sum, e);
    const __m512 w = _mm512_mul_ps(e, _mm512_load_ps(t.v_scale + 16 * c));
    wmax = _mm512_max_ps(wmax, w);
    _mm512_store_ps(s + 16 * c, w);
  }
  const float inv_sum = 1.0f / _mm512_reduce_add_ps(sum);
  const float w_max = _mm512_reduce_max_ps(wmax);
  // The reference's s_p = max_j (e_j / Σe) s_v,j / 255, 1 when that max is 0 (then every u is 0).
  const float p_max = w_max * inv_sum;
  t.s_p[r] = p_max > 0.0f ? p_max / 255.0f : 1.0f;
  const __m512 to_u = _mm512_set1_ps(p_max > 0.0f ? 255.0f / w_max : 0.0f);
  uint8_t* u = t.u + r * dm.u_ld;
  for (int c = 0; c < nv; ++c) {
    // rint in the current rounding mode (half to even), as the reference's nearbyint.
    const __m512i ui = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_load_ps(s + 16 * c), to_u));
    _mm_store_si128(reinterpret_cast<__m128i*>(u + 16 * c), _mm512_cvtepi32_epi8(ui));
  }
  if (probs_row)
    for (int j = 0; j < real; ++j) probs_row[t.keys[j]] *= inv_sum;
}

}  // namespace

size_t qs8_attention_scratch__avx512vnni(int seq, int head_dim) {
  return layout(dims_of(seq, head_dim), nullptr, nullptr);
}

void qs8_attention__avx512vnni(const AttentionArgs& a, int b, int h, void* scratch) {
  const int S = a.seq, D = a.head_dim;
  if (S <= 0 || D <= 0) return;
  const Dims dm = dims_of(S, D);
  Scratch t;
  layout(dm, static_cast<unsigned char*>(scratch), &t);
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

  int real = 0;
  for (int j = 0; j < S; ++j)
    if (!mask || mask[j] != 0) t.keys[real++] = j;
  if (real == 0) {  // no real token: zero output and probabilities, as the reference
    for (int i = 0; i < S; ++i) std::memset(hd.out + static_cast<size_t>(i) * hd.ld_out, 0, sizeof(float) * D);
    if (probs) std::memset(probs, 0, sizeof(float) * S * S);
    return;
  }
  if (probs && real < S)  // padded keys: probability exactly 0
    for (size_t i = 0; i < static_cast<size_t>(S); ++i)
      for (int j = 0; j < S; ++j)
        if (mask[j] == 0) probs[i * S + j] = 0.0f;

  quantize_keys(hd, dm, t, real);
  quantize_values(hd, dm, t, real);
  const size_t q_ld = static_cast<size_t>(dm.depth_groups) * 4;
  const int groups = ceil_div(real, 4);
  for (int i0 = 0, rows = 0; i0 < S; i0 += rows) {
    rows = next_tile_rows(S - i0, kRows);
    for (int r = 0; r < rows; ++r) {
      // Queries as q + 128 (unsigned); their bytes past D stay 128 (value 0) against zero K.
      int8_t* qr = reinterpret_cast<int8_t*>(t.q + r * q_ld);
      const float sq = quantize_row(hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv, D, 128, t.rows4, nullptr);
      std::memcpy(qr, t.rows4, q_ld);
      t.q_scale[r] = sq * hd.scale;
    }
    for (int c0 = 0; c0 < real; c0 += 32) {
      if (real - c0 > 16)
        kScoreTiles<2>[rows](dm, t, c0);
      else
        kScoreTiles<1>[rows](dm, t, c0);
    }
    for (int r = 0; r < rows; ++r)
      softmax_quantize_row(dm, t, r, real, probs ? probs + static_cast<size_t>(i0 + r) * S : nullptr);
    for (int p0 = 0; p0 < dm.dim_panels; p0 += 2) {
      if (dm.dim_panels - p0 >= 2)
        kPvTiles<2>[rows](hd, dm, t, i0, p0, groups);
      else
        kPvTiles<1>[rows](hd, dm, t, i0, p0, groups);
    }
  }
}

}  // namespace encrt::kernels::x86
