// f32_layer_norm__avx2: y = (x - mean) / sqrt(var + eps) · gamma + beta per row, in fp32, with
// the corrected two-pass variance of layer_norm_avx512.cpp (var = Σd²/N - (Σd/N)², d = x - m0)
// and outputs from (x - m0) - Σd/N. X == Y is allowed.
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void f32_layer_norm__avx2(int M, int N, const float* X, int ldx, const float* gamma, const float* beta,
                          float eps, float* Y, int ldy) {
  if (N <= 0) return;
  const int full = N & ~7;
  const __m256i tail = lanes_avx2(N - full);
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    float* y = Y + static_cast<size_t>(m) * ldy;

    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int n = 0;
    for (; n + 16 <= N; n += 16) {
      s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + n));
      s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + n + 8));
    }
    for (; n < full; n += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + n));
    if (full < N) s0 = _mm256_add_ps(s0, _mm256_maskload_ps(x + full, tail));
    const float inv_n = 1.0f / static_cast<float>(N);
    const float mean0 = reduce_add_avx2(_mm256_add_ps(s0, s1)) * inv_n;

    const __m256 vm0 = _mm256_set1_ps(mean0);
    __m256 d0 = _mm256_setzero_ps(), d1 = _mm256_setzero_ps();
    __m256 q0 = _mm256_setzero_ps(), q1 = _mm256_setzero_ps();
    for (n = 0; n + 16 <= N; n += 16) {
      const __m256 a = _mm256_sub_ps(_mm256_loadu_ps(x + n), vm0);
      const __m256 b = _mm256_sub_ps(_mm256_loadu_ps(x + n + 8), vm0);
      d0 = _mm256_add_ps(d0, a), q0 = _mm256_fmadd_ps(a, a, q0);
      d1 = _mm256_add_ps(d1, b), q1 = _mm256_fmadd_ps(b, b, q1);
    }
    for (; n < full; n += 8) {
      const __m256 a = _mm256_sub_ps(_mm256_loadu_ps(x + n), vm0);
      d0 = _mm256_add_ps(d0, a), q0 = _mm256_fmadd_ps(a, a, q0);
    }
    if (full < N) {
      // Lanes past N: the masked load gives 0, and 0 - m0 must not count: mask it out again.
      const __m256 a = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), vm0),
                                     _mm256_castsi256_ps(tail));
      d0 = _mm256_add_ps(d0, a), q0 = _mm256_fmadd_ps(a, a, q0);
    }
    const float mean_d = reduce_add_avx2(_mm256_add_ps(d0, d1)) * inv_n;
    float var = reduce_add_avx2(_mm256_add_ps(q0, q1)) * inv_n - mean_d * mean_d;
    var = var > 0.0f ? var : 0.0f;
    const __m256 vmd = _mm256_set1_ps(mean_d);
    const __m256 inv = _mm256_set1_ps(1.0f / sqrt_float(var + eps));

    for (n = 0; n < full; n += 8) {
      const __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + n), vm0), vmd), inv);
      _mm256_storeu_ps(y + n, _mm256_fmadd_ps(v, _mm256_loadu_ps(gamma + n), _mm256_loadu_ps(beta + n)));
    }
    if (full < N) {
      const __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(x + full, tail), vm0), vmd), inv);
      _mm256_maskstore_ps(y + full, tail,
                          _mm256_fmadd_ps(v, _mm256_maskload_ps(gamma + full, tail),
                                          _mm256_maskload_ps(beta + full, tail)));
    }
  }
}

}  // namespace encrt::kernels::x86
