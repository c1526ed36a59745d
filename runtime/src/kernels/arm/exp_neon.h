// Vector exp for the ARM kernel files: the method and coefficients of the x86 exp
// (x86/exp_coefficients.h: Cody-Waite reduction, degree-6 minimax polynomial, 2^n built in the
// exponent field in two factors so that subnormal results are rounded once). Accuracy:
// kExpNeonMaxRelError (arm_kernels.h), checked in tests/kernels/test_arm_attention.cpp.
#pragma once

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"
#include "kernels/x86/exp_coefficients.h"  // plain constants, shared with the x86 exp

namespace encrt::kernels::arm {

namespace {

// p · 2^n (n an integer-valued float): 2^n built in the exponent field in two factors
// 2^(n>>1) · 2^(n - (n>>1)) so that each stays representable; the second multiplication is the
// only inexact one, so subnormal results are rounded once.
ENCRT_ARM_INLINE float32x4_t scale_pow2_neon(float32x4_t p, float32x4_t n) {
  const int32x4_t ni = vcvtnq_s32_f32(n);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  return vmulq_f32(vmulq_f32(p, s1), s2);
}

// exp(x) per lane. -inf gives +0, +inf gives +inf, NaN stays NaN.
ENCRT_ARM_INLINE float32x4_t exp_neon(float32x4_t x) {
  using namespace x86::exp_coefficients;
  const uint32x4_t is_nan = vmvnq_u32(vceqq_f32(x, x));
  const float32x4_t xc = vminq_f32(vdupq_n_f32(kMaxArg), vmaxq_f32(vdupq_n_f32(kMinArg), x));
  const float32x4_t n = vrndnq_f32(vmulq_f32(xc, vdupq_n_f32(kLog2e)));
  float32x4_t r = vfmsq_f32(xc, n, vdupq_n_f32(kLn2Hi));
  r = vfmsq_f32(r, n, vdupq_n_f32(kLn2Lo));
  float32x4_t p = vfmaq_f32(vdupq_n_f32(kC5), vdupq_n_f32(kC6), r);
  p = vfmaq_f32(vdupq_n_f32(kC4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC2), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC1), p, r);
  p = vfmaq_f32(vdupq_n_f32(kC0), p, r);
  const float32x4_t y = scale_pow2_neon(p, n);
  return vbslq_f32(is_nan, x, y);  // the clamp would have turned NaN into a number
}

// The common part of exp2_x255_neon and exp2_x255_neon_normal: n = round(t) (to *n_out) and
// p = 255 · 2^(t - n) by the x86 kernels' polynomial, p in [180, 361].
ENCRT_ARM_INLINE float32x4_t exp2_x255_reduced(float32x4_t t, float32x4_t* n_out) {
  using namespace x86::exp2_coefficients;
  const float32x4_t n = vrndnq_f32(t);
  const float32x4_t f = vsubq_f32(t, n);  // exact: |f| <= 1/2
  float32x4_t p = vfmaq_f32(vdupq_n_f32(kC3), vdupq_n_f32(kC4), f);
  p = vfmaq_f32(vdupq_n_f32(kC2), p, f);
  p = vfmaq_f32(vdupq_n_f32(kC1), p, f);
  p = vfmaq_f32(vdupq_n_f32(kC0), p, f);
  *n_out = n;
  return p;
}

// 255 · 2^t per lane for t <= 0 (the base-2 softmax of the int8 attention's dense path,
// attention_i8_neon_common.h): the polynomial and operations of the x86 kernels' exp2_x255_avx2
// (x86/exp_coefficients.h), so the same relative error kExp2MaxRelError while the result is a
// normal float. t is clamped to -160 first; 2^n is applied in two factors as in exp_neon, so that
// a subnormal result is rounded once and t <= -160 gives +0. Lanes with t > 0 give unspecified
// values.
ENCRT_ARM_INLINE float32x4_t exp2_x255_neon(float32x4_t t) {
  float32x4_t n;
  const float32x4_t p = exp2_x255_reduced(vmaxq_f32(vdupq_n_f32(-160.0f), t), &n);
  return scale_pow2_neon(p, n);
}

// exp2_x255_neon(t) bit for bit where every lane has t >= -125 (a row whose smallest exponent is
// that close to its largest, the softmax's common case): round(t) = n >= -125 and p in
// [180, 361], so p · 2^n is a normal float, which scale_pow2_neon's two multiplications give
// exactly; here n is added to p's exponent field instead (3 instructions instead of 9, and no clamp).
ENCRT_ARM_INLINE float32x4_t exp2_x255_neon_normal(float32x4_t t) {
  float32x4_t n;
  const float32x4_t p = exp2_x255_reduced(t, &n);
  return vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(p), vshlq_n_s32(vcvtnq_s32_f32(n), 23)));
}

}  // namespace
}  // namespace encrt::kernels::arm
