// Array forms of the AVX-512 GELU of the GEMM epilogues and of the rational erf
// (x86_avx512_common.h), so that tests can measure their error on their own.
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void f32_erf__avx512(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 16) {
    const __mmask16 mask = lanes_avx512(n - i);
    _mm512_mask_storeu_ps(y + i, mask, erf_avx512(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

void f32_gelu__avx512(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 16) {
    const __mmask16 mask = lanes_avx512(n - i);
    _mm512_mask_storeu_ps(y + i, mask, gelu_avx512(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

}  // namespace encrt::kernels::x86
