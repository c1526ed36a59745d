// Vector exp for the AVX2 kernel files (*_avx2.cpp); coefficients and method in
// exp_coefficients.h, measured accuracy kExpMaxRelError (attention_x86.h). Include after
// x86_avx2_common.h (it brings <immintrin.h> in with GCC's false positive silenced).
//
// Internal linkage, as in x86_avx2_common.h: every kernel file keeps its own copy built with its
// own ISA flags.
#pragma once

#include "kernels/x86/exp_coefficients.h"
#include "kernels/x86/x86_avx2_common.h"

namespace encrt::kernels::x86 {
namespace {

// The part both exps share: n = round(x · log2 e) (into *n) and p ≈ e^r, r = x - n·ln2 (|r| <=
// ln2/2, so p lies in [0.70, 1.42]), for x already clamped.
ENCRT_X86_INLINE __m256 exp_reduced_avx2(__m256 x, __m256* n) {
  using namespace exp_coefficients;
  *n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(*n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(*n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kC6), r, _mm256_set1_ps(kC5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC1));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC0));
}

// p · 2^n for n in [-252, 254] (both factors below normal powers of two; exp_avx2 takes n in
// [-150, 129], exp2_x255_avx2 in [-160, 0]). AVX2 has no vscalefps: 2^n is built in the exponent field, in two
// factors 2^(n>>1) · 2^(n - (n>>1)) so that each stays representable; the second multiplication
// is the only inexact one, so subnormal and overflowing results are rounded once, as by vscalefps.
// NaN lanes convert to INT_MIN; their p is NaN already, which the scaling keeps.
ENCRT_X86_INLINE __m256 exp_scale_avx2(__m256 p, __m256i ni) {
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// p · 2^n (n as float and as int32 ni) for the exps of non-positive arguments, p >= 0.5: when every
// lane's n is at least -125, p · 2^n is a normal float and n is added to p's exponent field, which
// is exact; else exp_scale_avx2 (two multiplications, one rounding), which gives the same bits
// there and rounds subnormal results once.
ENCRT_X86_INLINE __m256 scale_nonpositive_avx2(__m256 p, __m256 n, __m256i ni) {
  if (_mm256_movemask_ps(_mm256_cmp_ps(n, _mm256_set1_ps(-125.0f), _CMP_LT_OQ)) == 0)
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(ni, 23)));
  return exp_scale_avx2(p, ni);
}

// exp(x) per lane. -inf gives +0, +inf gives +inf, NaN stays NaN.
ENCRT_X86_INLINE __m256 exp_avx2(__m256 x) {
  using namespace exp_coefficients;
  // max/min return their second operand when either is NaN: x goes second so NaN propagates.
  x = _mm256_min_ps(_mm256_set1_ps(kMaxArg), _mm256_max_ps(_mm256_set1_ps(kMinArg), x));
  __m256 n;
  const __m256 p = exp_reduced_avx2(x, &n);
  return exp_scale_avx2(p, _mm256_cvtps_epi32(n));
}

// exp_avx2(x) bit for bit for x <= 0, -inf and NaN included (the softmaxes' x - max, with their
// NaN rows); x > 0 gives unspecified values (the attention kernels mask the lanes past the keys,
// where it can occur). When every lane's n is at least -125 (x > -86.6: every result a normal
// float) the scaling adds n to p's exponent field: p lies in [0.70, 1.42] and p · 2^n is a normal
// float, so exp_scale_avx2's two multiplications are exact there and give the same bits.
// Otherwise exp_scale_avx2.
ENCRT_X86_INLINE __m256 exp_nonpositive_avx2(__m256 x) {
  using namespace exp_coefficients;
  x = _mm256_max_ps(_mm256_set1_ps(kMinArg), x);
  __m256 n;
  const __m256 p = exp_reduced_avx2(x, &n);
  return scale_nonpositive_avx2(p, n, _mm256_cvtps_epi32(n));
}

// 255 · 2^t per lane for t <= 0 (the softmax of the ymm int8 attention, attention_i8_avx2.h): the
// polynomial of exp2_x255_avx512 (exp_coefficients.h), so the same relative error
// kExp2MaxRelError while the result is a normal float. AVX2 has no vscalefps: scale_nonpositive_avx2
// scales by 2^n, n = round(t), with t first clamped to -160 (exp_scale_avx2 takes n >= -150 or so),
// so that subnormal results are rounded once and t <= -160 gives +0, as vscalefps would.
// Lanes with t > 0 (the key slots past the real ones, which the caller masks) give unspecified
// values.
ENCRT_X86_INLINE __m256 exp2_x255_avx2(__m256 t) {
  using namespace exp2_coefficients;
  t = _mm256_max_ps(_mm256_set1_ps(-160.0f), t);
  const __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.0f), t);  // t - n, exact (|f| <= 1/2)
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kC4), f, _mm256_set1_ps(kC3));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kC2));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kC1));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kC0));
  return scale_nonpositive_avx2(p, n, _mm256_cvtps_epi32(n));
}

}  // namespace
}  // namespace encrt::kernels::x86
