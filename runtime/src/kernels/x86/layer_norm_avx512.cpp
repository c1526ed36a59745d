// f32_layer_norm__avx512: y = (x - mean) / sqrt(var + eps) · gamma + beta per row, in fp32.
//
// The variance uses the corrected two-pass formula: with m0 the fp32 mean and d = x - m0,
//   mean = m0 + Σd/N,   var = Σd²/N - (Σd/N)²,
// where the correction term cancels the rounding error of m0, and the output is computed from
// (x - m0) - Σd/N rather than x - mean: x - m0 is exact for x near m0 (Sterbenz), so rows with a
// large common offset (|mean| ≫ std) keep their accuracy instead of losing it to the rounding of
// mean itself. Matches ref::layer_norm (computed in double) within 1e-5
// relative (tests/kernels/test_simd_layer_norm.cpp). X == Y is allowed: each element is read
// before it is written.
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void f32_layer_norm__avx512(int M, int N, const float* X, int ldx, const float* gamma, const float* beta,
                            float eps, float* Y, int ldy) {
  if (N <= 0) return;
  const int full = N & ~15;
  const __mmask16 tail = lanes_avx512(N - full);
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    float* y = Y + static_cast<size_t>(m) * ldy;

    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int n = 0;
    for (; n + 32 <= N; n += 32) {
      s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + n));
      s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + n + 16));
    }
    for (; n < full; n += 16) s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + n));
    if (full < N) s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(tail, x + full));
    const float inv_n = 1.0f / static_cast<float>(N);
    const float mean0 = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1)) * inv_n;

    const __m512 vm0 = _mm512_set1_ps(mean0);
    __m512 d0 = _mm512_setzero_ps(), d1 = _mm512_setzero_ps();
    __m512 q0 = _mm512_setzero_ps(), q1 = _mm512_setzero_ps();
    for (n = 0; n + 32 <= N; n += 32) {
      const __m512 a = _mm512_sub_ps(_mm512_loadu_ps(x + n), vm0);
      const __m512 b = _mm512_sub_ps(_mm512_loadu_ps(x + n + 16), vm0);
      d0 = _mm512_add_ps(d0, a), q0 = _mm512_fmadd_ps(a, a, q0);
      d1 = _mm512_add_ps(d1, b), q1 = _mm512_fmadd_ps(b, b, q1);
    }
    for (; n < full; n += 16) {
      const __m512 a = _mm512_sub_ps(_mm512_loadu_ps(x + n), vm0);
      d0 = _mm512_add_ps(d0, a), q0 = _mm512_fmadd_ps(a, a, q0);
    }
    if (full < N) {
      const __m512 a = _mm512_maskz_sub_ps(tail, _mm512_maskz_loadu_ps(tail, x + full), vm0);
      d0 = _mm512_add_ps(d0, a), q0 = _mm512_fmadd_ps(a, a, q0);
    }
    const float mean_d = _mm512_reduce_add_ps(_mm512_add_ps(d0, d1)) * inv_n;
    float var = _mm512_reduce_add_ps(_mm512_add_ps(q0, q1)) * inv_n - mean_d * mean_d;
    var = var > 0.0f ? var : 0.0f;
    const __m512 vmd = _mm512_set1_ps(mean_d);
    const __m512 inv = _mm512_set1_ps(1.0f / sqrt_float(var + eps));

    for (n = 0; n < full; n += 16) {
      const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + n), vm0), vmd), inv);
      _mm512_storeu_ps(y + n, _mm512_fmadd_ps(v, _mm512_loadu_ps(gamma + n), _mm512_loadu_ps(beta + n)));
    }
    if (full < N) {
      const __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + full), vm0), vmd), inv);
      _mm512_mask_storeu_ps(y + full, tail,
                            _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(tail, gamma + full),
                                            _mm512_maskz_loadu_ps(tail, beta + full)));
    }
  }
}

}  // namespace encrt::kernels::x86
