// Array forms of the AVX2 erf and GELU used by the GEMM epilogues (x86_avx2_common.h), so that
// tests can measure their error on their own.
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void f32_erf__avx2(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 8) {
    const __m256i mask = lanes_avx2(n - i);
    _mm256_maskstore_ps(y + i, mask, erf_avx2(_mm256_maskload_ps(x + i, mask)));
  }
}

void f32_gelu__avx2(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 8) {
    const __m256i mask = lanes_avx2(n - i);
    _mm256_maskstore_ps(y + i, mask, gelu_avx2(_mm256_maskload_ps(x + i, mask)));
  }
}

}  // namespace encrt::kernels::x86
