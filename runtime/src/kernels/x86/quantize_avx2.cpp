// qu8_quantize_rows__avx2: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 by the argument of quantize_avx512.cpp: identical scalar per-row
// parameters; per element the same x·inv (vmulps), rounded to int32 in the current rounding mode
// by vcvtps2dq (= nearbyint), + zp on int32, clamped to [0, 255] by the saturating packs. NaNs
// are skipped by the min/max pass and quantize to 0, as quantize_avx512.cpp explains.
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"

#include <cstring>

namespace encrt::kernels::x86 {

void qu8_quantize_rows__avx2(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q,
                             int ldq, float* scale, int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  // After the two in-lane packs the 4-byte groups are in the order (0,2,4,6,1,3,5,7).
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    uint8_t* q = Q + static_cast<size_t>(m) * ldq;
    // x[k] * multipliers[k] when there are multipliers (one vmulps, as the reference's fp32 multiply).
    auto load = [&](int k) {
      const __m256 v = _mm256_loadu_ps(x + k);
      return multipliers ? _mm256_mul_ps(v, _mm256_loadu_ps(multipliers + k)) : v;
    };
    auto value = [&](int k) { return multipliers ? x[k] * multipliers[k] : x[k]; };

    // lo = min(0, min x), hi = max(0, max x): lanes past K load as 0, which changes neither.
    __m256 lo0 = _mm256_setzero_ps(), lo1 = lo0, hi0 = lo0, hi1 = lo0;
    int k = 0;
    for (; k + 16 <= K; k += 16) {
      __m256 a = load(k), b = load(k + 8);
      asm("" : "+x"(a), "+x"(b));  // one load per vector, not one per vminps and vmaxps
      lo0 = _mm256_min_ps(a, lo0), hi0 = _mm256_max_ps(a, hi0);
      lo1 = _mm256_min_ps(b, lo1), hi1 = _mm256_max_ps(b, hi1);
    }
    for (; k < K; k += 8) {
      __m256 a = _mm256_maskload_ps(x + k, lanes_avx2(K - k));
      if (multipliers) a = _mm256_mul_ps(a, _mm256_maskload_ps(multipliers + k, lanes_avx2(K - k)));
      lo0 = _mm256_min_ps(a, lo0), hi0 = _mm256_max_ps(a, hi0);
    }
    const float lo = reduce_min_avx2(_mm256_min_ps(lo0, lo1));
    const float hi = reduce_max_avx2(_mm256_max_ps(hi0, hi1));
    const float s = (hi - lo) / 255.0f;
    const float inv = 1.0f / s;
    // The reference's rows without a usable range, from the same scalars (kernel_types.h).
    if (!(inv <= kFloatMax) || !(s <= kFloatMax)) {
      scale[m] = inv <= kFloatMax ? kQuietNaN : 1.0f;
      zero_point[m] = 0;
      std::memset(q, 0, static_cast<size_t>(Kp));
      continue;
    }
    const int32_t zp = static_cast<int32_t>(clamp_float(round_current_mode(-lo * inv), 0.0f, 255.0f));

    const __m256 vinv = _mm256_set1_ps(inv);
    const __m256i vzp = _mm256_set1_epi32(zp);
    auto quantize8 = [&](int k8) {  // nearbyint(x·inv) + zp as int32, not yet clamped
      return _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(load(k8), vinv)), vzp);
    };
    for (k = 0; k + 32 <= K; k += 32) {
      const __m256i ab = _mm256_packus_epi32(quantize8(k), quantize8(k + 8));
      const __m256i cd = _mm256_packus_epi32(quantize8(k + 16), quantize8(k + 24));
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), order);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), bytes);
    }
    // The last 0..31 values, as the reference writes them.
    const float zpf = static_cast<float>(zp);
    for (; k < K; ++k) {
      const float v = round_current_mode(value(k) * inv) + zpf;
      q[k] = v == v ? static_cast<uint8_t>(clamp_float(v, 0.0f, 255.0f)) : uint8_t{0};  // NaN → 0
    }
    for (k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(zp);
    scale[m] = s;
    zero_point[m] = zp;
  }
}

}  // namespace encrt::kernels::x86
