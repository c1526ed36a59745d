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
  const int32x4_t ni = vcvtnq_s32_f32(n);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  const float32x4_t y = vmulq_f32(vmulq_f32(p, s1), s2);
  return vbslq_f32(is_nan, x, y);  // the clamp would have turned NaN into a number
}

}  // namespace
}  // namespace encrt::kernels::arm
