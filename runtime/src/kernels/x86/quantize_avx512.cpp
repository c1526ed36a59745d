// qu8_quantize_rows__avx512: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 (kernel_types.h gives the exact rule).
//
// Exactness: the per-row scalars (scale, 1/scale, zero point) come from the same scalar
// expressions as in the reference. Per element the reference computes
// clamp(nearbyint(x·inv) + zp, 0, 255) in float; here x·inv is the same vmulps, vcvtps2dq rounds
// it to an integer in the current rounding mode exactly as nearbyint does (|x·inv| <= 256, far
// inside int32), vpackssdw keeps it exactly as int16, + zp is exact in int16 (|sum| < 512), and
// vpackuswb clamps to [0, 255]. min/max reductions are order-independent for non-NaN inputs, so
// the vectorized ones find the reference's lo and hi.
// NaN inputs: vminps/vmaxps(x, acc) return acc when x is NaN, as std::min(lo, x) /
// std::max(hi, x) return lo / hi, so NaNs are skipped alike; and a NaN converts to INT32_MIN,
// which saturates to -32768 in int16 and stays negative after + zp, so the clamp gives 0, the
// value kernel_types.h specifies.
//
// Speed: a row's scalars are a long dependent chain (two reductions, two divisions, a rounding)
// that the next row's vector work does not wait for; so the range pass of row m + 1 is issued
// before row m is quantized, and the core overlaps the chain with row m's stores. The range pass
// keeps four minimum and four maximum accumulators, so that it is bound by throughput, not by
// vminps latency; the zero point is added to pairs of rows of int16 after the first pack, one
// vpaddw per 32 values.
//
// Throughput notes (AMD Zen 4, which splits zmm operations in two): the range pass loads each
// vector once (GCC would otherwise fold one load into each of vminps and vmaxps), and no
// memory-destination vpmovusdb is used (microcoded there).
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"

#include <cstring>

namespace encrt::kernels::x86 {
namespace {

// A row's quantization: lo = min(0, min x), hi = max(0, max x), and from them the reference's
// scalars; `usable` is false for the rows kernel_types.h treats apart.
struct RowQuant {
  float scale;
  float inv;
  int32_t zero_point;
  bool usable;
};

// x[k] · multipliers[k] when the row has multipliers (one vmulps, as the reference's fp32 multiply).
template <bool kMul>
ENCRT_X86_INLINE __m512 load_row(const float* x, const float* mul, int k) {
  const __m512 v = _mm512_loadu_ps(x + k);
  return kMul ? _mm512_mul_ps(v, _mm512_loadu_ps(mul + k)) : v;
}
template <bool kMul>
ENCRT_X86_INLINE __m512 load_row_masked(const float* x, const float* mul, __mmask16 mask, int k) {
  const __m512 v = _mm512_maskz_loadu_ps(mask, x + k);
  return kMul ? _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, mul + k)) : v;
}

template <bool kMul>
ENCRT_X86_INLINE RowQuant row_quant(const float* x, const float* mul, int K) {
  // Starting from 0, lanes past K may read as 0.
  __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0;
  __m512 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
  int k = 0;
  for (; k + 64 <= K; k += 64) {
    __m512 a = load_row<kMul>(x, mul, k), b = load_row<kMul>(x, mul, k + 16);
    __m512 c = load_row<kMul>(x, mul, k + 32), d = load_row<kMul>(x, mul, k + 48);
    asm("" : "+v"(a), "+v"(b), "+v"(c), "+v"(d));  // keep one load per vector (see the file comment)
    lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
    lo1 = _mm512_min_ps(b, lo1), hi1 = _mm512_max_ps(b, hi1);
    lo2 = _mm512_min_ps(c, lo2), hi2 = _mm512_max_ps(c, hi2);
    lo3 = _mm512_min_ps(d, lo3), hi3 = _mm512_max_ps(d, hi3);
  }
  for (; k < K; k += 16) {
    const __m512 a = load_row_masked<kMul>(x, mul, lanes_avx512(K - k), k);
    lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
  }
  const float lo = _mm512_reduce_min_ps(_mm512_min_ps(_mm512_min_ps(lo0, lo1), _mm512_min_ps(lo2, lo3)));
  const float hi = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(hi0, hi1), _mm512_max_ps(hi2, hi3)));
  RowQuant r;
  r.scale = (hi - lo) / 255.0f;
  r.inv = 1.0f / r.scale;
  r.usable = r.inv <= kFloatMax && r.scale <= kFloatMax;
  r.zero_point = r.usable ? static_cast<int32_t>(clamp_float(round_current_mode(-lo * r.inv), 0.0f, 255.0f)) : 0;
  return r;
}

template <bool kMul>
ENCRT_X86_INLINE void quantize_row(const float* x, const float* mul, int K, int Kp, const RowQuant& r, uint8_t* q) {
  if (!r.usable) {  // the reference's rows without a usable range (kernel_types.h)
    std::memset(q, 0, static_cast<size_t>(Kp));
    return;
  }
  // Dword j of the packed result holds the 4 bytes of source vector j % 4 at position j / 4.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512 vinv = _mm512_set1_ps(r.inv);
  const __m512i vzp16 = _mm512_set1_epi16(static_cast<int16_t>(r.zero_point));
  // nearbyint(x·inv) as int32, and two of them as int16 + zp (not yet clamped).
  auto round16 = [&](int k) { return _mm512_cvtps_epi32(_mm512_mul_ps(load_row<kMul>(x, mul, k), vinv)); };
  auto pair = [&](int k) { return _mm512_add_epi16(_mm512_packs_epi32(round16(k), round16(k + 16)), vzp16); };
  int k = 0;
  for (; k + 64 <= K; k += 64)
    _mm512_storeu_si512(q + k, _mm512_permutexvar_epi32(order, _mm512_packus_epi16(pair(k), pair(k + 32))));
  // Remaining 1..63 values, 16 at a time: clamp below at 0, vpmovusdb clamps above at 255.
  const __m512i vzp = _mm512_set1_epi32(r.zero_point);
  for (; k < K; k += 16) {
    const __mmask16 mask = lanes_avx512(K - k);
    const __m512i v = _mm512_add_epi32(
        _mm512_cvtps_epi32(_mm512_mul_ps(load_row_masked<kMul>(x, mul, mask, k), vinv)), vzp);
    _mm_mask_storeu_epi8(q + k, mask, _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, _mm512_setzero_si512())));
  }
  for (k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(r.zero_point);
}

template <bool kMul>
void quantize_rows(int M, int K, const float* X, int ldx, const float* mul, uint8_t* Q, int ldq, float* scale,
                   int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  RowQuant next = row_quant<kMul>(X, mul, K);
  for (int m = 0; m < M; ++m) {
    const RowQuant r = next;
    if (m + 1 < M) next = row_quant<kMul>(X + static_cast<size_t>(m + 1) * ldx, mul, K);
    quantize_row<kMul>(X + static_cast<size_t>(m) * ldx, mul, K, Kp, r, Q + static_cast<size_t>(m) * ldq);
    scale[m] = r.usable ? r.scale : r.inv <= kFloatMax ? kQuietNaN : 1.0f;
    zero_point[m] = r.zero_point;
  }
}

}  // namespace

void qu8_quantize_rows__avx512(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q,
                               int ldq, float* scale, int32_t* zero_point) {
  if (M <= 0) return;
  if (multipliers)
    quantize_rows<true>(M, K, X, ldx, multipliers, Q, ldq, scale, zero_point);
  else
    quantize_rows<false>(M, K, X, ldx, nullptr, Q, ldq, scale, zero_point);
}

}  // namespace encrt::kernels::x86
