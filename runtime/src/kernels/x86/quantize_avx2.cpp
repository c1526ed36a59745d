// qu8_quantize_rows__avx2: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 by the argument of quantize_avx512.cpp: identical scalar per-row
// parameters; per element the same x·inv (vmulps), rounded to int32 in the current rounding mode
// by vcvtps2dq (= nearbyint), kept exactly as int16 by vpackssdw, + zp on int16 (exact), clamped
// to [0, 255] by vpackuswb. NaNs are skipped by the range pass and quantize to 0, as
// quantize_avx512.cpp explains. The loop has that file's shape too: the next row's range pass
// (four minimum and four maximum accumulators) is issued before this row is quantized.
#include "kernels/x86/x86_avx2_common.h"
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
ENCRT_X86_INLINE __m256 load_row(const float* x, const float* mul, int k) {
  const __m256 v = _mm256_loadu_ps(x + k);
  return kMul ? _mm256_mul_ps(v, _mm256_loadu_ps(mul + k)) : v;
}
template <bool kMul>
ENCRT_X86_INLINE float row_value(const float* x, const float* mul, int k) {
  return kMul ? x[k] * mul[k] : x[k];
}

template <bool kMul>
ENCRT_X86_INLINE RowQuant row_quant(const float* x, const float* mul, int K) {
  // Starting from 0, lanes past K load as 0, which changes neither bound.
  __m256 lo0 = _mm256_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0;
  __m256 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
  int k = 0;
  for (; k + 32 <= K; k += 32) {
    __m256 a = load_row<kMul>(x, mul, k), b = load_row<kMul>(x, mul, k + 8);
    __m256 c = load_row<kMul>(x, mul, k + 16), d = load_row<kMul>(x, mul, k + 24);
    asm("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d));  // one load per vector, not one per vminps and vmaxps
    lo0 = _mm256_min_ps(a, lo0), hi0 = _mm256_max_ps(a, hi0);
    lo1 = _mm256_min_ps(b, lo1), hi1 = _mm256_max_ps(b, hi1);
    lo2 = _mm256_min_ps(c, lo2), hi2 = _mm256_max_ps(c, hi2);
    lo3 = _mm256_min_ps(d, lo3), hi3 = _mm256_max_ps(d, hi3);
  }
  for (; k < K; k += 8) {
    __m256 a = _mm256_maskload_ps(x + k, lanes_avx2(K - k));
    if (kMul) a = _mm256_mul_ps(a, _mm256_maskload_ps(mul + k, lanes_avx2(K - k)));
    lo0 = _mm256_min_ps(a, lo0), hi0 = _mm256_max_ps(a, hi0);
  }
  const float lo = reduce_min_avx2(_mm256_min_ps(_mm256_min_ps(lo0, lo1), _mm256_min_ps(lo2, lo3)));
  const float hi = reduce_max_avx2(_mm256_max_ps(_mm256_max_ps(hi0, hi1), _mm256_max_ps(hi2, hi3)));
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
  // After the two in-lane packs the 4-byte groups are in the order (0,2,4,6,1,3,5,7).
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256 vinv = _mm256_set1_ps(r.inv);
  const __m256i vzp16 = _mm256_set1_epi16(static_cast<int16_t>(r.zero_point));
  // nearbyint(x·inv) as int32, and two of them as int16 + zp (not yet clamped).
  auto round8 = [&](int k) { return _mm256_cvtps_epi32(_mm256_mul_ps(load_row<kMul>(x, mul, k), vinv)); };
  auto pair = [&](int k) { return _mm256_add_epi16(_mm256_packs_epi32(round8(k), round8(k + 8)), vzp16); };
  int k = 0;
  for (; k + 32 <= K; k += 32) {
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(pair(k), pair(k + 16)), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), bytes);
  }
  // The last 0..31 values, as the reference writes them.
  const float zpf = static_cast<float>(r.zero_point);
  for (; k < K; ++k) {
    const float v = round_current_mode(row_value<kMul>(x, mul, k) * r.inv) + zpf;
    q[k] = v == v ? static_cast<uint8_t>(clamp_float(v, 0.0f, 255.0f)) : uint8_t{0};  // NaN → 0
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

void qu8_quantize_rows__avx2(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q,
                             int ldq, float* scale, int32_t* zero_point) {
  if (M <= 0) return;
  if (multipliers)
    quantize_rows<true>(M, K, X, ldx, multipliers, Q, ldq, scale, zero_point);
  else
    quantize_rows<false>(M, K, X, ldx, nullptr, Q, ldq, scale, zero_point);
}

}  // namespace encrt::kernels::x86
