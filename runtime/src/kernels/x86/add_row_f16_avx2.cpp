// f16_add_row__avx2: dst += half(src) * scale with F16C's vcvtph2ps (exact widening, as
// half_to_float) and one FMA-free multiply-add in the reference's order.
#include <immintrin.h>

#include "core/half.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void f16_add_row__avx2(int n, const uint16_t* src, float scale, float* dst) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 w = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    // mul then add (not an FMA) so that the result equals the reference's two roundings.
    _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_mul_ps(w, vscale)));
  }
  for (; i < n; ++i) dst[i] += half_to_float(src[i]) * scale;
}

}  // namespace encrt::kernels::x86
