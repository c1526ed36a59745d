// qu8_quantize_rows__avx512: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 (kernel_types.h gives the exact rule).
//
// Exactness: the per-row scalars (scale, 1/scale, zero point) come from the same scalar
// expressions as in the reference. Per element the reference computes
// clamp(nearbyint(x·inv) + zp, 0, 255) in float; here x·inv is the same vmulps, vcvtps2dq rounds
// it to an integer in the current rounding mode exactly as nearbyint does (|x·inv| <= 256, far
// inside int32), and the sum with zp and the clamp are done on int32, where they are exact too.
// The clamp is free: vpackusdw / vpackuswb saturate to [0, 255]. min/max reductions are order-
// independent for non-NaN inputs, so the vectorized ones find the reference's lo and hi.
// NaN inputs: vminps/vmaxps(x, acc) return acc when x is NaN, as std::min(lo, x) /
// std::max(hi, x) return lo / hi, so NaNs are skipped alike; and a NaN converts to INT32_MIN,
// which the clamp turns into 0, the value kernel_types.h specifies.
//
// Throughput notes (AMD Zen 4, which splits zmm operations in two): the min/max pass loads each
// vector once (GCC would otherwise fold one load into each of vminps and vmaxps), and no
// memory-destination vpmovusdb is used (microcoded there).
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"

#include <cstring>

namespace encrt::kernels::x86 {

void qu8_quantize_rows__avx512(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q,
                               int ldq, float* scale, int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  // Dword j of the packed result holds the 4 bytes of source vector j % 4 at position j / 4.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    uint8_t* q = Q + static_cast<size_t>(m) * ldq;
    // x[k] * multipliers[k] when there are multipliers (one vmulps, as the reference's fp32 multiply).
    auto load = [&](int k) {
      const __m512 v = _mm512_loadu_ps(x + k);
      return multipliers ? _mm512_mul_ps(v, _mm512_loadu_ps(multipliers + k)) : v;
    };
    auto load_masked = [&](__mmask16 mask, int k) {
      const __m512 v = _mm512_maskz_loadu_ps(mask, x + k);
      return multipliers ? _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, multipliers + k)) : v;
    };

    // lo = min(0, min x), hi = max(0, max x): starting from 0, lanes past K may read as 0.
    __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, hi0 = lo0, hi1 = lo0;
    int k = 0;
    for (; k + 32 <= K; k += 32) {
      __m512 a = load(k), b = load(k + 16);
      asm("" : "+v"(a), "+v"(b));  // keep one load per vector (see the file comment)
      lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
      lo1 = _mm512_min_ps(b, lo1), hi1 = _mm512_max_ps(b, hi1);
    }
    for (; k < K; k += 16) {
      const __m512 a = load_masked(lanes_avx512(K - k), k);
      lo0 = _mm512_min_ps(a, lo0), hi0 = _mm512_max_ps(a, hi0);
    }
    const float lo = _mm512_reduce_min_ps(_mm512_min_ps(lo0, lo1));
    const float hi = _mm512_reduce_max_ps(_mm512_max_ps(hi0, hi1));
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

    const __m512 vinv = _mm512_set1_ps(inv);
    const __m512i vzp = _mm512_set1_epi32(zp);
    // nearbyint(x·inv) + zp as int32, not yet clamped.
    auto quantize16 = [&](__m512 x16) { return _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x16, vinv)), vzp); };
    for (k = 0; k + 64 <= K; k += 64) {
      const __m512i ab = _mm512_packus_epi32(quantize16(load(k)), quantize16(load(k + 16)));
      const __m512i cd = _mm512_packus_epi32(quantize16(load(k + 32)), quantize16(load(k + 48)));
      _mm512_storeu_si512(q + k, _mm512_permutexvar_epi32(order, _mm512_packus_epi16(ab, cd)));
    }
    // Remaining 1..63 values, 16 at a time: clamp below at 0, vpmovusdb clamps above at 255.
    for (; k < K; k += 16) {
      const __mmask16 mask = lanes_avx512(K - k);
      const __m512i v = _mm512_max_epi32(quantize16(load_masked(mask, k)), _mm512_setzero_si512());
      _mm_mask_storeu_epi8(q + k, mask, _mm512_cvtusepi32_epi8(v));
    }
    for (k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(zp);
    scale[m] = s;
    zero_point[m] = zp;
  }
}

}  // namespace encrt::kernels::x86
