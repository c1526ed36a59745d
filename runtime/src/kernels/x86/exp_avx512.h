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

// 255 · 2^t per lane for finite t <= 0 (the softmax of the int8 attention, where 255 is the
// uint8 scale of the largest probability): relative error below kExp2MaxRelError
// (exp_coefficients.h) while the result is a normal float, smoothly down to +0 for t < -133.
// 2 FP-add-class operations, 4 FMAs and a vscalefps per 16 lanes.
ENCRT_X86_INLINE __m512 exp2_x255_avx512(__m512 t) {
  using namespace exp2_coefficients;
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.0f), t);  // t - n, exact (|f| <= 1/2); on the FMA pipes
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kC4), f, _mm512_set1_ps(kC3));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kC2));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kC1));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kC0));
  return _mm512_scalef_ps(p, n);
}

// log2(x) per lane for positive finite x, normal or subnormal (vgetmantps / vgetexpps normalize
// both): absolute error below kLog2MaxAbsError + 2^-24·|log2 x| (exp_coefficients.h).
ENCRT_X86_INLINE __m512 log2_avx512(__m512 x) {
  using namespace exp2_coefficients;
  const __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_src);
  __m512 e = _mm512_getexp_ps(x);  // floor(log2 x)
  // m < 1 means the mantissa in [1, 2) was in [1.5, 2): x = m · 2^(e + 1).
  e = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.0f), _CMP_LT_OQ), e, _mm512_set1_ps(1.0f));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 z = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one));
  const __m512 z2 = _mm512_mul_ps(z, z);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kLog2Odd[5]), z2, _mm512_set1_ps(kLog2Odd[4]));
  p = _mm512_fmadd_ps(p, z2, _mm512_set1_ps(kLog2Odd[3]));
  p = _mm512_fmadd_ps(p, z2, _mm512_set1_ps(kLog2Odd[2]));
  p = _mm512_fmadd_ps(p, z2, _mm512_set1_ps(kLog2Odd[1]));
  p = _mm512_fmadd_ps(p, z2, _mm512_set1_ps(kLog2Odd[0]));
  return _mm512_fmadd_ps(p, z, e);
}

}  // namespace
}  // namespace encrt::kernels::x86
