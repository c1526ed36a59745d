// The int8 attention of qs8_attention__avx512vnni and qs8_attention__amx for one (sequence, head),
// computing what ref::attention_i8 computes (kernels/ref/attention_i8_ref.cpp):
//   Q, K, V per-token symmetric int8, s = max|x| / 127, q = clamp(rint(x · (1/s)), ±127);
//   S_ij = float(Σ_d q_i,d k_j,d) · (s_q,i · scale) · s_k,j;  p = softmax_j(S_i·) in fp32;
//   u_ij = rint(p_ij s_v,j / s_p,i) with s_p,i = max_j p_ij s_v,j / 255;  out = float(Σ_j u_ij v_j,d) · s_p,i.
//
// Exact parts: the quantized values of Q, K, V and both integer dot products are the reference's
// bit for bit.
//
// The two integer products are the Engine's (a template parameter): VnniEngine below (vpdpbusd in
// registers) or AmxEngine (attention_i8_amx.h: AMX tiles). Everything else, the quantization and
// the softmax, is this file's, so both give the same floats bit for bit.
//
// Layout: queries go in blocks of 16, one query per lane. For a block (VnniEngine's products):
//   Q·Kᵀ  The block's quantized queries, stored as q + 128 (vpdpbusd needs one unsigned operand),
//         are transposed into panels of [depth group of 4][16 queries] bytes; each key's 4 signed
//         bytes are broadcast against them, so one accumulator holds one key's scores for the 16
//         queries. The +128 is removed by starting the accumulator at -128 · Σ_d k_j,d:
//           Σ_d (q_d + 128) k_d - 128 Σ_d k_d = Σ_d q_d k_d   (exact in int32).
//   Softmax  With one query per lane every reduction over keys is a plain vertical max or sum.
//         The per-key scale s_v is folded into the exponent, base 2:
//           y_j = S_j · log2 e + (log2 s_v,j - C)      (C = max_j log2 s_v,j, keeps |y| small)
//           W = max_j y_j,  t_j = 255 · 2^(y_j - W) = 255 · w_j / max_k w_k,  w_j = e^(S_j) s_v,j,
//         so u_j = rint(t_j) is the reference's u (the max key gets 255) and
//           s_p = max_k w_k / (255 Σ_k e^(S_k)) = 1 / Σ_j (t_j / s_v,j),
//         one pass over the scores after the one that produced them, with no exp of S itself.
//         (1/s_v,j is kept as 2^-E / s_v,j with a power of two 2^-E that keeps it finite for tiny
//         s_v; s_p takes the 2^-E back.) The u of 4 consecutive keys are packed into one dword per
//         query: [key group][16 queries] dwords.
//   P·V   Per query row, the dword of u for a key group is broadcast against V transposed into
//         [16 dims][4 keys] panels: 8 query rows × 32 dims per register tile.
// Only the real keys enter (their indices are listed first); key slots past them, up to the
// multiple of 16 the score tiles cover, have zero K and V, weight exactly 0 and 1/s_v = 0.
//
// Accuracy against the reference, which rounds the same fp32 scores but takes e^(S - max) in fp32
// and divides: the scores here pick up a few roundings more (the log2 e and log2 s_v terms, each
// relative to |y| ~ |S|), 2^x has relative error kExp2MaxRelError, log2 kLog2MaxAbsError
// (exp_coefficients.h). So t_j, and through it u_j, can differ from the reference's where t_j
// lies within that relative error of a half integer, and s_p by about the same relative amount;
// tests/kernels/test_x86_attention.cpp derives its bound from exactly these terms.
//
// Include only from files built with AVX-512 flags (F, BW, VL, DQ): attention_i8_avx512vnni.cpp,
// attention_i8_amx.cpp and the tests' emulated AMX attention. VnniEngine's vpdpbusd is asm, so it
// assembles there too; it runs only where the CPU has AVX512-VNNI (the kernel lists' features).
#pragma once

#include <cmath>
#include <cstring>

#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_avx512.h"
#include "kernels/attention_keys.h"
#include "kernels/attention_pairs.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kLanes = 16;   // queries per block, keys per score tile
constexpr int kPvRows = 8;   // query rows per P·V register tile
constexpr float kLog2e = 1.44269504088896341f;
// log2 s_v - C of the key slots past the real keys: 2^(y - W) is exactly 0 there.
constexpr float kNoKey = -1.0e30f;

size_t align64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }
// std::max of two floats (its first when they are unordered), without std:: templates: this file is
// also compiled into a test with ISA flags (emulated_kernels.h says why that matters).
float max_float(float a, float b) { return a < b ? b : a; }

// Sizes of one call's scratch, from seq and head_dim alone (the number of real keys is not known
// when the session plans its arena).
struct Dims {
  int seq, dim;
  int groups;      // G = ceil(D / 4): 4-byte depth groups of a quantized row
  int row_bytes;   // round_up(D, 16): stride of the quantized rows (whole 16-byte stores)
  int dim_panels;  // ceil(D / 16): 16-dim panels of the transposed V
  int key_slots;   // round_up(seq, 16): keys covered by score tiles
  int key_groups;  // key_slots / 4
};

Dims dims_of(int S, int D) {
  Dims d;
  d.seq = S;
  d.dim = D;
  d.groups = ceil_div(D, 4);
  d.row_bytes = round_up(D, 16);
  d.dim_panels = ceil_div(D, 16);
  d.key_slots = round_up(S, kLanes);
  d.key_groups = d.key_slots / 4;
  return d;
}

struct Scratch {
  int32_t* keys;     // [seq] indices of the real keys, ascending
  int8_t* k_rows;    // [key_slots][row_bytes] quantized K
  int32_t* k_init;   // [key_slots] -128 · Σ_d k_j,d, the score accumulators' start (VnniEngine)
  float* k_scale;    // [key_slots] s_k
  float* v_scale;    // [key_slots] s_v
  float* v_log2;     // [key_slots] log2 s_v - C (kNoKey past the real keys)
  float* v_inv;      // [key_slots] 2^-E / s_v (0 past the real keys)
  int8_t* values;    // quantized V in the Engine's layout (Engine::value_bytes)
  int8_t* v_rows;    // [16][row_bytes] one block of quantized V rows before interleaving
  uint8_t* q_rows;   // [16][row_bytes] one block of quantized queries + Engine::kQueryOffset
  int32_t* q_panel;  // [groups][16 queries] dwords of 4 query bytes
  float* y;          // [key_slots][16 queries] base-2 exponents y_j
  uint32_t* u;       // [key_groups + Engine::kGroupsPastSlots][16 queries] u of 4 keys per dword
  float* s_p;        // [16] s_p of the block's queries
  int32_t* stage;    // Engine::kStageBytes for the Engine's own use
};

// Walks the layout once; with base == null it only counts the bytes.
template <class Engine>
size_t layout(const Dims& d, unsigned char* base, Scratch* s) {
  size_t off = 0;
  auto take = [&](size_t bytes) {
    unsigned char* p = base ? base + off : nullptr;
    off += align64(bytes);
    return p;
  };
  const size_t slots = static_cast<size_t>(d.key_slots);
  const size_t rb = static_cast<size_t>(d.row_bytes);
  Scratch t;
  t.keys = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * d.seq));
  t.k_rows = reinterpret_cast<int8_t*>(take(slots * rb));
  t.k_init = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * slots));
  t.k_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_scale = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_log2 = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.v_inv = reinterpret_cast<float*>(take(sizeof(float) * slots));
  t.values = reinterpret_cast<int8_t*>(take(Engine::value_bytes(d)));
  t.v_rows = reinterpret_cast<int8_t*>(take(kLanes * rb));
  t.q_rows = reinterpret_cast<uint8_t*>(take(kLanes * rb));
  t.q_panel = reinterpret_cast<int32_t*>(take(sizeof(int32_t) * kLanes * d.groups));
  t.y = reinterpret_cast<float*>(take(sizeof(float) * kLanes * slots));
  t.u = reinterpret_cast<uint32_t*>(take(sizeof(uint32_t) * kLanes * (d.key_groups + Engine::kGroupsPastSlots)));
  t.s_p = reinterpret_cast<float*>(take(sizeof(float) * kLanes));
  t.stage = reinterpret_cast<int32_t*>(take(Engine::kStageBytes));
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

// Brings rows (D floats each, far apart in the fused QKV matrix: one page each) towards L1 ahead
// of their quantization; row r is base + index[r]·ld (or + r·ld without index).
ENCRT_X86_INLINE void prefetch_rows(const float* base, size_t ld, const int32_t* index, int n, int D) {
  for (int r = 0; r < n; ++r) {
    const char* row = reinterpret_cast<const char*>(base + static_cast<size_t>(index ? index[r] : r) * ld);
    for (int d = 0; d < D; d += 16) _mm_prefetch(row + 4 * d, _MM_HINT_T0);
  }
}

// Lane r of the result = op over the 16 lanes of v[r]: a transposing reduction tree (30 shuffles
// and 15 ops for 16 rows, against 8 shuffles and ops per row one at a time).
template <typename Op>
ENCRT_X86_INLINE __m512 reduce_rows16(const __m512* v, Op op) {
  __m512 h[8], q[4], p[2];
  // Halves: lanes 0-7 of h[i] reduce row 2i, lanes 8-15 row 2i + 1.
  for (int i = 0; i < 8; ++i)
    h[i] = op(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
              _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  // Quarters: 128-bit lane k of q[i] reduces row 4i + k.
  for (int i = 0; i < 4; ++i)
    q[i] = op(_mm512_shuffle_f32x4(h[2 * i], h[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
              _mm512_shuffle_f32x4(h[2 * i], h[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  // Pairs: in 128-bit lane k of p[i], floats 0-1 reduce row 8i + k, floats 2-3 row 8i + 4 + k.
  for (int i = 0; i < 2; ++i)
    p[i] = op(_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(q[2 * i]), _mm512_castps_pd(q[2 * i + 1]))),
              _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(q[2 * i]), _mm512_castps_pd(q[2 * i + 1]))));
  // Singles: float m of 128-bit lane k reduces row k + 4m; then back to row order.
  const __m512 r = op(_mm512_shuffle_ps(p[0], p[1], _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(p[0], p[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r);
}

struct MaxOp {
  ENCRT_X86_INLINE __m512 operator()(__m512 a, __m512 b) const { return _mm512_max_ps(a, b); }
};
// Max of non-negative floats as their bit patterns (the same order, on the integer pipes); a
// NaN pattern is above every other.
struct MaxU32Op {
  ENCRT_X86_INLINE __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_castsi512_ps(_mm512_max_epu32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
};
struct AddI32Op {
  ENCRT_X86_INLINE __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
};

// Lane-index vectors for vpermps: kLaneIndex[r] = {r, r, ..., r}.
alignas(64) constexpr int32_t kLaneIndex[kLanes][kLanes] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},          {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},          {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3},
    {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4},          {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5},
    {6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6},          {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
    {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8},          {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
    {10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, {11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11},
    {12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12}, {13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13},
    {14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14}, {15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15}};

constexpr float kRoundBias = 12582912.0f;  // 1.5·2^23

// The second half of quantize_block: q + offset of rows[0..n) as bytes, their 1/s in the lanes
// of inv_all. y = x · (1/s) as the reference, then y + (1.5·2^23 + offset) rounds y to an integer
// in the current rounding mode, like the reference's nearbyint, and leaves q + offset in the low
// byte of the float's bits (|y| < 2^22); vpmovdb keeps exactly that byte. The addition runs as an
// FMA (y · 1 + c, the same single rounding) on the FMA pipes, which have room here.
// kClamp applies the reference's clamp to ±127 and its NaN → 0 first; without it the caller has
// made sure that |y| < 127.5 for finite y, and a NaN y (x = NaN, or inf · 0) is reported: the
// return value is false then, and the block must be redone with kClamp.
template <int kD, bool kSums, bool kClamp>
ENCRT_X86_INLINE bool quantize_rows(const float* const* rows, int n, int D, int row_bytes, int offset, uint8_t* dst,
                                    __m512 inv_all, __m512i* sums) {
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 bias = _mm512_set1_ps(kRoundBias + static_cast<float>(offset));
  __m512i seen = _mm512_setzero_si512();  // OR of every result's bits
  __m512 row_sums[kLanes];
  // The full block (all but a sequence's last) without per-row branches, so that the row loop
  // unrolls and the per-row sums stay in registers.
  const bool full = n == kLanes;
#pragma GCC unroll 16
  for (int r = 0; r < kLanes; ++r) {
    uint8_t* q = dst + static_cast<size_t>(r) * row_bytes;
    __m512i total = _mm512_setzero_si512();
    if (!full && r >= n) {
      for (int d = 0; d < row_bytes; d += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(q + d), _mm_set1_epi8(static_cast<char>(offset)));
    } else {
      // Lane r of 1/s across the vector (a permute: a store and reload would wait for the store).
      const __m512 inv = _mm512_permutexvar_ps(_mm512_load_si512(kLaneIndex[r]), inv_all);
#pragma GCC unroll 4
      for (int d = 0; d < row_bytes; d += 16) {
        __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(kD || d < D ? lanes_avx512(D - d) : 0, rows[r] + d), inv);
        if (kClamp) {
          // Clamping before rounding gives the same as after; max/min keep a NaN (their second
          // operand), which then becomes 0.
          y = _mm512_min_ps(hi, _mm512_max_ps(lo, y));
          y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, y, _CMP_ORD_Q), y);
        }
        const __m512i bits = _mm512_castps_si512(_mm512_fmadd_ps(y, one, bias));
        // Σ of the bits: Σ q plus 16 · (row_bytes / 16) times the bias's bits, taken off below
        // (int32 wraparound keeps it exact).
        if (kSums) total = _mm512_add_epi32(total, bits);
        if (!kClamp) seen = _mm512_or_si512(seen, bits);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + d), _mm512_cvtepi32_epi8(bits));
      }
    }
    row_sums[r] = _mm512_castsi512_ps(total);
  }
  if (kSums) {
    const int bias_bits = static_cast<int>(0x4b400000u) + offset;  // the bits of kRoundBias + offset
    const __m512i all_bias = _mm512_set1_epi32(static_cast<int>(static_cast<unsigned>(bias_bits) * 16u * static_cast<unsigned>(row_bytes / 16)));
    *sums = _mm512_mask_sub_epi32(_mm512_setzero_si512(), lanes_avx512(n), _mm512_castps_si512(reduce_rows16(row_sums, AddI32Op())), all_bias);
  }
  // Every finite result has the exponent of 2^23 (bits 0x4b3f.... to 0x4b40....); a NaN sets bit 29.
  return kClamp || _mm512_test_epi32_mask(seen, _mm512_set1_epi32(0x20000000)) == 0;
}

// Symmetric int8 of up to 16 rows of D floats (row r at rows[r], r < n), exactly as the
// reference: s = max|x| / 127 (1 when the row is all zero), q = clamp(rint(x · (1/s)), ±127),
// NaN → 0. Writes q + offset as bytes to dst + r · row_bytes for d < row_bytes (value 0 past D;
// rows n..15 all value 0); the scales go to *scale as a vector (1 for rows >= n), with kSums
// Σ_d q of each row to *sums (0 for rows >= n). kD: D when known at compile time (a multiple of
// 16, so row_bytes = D and no lane masks), 0 for any D.
template <int kD, bool kSums>
void quantize_block(const float* const* rows, int n, int D_any, int row_bytes_any, int offset, uint8_t* dst,
                    __m512* scale, __m512i* sums) {
  const int D = kD ? kD : D_any;
  const int row_bytes = kD ? kD : row_bytes_any;
  // max|x| per row: vrangeps 0x0b takes the operand of larger magnitude with the sign cleared,
  // one operation per 16 values. A NaN may win or lose there; the reference ignores it
  // (std::max(m, NaN) = m), so a block with a NaN is redone below in plain float max.
  __m512 amax[kLanes];
  for (int r = 0; r < kLanes; ++r) {
    __m512 m = _mm512_setzero_ps();
    if (r < n)
      for (int d = 0; d < D; d += 16) m = _mm512_range_ps(m, _mm512_maskz_loadu_ps(lanes_avx512(D - d), rows[r] + d), 0x0b);
    amax[r] = m;
  }
  const __m512 one = _mm512_set1_ps(1.0f);
  // The reference's s = amax > 0 ? amax / 127 : 1 and 1/s, both correctly rounded divisions.
  auto scales = [&](__m512 m, __m512* inv) {
    const __m512 s = _mm512_mask_div_ps(one, _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_GT_OQ), m, _mm512_set1_ps(127.0f));
    *inv = _mm512_div_ps(one, s);
    return s;
  };
  __m512 inv;
  *scale = scales(reduce_rows16(amax, MaxOp()), &inv);
  // With every s normal and finite, |x · (1/s)| <= 127 (1 + u)^3 / (1 - u) < 127.5 for each x
  // of its row (|x| <= max|x|, three roundings): the reference's clamp changes nothing and is
  // skipped, unless an input is NaN (quantize_rows reports it).
  const bool normal = _mm512_cmp_ps_mask(*scale, _mm512_set1_ps(1.17549435e-38f), _CMP_LT_OQ) == 0 &&
                      _mm512_cmp_ps_mask(*scale, _mm512_set1_ps(3.40282347e+38f), _CMP_GT_OQ) == 0;
  if (normal && quantize_rows<kD, kSums, false>(rows, n, D, row_bytes, offset, dst, inv, sums)) return;
  // A NaN input, or a subnormal (max|x| below 1.5e-36) or infinite s: max|x| again, ignoring NaN
  // as the reference does (a NaN leaves m unchanged, as std::max(m, NaN)), and the full clamp.
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int r = 0; r < kLanes; ++r) {
    __m512 m = _mm512_setzero_ps();
    if (r < n)
      for (int d = 0; d < D; d += 16)
        m = _mm512_max_ps(_mm512_andnot_ps(sign, _mm512_maskz_loadu_ps(lanes_avx512(D - d), rows[r] + d)), m);
    amax[r] = m;
  }
  *scale = scales(reduce_rows16(amax, MaxOp()), &inv);
  quantize_rows<kD, kSums, true>(rows, n, D, row_bytes, offset, dst, inv, sums);
}

// head_dim as a compile-time constant where the kernels are specialized for it (0: any).
template <int kD>
ENCRT_X86_INLINE int head_dim(const Dims& dm) {
  return kD ? kD : dm.dim;
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

// K of the real keys: rows of quantized bytes, s_k and (with kSums, for VnniEngine) the
// accumulator starts; key slots past `real` up to the next multiple of 16 get zero rows, s_k = 0
// and start 0.
template <int kD, bool kSums>
void quantize_keys(const Head& hd, const Dims& dm, const Scratch& t, int real) {
  const float* rows[kLanes];
  prefetch_rows(hd.k, hd.ld_qkv, t.keys, real < kLanes ? real : kLanes, dm.dim);
  for (int j0 = 0; j0 < real; j0 += kLanes) {
    const int n = real - j0 < kLanes ? real - j0 : kLanes;
    for (int r = 0; r < n; ++r) rows[r] = hd.k + static_cast<size_t>(t.keys[j0 + r]) * hd.ld_qkv;
    // The next block of keys, or the first of the values.
    const int next = real - j0 - kLanes < kLanes ? real - j0 - kLanes : kLanes;
    if (next > 0)
      prefetch_rows(hd.k, hd.ld_qkv, t.keys + j0 + kLanes, next, dm.dim);
    else
      prefetch_rows(hd.v, hd.ld_qkv, t.keys, real < kLanes ? real : kLanes, dm.dim);
    __m512 scale;
    __m512i sums;
    quantize_block<kD, kSums>(rows, n, dm.dim, dm.row_bytes, 0, reinterpret_cast<uint8_t*>(t.k_rows) + static_cast<size_t>(j0) * dm.row_bytes,
                              &scale, &sums);
    const __mmask16 live = lanes_avx512(n);
    _mm512_store_ps(t.k_scale + j0, _mm512_maskz_mov_ps(live, scale));
    if (kSums)
      _mm512_store_si512(t.k_init + j0, _mm512_maskz_mov_epi32(live, _mm512_mullo_epi32(sums, _mm512_set1_epi32(-128))));
  }
}

// Four keys' quantized V rows (src + kk · rb, kk < 4), dims 16p .. 16p + 16, interleaved bytewise
// (keys 0,1 and 2,3) and wordwise (pairs 01 and 23) into [dim][4 keys] order: out[m] holds dims
// 4m .. 4m + 3, one dword of 4 keys' bytes per dim.
ENCRT_X86_INLINE void interleave_keys4(const int8_t* src, size_t rb, int p, __m128i* out) {
  const __m128i k0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 0 * rb + 16 * p));
  const __m128i k1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 1 * rb + 16 * p));
  const __m128i k2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * rb + 16 * p));
  const __m128i k3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 3 * rb + 16 * p));
  const __m128i k01_lo = _mm_unpacklo_epi8(k0, k1), k01_hi = _mm_unpackhi_epi8(k0, k1);
  const __m128i k23_lo = _mm_unpacklo_epi8(k2, k3), k23_hi = _mm_unpackhi_epi8(k2, k3);
  out[0] = _mm_unpacklo_epi16(k01_lo, k23_lo);  // dims 0-3
  out[1] = _mm_unpackhi_epi16(k01_lo, k23_lo);  // dims 4-7
  out[2] = _mm_unpacklo_epi16(k01_hi, k23_hi);  // dims 8-11
  out[3] = _mm_unpackhi_epi16(k01_hi, k23_hi);  // dims 12-15
}

// V of the real keys: scales, then the quantized rows in the Engine's layout (zero for key slots
// past `real`; Engine::store_values); then log2 s_v - C and 2^-E / s_v of the key slots up to
// the next multiple of 16. Returns 2^-E.
template <int kD, class Engine>
float quantize_values(Engine& engine, const Head& hd, const Dims& dm, const Scratch& t, int real) {
  const float* rows[kLanes];
  const int slots = round_up(real, kLanes);
  for (int j0 = 0; j0 < slots; j0 += kLanes) {
    const int n = real - j0 < kLanes ? real - j0 : kLanes;
    for (int r = 0; r < n; ++r) rows[r] = hd.v + static_cast<size_t>(t.keys[j0 + r]) * hd.ld_qkv;
    // The next block of values, or the first block of queries.
    const int next = real - j0 - kLanes < kLanes ? real - j0 - kLanes : kLanes;
    if (next > 0)
      prefetch_rows(hd.v, hd.ld_qkv, t.keys + j0 + kLanes, next, dm.dim);
    else
      prefetch_rows(hd.q, hd.ld_qkv, nullptr, dm.seq < kLanes ? dm.seq : kLanes, dm.dim);
    __m512 scale;
    quantize_block<kD, false>(rows, n, dm.dim, dm.row_bytes, 0, reinterpret_cast<uint8_t*>(t.v_rows), &scale, nullptr);
    _mm512_store_ps(t.v_scale + j0, scale);
    engine.template store_values<kD>(dm, t, j0);
  }
  engine.finish_values(dm, t, slots);
  // log2 s_v - C with C = max log2 s_v, and 2^-E / s_v with 2^-E keeping it finite: E > 0 only
  // when some s_v is below 2^-60 (a V row below 1.5e-16 in magnitude).
  float smin = INFINITY, smax = 0.0f;
  for (int j = 0; j < real; ++j) {
    smin = t.v_scale[j] < smin ? t.v_scale[j] : smin;
    smax = t.v_scale[j] > smax ? t.v_scale[j] : smax;
  }
  // floor(log2 smin) stays a float until it is known to be finite: smin is +inf when every real
  // key's V row is infinite (those queries get NaN outputs by the non-finite rule, E = 0 will do),
  // and converting getexp's +inf to int would be undefined behaviour.
  const float e_min = _mm_cvtss_f32(_mm_getexp_ss(_mm_setzero_ps(), _mm_set_ss(smin)));
  const int e = std::isfinite(e_min) && e_min < -60.0f ? -60 - static_cast<int>(e_min) : 0;  // 2^e = 2^E, at most 2^89
  const float scale_up = _mm_cvtss_f32(_mm_scalef_ss(_mm_set_ss(1.0f), _mm_set_ss(static_cast<float>(e))));
  const __m512 c = _mm512_set1_ps(_mm_cvtss_f32(_mm512_castps512_ps128(log2_avx512(_mm512_set1_ps(smax)))));
  for (int j0 = 0; j0 < slots; j0 += kLanes) {
    const __mmask16 live = j0 >= real ? 0 : lanes_avx512(real - j0);
    const __m512 s = _mm512_mask_blend_ps(live, _mm512_set1_ps(1.0f), _mm512_load_ps(t.v_scale + j0));
    _mm512_store_ps(t.v_log2 + j0, _mm512_mask_blend_ps(live, _mm512_set1_ps(kNoKey), _mm512_sub_ps(log2_avx512(s), c)));
    _mm512_store_ps(t.v_inv + j0, _mm512_maskz_div_ps(live, _mm512_set1_ps(1.0f), _mm512_mul_ps(s, _mm512_set1_ps(scale_up))));
  }
  return _mm_cvtss_f32(_mm_scalef_ss(_mm_set_ss(1.0f), _mm_set_ss(static_cast<float>(-e))));
}

// The block's quantized queries (q_rows, 16 rows of row_bytes) into q_panel[g][query], the dword
// of depth group g of each query.
template <int kD>
void transpose_queries(const Dims& dm, const Scratch& t) {
  const size_t rb = static_cast<size_t>(kD ? kD : dm.row_bytes);
  const int groups = kD ? kD / 4 : dm.groups;
  int g0 = 0;
  // 8 groups at a time by shuffles: row p and row p + 4 side by side, then dwords, qwords and
  // 128-bit lanes interleaved (24 shuffles per 16 rows × 8 groups).
  for (; g0 + 8 <= groups; g0 += 8) {
    __m512i z[8];
    for (int p = 0; p < 8; ++p) {
      const int r = (p / 4) * 8 + p % 4;  // rows 0-3 with 4-7, 8-11 with 12-15
      const uint8_t* lo = t.q_rows + static_cast<size_t>(r) * rb + 4 * g0;
      z[p] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo))),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + 4 * rb)), 1);
    }
    __m512i a[8], b[8];
    for (int i = 0; i < 4; ++i) {
      a[2 * i] = _mm512_unpacklo_epi32(z[2 * i], z[2 * i + 1]);
      a[2 * i + 1] = _mm512_unpackhi_epi32(z[2 * i], z[2 * i + 1]);
    }
    // b[4h + 2i + j]: rows 8h.., dword g0 + 2i + j (j: lo/hi qword) and g0 + 4 + 2i + j.
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 2; ++i) {
        b[4 * h + 2 * i] = _mm512_unpacklo_epi64(a[4 * h + i], a[4 * h + 2 + i]);
        b[4 * h + 2 * i + 1] = _mm512_unpackhi_epi64(a[4 * h + i], a[4 * h + 2 + i]);
      }
    for (int g = 0; g < 4; ++g) {
      _mm512_store_si512(t.q_panel + (g0 + g) * kLanes, _mm512_shuffle_i32x4(b[g], b[4 + g], _MM_SHUFFLE(2, 0, 2, 0)));
      _mm512_store_si512(t.q_panel + (g0 + 4 + g) * kLanes, _mm512_shuffle_i32x4(b[g], b[4 + g], _MM_SHUFFLE(3, 1, 3, 1)));
    }
  }
  const __m512i row_offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 _mm512_set1_epi32(dm.row_bytes));
  for (; kD == 0 && g0 < groups; ++g0)  // specialized head_dims are multiples of 32: done above
    _mm512_store_si512(t.q_panel + g0 * kLanes, _mm512_i32gather_epi32(row_offsets, t.q_rows + 4 * g0, 1));
}

// y[j][lane] for 16 key slots: the score of key j for each query of the block, as the base-2
// exponent S · log2 e + log2 s_v - C; folds them into the lane-wise maxima running_max[0..4)
// (four independent chains). k: the 16 keys' quantized rows; the other arrays from key j0 on.
template <int kD>
__attribute__((noinline)) void score_tile(const int8_t* __restrict k, int row_bytes_any, int groups_any,
                                          const int32_t* __restrict q_panel, const int32_t* __restrict k_init,
                                          const float* __restrict k_scale, const float* __restrict v_log2, __m512 c_q,
                                          float* __restrict y, __m512* __restrict running_max) {
  const size_t rb = static_cast<size_t>(kD ? kD : row_bytes_any);
  const int groups = kD ? kD / 4 : groups_any;
  __m512i acc[kLanes];
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) acc[j] = _mm512_set1_epi32(k_init[j]);
#pragma GCC unroll 16
  for (int g = 0; g < groups; ++g) {
    const __m512i qv = _mm512_load_si512(q_panel + g * kLanes);
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) dpbusd(acc[j], qv, broadcast_4bytes(k + j * rb + 4 * g));
  }
  __m512 m[4] = {running_max[0], running_max[1], running_max[2], running_max[3]};
#pragma GCC unroll 16
  for (int j = 0; j < kLanes; ++j) {
    const __m512 s = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[j]), c_q);
    const __m512 yj = _mm512_fmadd_ps(s, _mm512_set1_ps(k_scale[j]), _mm512_set1_ps(v_log2[j]));
    m[j % 4] = _mm512_max_ps(m[j % 4], yj);
    _mm512_store_ps(y + j * kLanes, yj);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) running_max[i] = m[i];
}

// out[i0 + r][16·p0 .. 16·(p0 + NV)) = float(Σ_g u[g][r] · V panels) · s_p[r] for the block's
// query rows r0 .. r0 + R.
template <int R, int NV>
void pv_tile(const Head& hd, const Dims& dm, const Scratch& t, const float* s_p, int i0, int r0, int p0, int g_begin,
             int groups) {
  __m512i acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_si512();
  const int8_t* panel = t.values + static_cast<size_t>(p0) * dm.key_groups * 64;
  const size_t panel_stride = static_cast<size_t>(dm.key_groups) * 64;
  const uint32_t* u = t.u + r0;
  for (int g = g_begin; g < groups; ++g) {
    __m512i vv[NV];
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) vv[c] = _mm512_loadu_si512(panel + c * panel_stride + static_cast<size_t>(g) * 64);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i ub = _mm512_set1_epi32(static_cast<int>(u[static_cast<size_t>(g) * kLanes + r]));
#pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) dpbusd(acc[r][c], ub, vv[c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* o = hd.out + static_cast<size_t>(i0 + r0 + r) * hd.ld_out;
    const __m512 sp = _mm512_set1_ps(s_p[r0 + r]);
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      const int d = 16 * (p0 + c);
      _mm512_mask_storeu_ps(o + d, lanes_avx512(dm.dim - d), _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][c]), sp));
    }
  }
}

using PvTileFn = void (*)(const Head&, const Dims&, const Scratch&, const float*, int, int, int, int, int);

template <int NV>
constexpr PvTileFn kPvTiles[kPvRows + 1] = {nullptr,        pv_tile<1, NV>, pv_tile<2, NV>,
                                            pv_tile<3, NV>, pv_tile<4, NV>, pv_tile<5, NV>,
                                            pv_tile<6, NV>, pv_tile<7, NV>, pv_tile<8, NV>};

// The products with vpdpbusd in registers (the file comment's layout). V: panels
// values[p][g][i][kk] = V[key 4g + kk][16p + i].
struct VnniEngine {
  static constexpr int kQueryOffset = 128;  // vpdpbusd's unsigned operand: q + 128
  static constexpr bool kKeySums = true;    // the score accumulators start at -128 · Σ_d k_j,d
  static constexpr size_t kStageBytes = 0;
  static constexpr int kGroupsPastSlots = 0;  // u is read up to the slots' key groups
  static size_t value_bytes(const Dims& d) { return static_cast<size_t>(d.dim_panels) * d.key_groups * 64; }

  void begin_head(const Dims&) {}
  void end_head() {}

  template <int kD>
  void store_values(const Dims& dm, const Scratch& t, int j0) {
    const size_t rb = static_cast<size_t>(dm.row_bytes);
    for (int g4 = 0; g4 < kLanes / 4; ++g4) {
      const int g = j0 / 4 + g4;
      for (int p = 0; p < (kD ? kD / 16 : dm.dim_panels); ++p) {
        __m128i quads[4];
        interleave_keys4(t.v_rows + static_cast<size_t>(4 * g4) * rb, rb, p, quads);
        __m128i* dst = reinterpret_cast<__m128i*>(t.values + (static_cast<size_t>(p) * dm.key_groups + g) * 64);
        for (int m = 0; m < 4; ++m) _mm_storeu_si128(dst + m, quads[m]);
      }
    }
  }
  void finish_values(const Dims&, const Scratch&, int) {}

  // y of the block for the key slots [s_lo, slots), maxima folded into running_max[0..4).
  template <int kD>
  void scores(const Dims& dm, const Scratch& t, int s_lo, int slots, __m512 c_q, __m512* running_max) {
    for (int j0 = s_lo; j0 < slots; j0 += kLanes)
      score_tile<kD>(t.k_rows + static_cast<size_t>(j0) * dm.row_bytes, dm.row_bytes, dm.groups, t.q_panel, t.k_init + j0,
                     t.k_scale + j0, t.v_log2 + j0, c_q, t.y + static_cast<size_t>(j0) * kLanes, running_max);
  }

  // out of the block's n queries from u's key groups [g_begin, pv_groups) (u is written up to
  // key group `written`).
  void pv(const Head& hd, const Dims& dm, const Scratch& t, int i0, int n, int g_begin, int pv_groups, int /*written*/) {
    for (int r0 = 0, rows_now = 0; r0 < n; r0 += rows_now) {
      rows_now = next_tile_rows(n - r0, kPvRows);
      for (int p0 = 0; p0 < dm.dim_panels; p0 += 2) {
        if (dm.dim_panels - p0 >= 2)
          kPvTiles<2>[rows_now](hd, dm, t, t.s_p, i0, r0, p0, g_begin, pv_groups);
        else
          kPvTiles<1>[rows_now](hd, dm, t, t.s_p, i0, r0, p0, g_begin, pv_groups);
      }
    }
  }
};

// With pair masks or a window (pm, kernel_types.h): the exponents y of the block's queries for
// key slots [s_lo, s_hi) masked, kNoKey where a pair is masked, y + bias · log2 e else (kept
// above kNoKey / 4, so that a row of huge finite biases stays a row of live keys). Returns the
// lane-wise max of y over those slots.
__m512 mask_exponents(const PairMask& pm, const Scratch& t, int i0, int n, int s_lo, int s_hi, int real) {
  if (!pm.blocked && !pm.bias) {  // a window alone: each query's keys are one run of the sorted list
    for (int r = 0; r < n; ++r) {
      int lo, hi;
      pm.keys_for_queries(t.keys, real, i0 + r, i0 + r + 1, &lo, &hi);
      for (int j = s_lo; j < lo; ++j) t.y[static_cast<size_t>(j) * kLanes + r] = kNoKey;
      for (int j = hi > s_lo ? hi : s_lo; j < s_hi && j < real; ++j) t.y[static_cast<size_t>(j) * kLanes + r] = kNoKey;
    }
  } else {
    for (int j = s_lo; j < s_hi && j < real; ++j) {
      float* yj = t.y + static_cast<size_t>(j) * kLanes;
      for (int r = 0; r < n; ++r) {
        const float m = pm.apply(i0 + r, t.keys[j], 0.0f);
        yj[r] = m == -INFINITY ? kNoKey : (pm.bias ? max_float(yj[r] + m * kLog2e, 0.25f * kNoKey) : yj[r]);
      }
    }
  }
  __m512 w = _mm512_set1_ps(-INFINITY);
  for (int j = s_lo; j < s_hi; ++j) w = _mm512_max_ps(w, _mm512_load_ps(t.y + static_cast<size_t>(j) * kLanes));
  return w;
}

// One block of n <= 16 queries starting at i0: quantize, scores, softmax into u and s_p, P·V.
// With probs_block (row i0 of the probabilities), also the probabilities of the real keys. With
// pm (pair masks or a window), only the 16-key slot tiles that hold a key some query of the block
// may attend; a query with none gets s_p = 0: zero output and probabilities. finite_below: every
// exponent y of the block is finite when all |c_q| < finite_below and there is no pm (run_head).
template <int kD, class Engine>
void query_block(Engine& engine, const Head& hd, const Dims& dm, const Scratch& t, int i0, int n, int real, float inv_scale_up,
                 float finite_below, float* probs_block, const PairMask* pm) {
  int lo = 0, hi = real;
  if (pm) pm->keys_for_queries(t.keys, real, i0, i0 + n, &lo, &hi);
  if (lo >= hi) {  // no key for any query of the block (probabilities: already 0)
    for (int r = 0; r < n; ++r) std::memset(hd.out + static_cast<size_t>(i0 + r) * hd.ld_out, 0, sizeof(float) * dm.dim);
    return;
  }
  const float* rows[kLanes];
  for (int r = 0; r < n; ++r) rows[r] = hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv;
  __m512 s_q;
  quantize_block<kD, false>(rows, n, dm.dim, dm.row_bytes, Engine::kQueryOffset, t.q_rows, &s_q, nullptr);
  transpose_queries<kD>(dm, t);
  // The next block's queries arrive while this block's scores and P·V run.
  const int next = dm.seq - i0 - kLanes < kLanes ? dm.seq - i0 - kLanes : kLanes;
  if (next > 0) prefetch_rows(hd.q + static_cast<size_t>(i0 + kLanes) * hd.ld_qkv, hd.ld_qkv, nullptr, next, dm.dim);
  // (s_q · scale) as the reference, then · log2 e for base 2.
  const __m512 c_q = _mm512_mul_ps(_mm512_mul_ps(s_q, _mm512_set1_ps(hd.scale)), _mm512_set1_ps(kLog2e));

  const int s_lo = lo / kLanes * kLanes;
  const int slots = pm && hi < real ? round_up(hi, kLanes) : round_up(real, kLanes);
  __m512 maxima[4] = {_mm512_set1_ps(-INFINITY), _mm512_set1_ps(-INFINITY), _mm512_set1_ps(-INFINITY),
                      _mm512_set1_ps(-INFINITY)};
  engine.template scores<kD>(dm, t, s_lo, slots, c_q, maxima);
  __m512 w = _mm512_max_ps(_mm512_max_ps(maxima[0], maxima[1]), _mm512_max_ps(maxima[2], maxima[3]));
  // Lanes with a key to attend (a NaN max counts: it stays NaN, as in the reference).
  __mmask16 live = 0xffff;
  if (pm) {
    w = mask_exponents(*pm, t, i0, n, s_lo, slots, real);
    live = _mm512_cmp_ps_mask(w, _mm512_set1_ps(0.5f * kNoKey), _CMP_NLE_UQ);
  }

  // t_j = 255 · 2^(y_j - W) → u_j, and Σ_j t_j · 2^-E / s_v,j (one partial sum per key of a
  // group: four independent FMA chains).
  // Queries with a non-finite y for some real key (a NaN or infinite score, or an infinite V
  // scale, which makes C infinite): NaN outputs and probabilities, the reference's rule. Checked
  // key by key only where the bound of run_head does not already exclude them (it does for any
  // ordinary input: three vector operations less per 16 exponents).
  const bool check_finite =
      pm != nullptr || _mm512_cmp_ps_mask(_mm512_abs_ps(c_q), _mm512_set1_ps(finite_below), _CMP_LT_OQ) != 0xffff;
  __mmask16 not_finite = 0;
  const __m512 largest = _mm512_set1_ps(kFloatMax);
  const int groups = slots / 4;
  __m512 sums[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int g = s_lo / 4; g < groups; ++g) {
    __m512i packed = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int kk = 0; kk < 4; ++kk) {
      const int j = 4 * g + kk;
      const __m512 yj = _mm512_load_ps(t.y + static_cast<size_t>(j) * kLanes);
      if (check_finite && j < real) not_finite |= _mm512_cmp_ps_mask(_mm512_abs_ps(yj), largest, _CMP_NLE_UQ);
      // y - W as an FMA (the same rounding as a subtraction): the FMA pipes have room here, the
      // add pipes do not.
      const __m512 tj = exp2_x255_avx512(_mm512_fmsub_ps(yj, _mm512_set1_ps(1.0f), w));
      sums[kk] = _mm512_fmadd_ps(tj, _mm512_set1_ps(t.v_inv[j]), sums[kk]);
      // rint in the current rounding mode (half to even), as the reference's nearbyint; tj <= 255.
      packed = _mm512_or_si512(packed, _mm512_slli_epi32(_mm512_cvtps_epi32(tj), 8 * kk));
      if (probs_block && j < real) {
        alignas(64) float p[kLanes];
        _mm512_store_ps(p, _mm512_mul_ps(tj, _mm512_set1_ps(t.v_inv[j])));
        for (int r = 0; r < n; ++r) probs_block[static_cast<size_t>(r) * dm.seq + t.keys[j]] = p[r];
      }
    }
    _mm512_store_si512(t.u + static_cast<size_t>(g) * kLanes, packed);
  }
  // s_p = 1 / Σ_j (t_j / s_v,j) = 2^-E / sum.
  const __m512 sum = _mm512_add_ps(_mm512_add_ps(sums[0], sums[1]), _mm512_add_ps(sums[2], sums[3]));
  const __m512 inv_sum = _mm512_maskz_div_ps(live, _mm512_set1_ps(1.0f), sum);
  _mm512_store_ps(t.s_p, _mm512_mask_blend_ps(not_finite, _mm512_mul_ps(inv_sum, _mm512_set1_ps(inv_scale_up)),
                                               _mm512_set1_ps(kQuietNaN)));
  if (probs_block) {
    alignas(64) float inv[kLanes];
    _mm512_store_ps(inv, _mm512_mask_blend_ps(not_finite, inv_sum, _mm512_set1_ps(kQuietNaN)));
    for (int r = 0; r < n; ++r)
      for (int j = s_lo; j < slots && j < real; ++j) probs_block[static_cast<size_t>(r) * dm.seq + t.keys[j]] *= inv[r];
  }

  engine.pv(hd, dm, t, i0, n, s_lo / 4, ceil_div(real < slots ? real : slots, 4), groups);
}

// Everything after the list of real keys, specialized for head_dim kD (0: any).
template <int kD, class Engine>
void run_head(Engine& engine, const Head& hd, const Dims& dm, const Scratch& t, int real, float* probs,
              const PairMask* pm) {
  quantize_keys<kD, Engine::kKeySums>(hd, dm, t, real);
  const float inv_scale_up = quantize_values<kD>(engine, hd, dm, t, real);
  // A bound on |c_q| under which no exponent y_j = float(Σ q k) · c_q · s_k,j + v_log2,j of a real
  // key can be NaN or infinite: |Σ q k| <= 127² · 4G, and with every s_k and v_log2 finite,
  // |y| <= 127² · 4G · |c_q| · max s_k · (1 + 2^-23)² + 300 (|log2| of a float and C are below
  // 150 each), below FLT_MAX when 127² · 4G · |c_q| · max s_k < 1e37. 0 (check every key) when
  // some s_k or v_log2 is not finite.
  float k_max = 0.0f;
  bool finite = true;
  for (int j = 0; j < real; ++j) {
    finite = finite && std::isfinite(t.k_scale[j]) && std::isfinite(t.v_log2[j]);
    k_max = t.k_scale[j] > k_max ? t.k_scale[j] : k_max;
  }
  const float sum_bound = 127.0f * 127.0f * 4.0f * static_cast<float>(dm.groups);
  const float finite_below = finite ? 1.0e37f / (sum_bound * (k_max > 1.0f ? k_max : 1.0f)) : 0.0f;
  for (int i0 = 0; i0 < dm.seq; i0 += kLanes) {
    const int n = dm.seq - i0 < kLanes ? dm.seq - i0 : kLanes;
    query_block<kD>(engine, hd, dm, t, i0, n, real, inv_scale_up, finite_below,
                    probs ? probs + static_cast<size_t>(i0) * dm.seq : nullptr, pm);
  }
}

// The bytes of scratch qs8_attention<Engine> uses.
template <class Engine>
size_t qs8_attention_scratch(int seq, int head_dim) {
  return layout<Engine>(dims_of(seq, head_dim), nullptr, nullptr);
}

// One (sequence b, head h) of an AttentionFn, with the Engine's products.
template <class Engine>
void qs8_attention(Engine& engine, const AttentionArgs& a, int b, int h, void* scratch) {
  const int S = a.seq, D = a.head_dim;
  if (S <= 0 || D <= 0) return;
  const Dims dm = dims_of(S, D);
  Scratch t;
  layout<Engine>(dm, static_cast<unsigned char*>(scratch), &t);
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

  // Pair masks or a window: every probability starts at 0 (a window leaves most pairs unwritten).
  const PairMask pairs = pair_mask_of(a, b);
  const PairMask* pm = pairs.active() ? &pairs : nullptr;
  if (probs && pm) std::memset(probs, 0, sizeof(float) * S * S);
  engine.begin_head(dm);
  if (D == 32)
    run_head<32>(engine, hd, dm, t, real, probs, pm);
  else if (D == 64)
    run_head<64>(engine, hd, dm, t, real, probs, pm);
  else
    run_head<0>(engine, hd, dm, t, real, probs, pm);
  engine.end_head();
}

}  // namespace
}  // namespace encrt::kernels::x86
