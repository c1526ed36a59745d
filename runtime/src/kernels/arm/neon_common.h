// Helpers shared by the ARM kernel files: the GELU of the GEMM epilogues and the epilogue itself.
// Internal linkage (anonymous namespace) for the reason given in x86_avx512_common.h: each file
// gets its own copy built with its own flags.
#pragma once

#include <arm_neon.h>

#include <cstddef>

#include "kernels/kernel_types.h"
#include "kernels/x86/x86_erf_coefficients.h"  // plain constants, shared with the AVX2 GELU

#define ENCRT_ARM_INLINE inline __attribute__((always_inline))
// The same for a lambda (after its parameter list).
#define ENCRT_ARM_INLINE_LAMBDA __attribute__((always_inline))

namespace encrt::kernels::arm {
namespace {

// GELU(x) = x·clamp(0.5 + xc·P̂(xc²)/Q̂(xc²), 0, 1), xc = clamp(x, ±kGeluClamp): the rational erf
// of the AVX2 epilogues (x86_erf_coefficients.h), with the same error bound: 0.5·|x|·4e-7 plus a
// few ulps of |x|.
ENCRT_ARM_INLINE float32x4_t gelu_neon(float32x4_t x) {
  using namespace x86::erf_coefficients;
  const float32x4_t xc = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-kGeluClamp)), vdupq_n_f32(kGeluClamp));
  const float32x4_t t = vmulq_f32(xc, xc);
  float32x4_t p = vfmaq_f32(vdupq_n_f32(kGP4), vdupq_n_f32(kGP5), t);
  float32x4_t q = vfmaq_f32(vdupq_n_f32(kGQ4), vdupq_n_f32(kGQ5), t);
  p = vfmaq_f32(vdupq_n_f32(kGP3), p, t);
  q = vfmaq_f32(vdupq_n_f32(kGQ3), q, t);
  p = vfmaq_f32(vdupq_n_f32(kGP2), p, t);
  q = vfmaq_f32(vdupq_n_f32(kGQ2), q, t);
  p = vfmaq_f32(vdupq_n_f32(kGP1), p, t);
  q = vfmaq_f32(vdupq_n_f32(kGQ1), q, t);
  p = vfmaq_f32(vdupq_n_f32(kGP0), p, t);
  q = vfmaq_f32(vdupq_n_f32(1.0f), q, t);
  const float32x4_t half_erf = vdivq_f32(vmulq_f32(xc, p), q);
  const float32x4_t phi = vminq_f32(vmaxq_f32(vaddq_f32(vdupq_n_f32(0.5f), half_erf), vdupq_n_f32(0.0f)),
                                    vdupq_n_f32(1.0f));
  return vmulq_f32(x, phi);
}

// The GEMM epilogue for 4 consecutive outputs C[m, n..n+4) of which the first `valid` (1..4) are
// stored: + bias, activation, + residual. The residual is read before C is written (it may alias C).
ENCRT_ARM_INLINE void finish_store_neon(float32x4_t v, const GemmEpilogue& ep, int m, int n, int valid, float* c_row) {
  if (valid >= 4) {
    if (ep.bias) v = vaddq_f32(v, vld1q_f32(ep.bias + n));
    if (ep.activation == Activation::kRelu) v = vmaxq_f32(v, vdupq_n_f32(0.0f));
    if (ep.activation == Activation::kGelu) v = gelu_neon(v);
    if (ep.residual) v = vaddq_f32(v, vld1q_f32(ep.residual + static_cast<size_t>(m) * ep.ldr + n));
    vst1q_f32(c_row + n, v);
    return;
  }
  // A partial vector: through a small buffer, touching only the valid columns of bias, residual and C.
  float lanes[4] = {0, 0, 0, 0};
  if (ep.bias) {
    for (int i = 0; i < valid; ++i) lanes[i] = ep.bias[n + i];
    v = vaddq_f32(v, vld1q_f32(lanes));
  }
  if (ep.activation == Activation::kRelu) v = vmaxq_f32(v, vdupq_n_f32(0.0f));
  if (ep.activation == Activation::kGelu) v = gelu_neon(v);
  vst1q_f32(lanes, v);
  for (int i = 0; i < valid; ++i) {
    float y = lanes[i];
    if (ep.residual) y += ep.residual[static_cast<size_t>(m) * ep.ldr + n + i];
    c_row[n + i] = y;
  }
}

}  // namespace
}  // namespace encrt::kernels::arm
