// Vector exp for the AVX-512 kernel files (*_avx512.cpp, *_avx512vnni.cpp); coefficients and
// method in exp_coefficients.h, measured accuracy kExpMaxRelError (attention_x86.h). Include
// after x86_avx512_common.h (it brings <immintrin.h> in with GCC's false positive silenced).
//
// Internal linkage, as in x86_avx512_common.h: every kernel file keeps its own copy built with
// its own ISA flags.
#pragma once

#include "kernels/x86/exp_coefficients.h"
#include "kernels/x86/x86_avx512_common.h"

namespace encrt::kernels::x86 {
namespace {

// exp(x) per lane. -inf gives +0, +inf gives +inf, NaN stays NaN; results in the subnormal range
// are rounded once (vscalefps), so they are as accurate as the normal ones in absolute terms.
ENCRT_X86_INLINE __m512 exp_avx512(__m512 x) {
  using namespace exp_coefficients;
  // max/min return their second operand when either is NaN: x goes second so NaN propagates.
  x = _mm512_min_ps(_mm512_set1_ps(kMaxArg), _mm512_max_ps(_mm512_set1_ps(kMinArg), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kC6), r, _mm512_set1_ps(kC5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC0));
  return _mm512_scalef_ps(p, n);  // p · 2^n, one rounding, overflow to inf and underflow to 0
}

}  // namespace
}  // namespace encrt::kernels::x86
