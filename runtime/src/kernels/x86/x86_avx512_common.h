// Helpers shared by the AVX-512 kernel files (*_avx512.cpp, *_avx512vnni.cpp): erf/GELU, the
// GEMM epilogue and row-tile scheduling. Include only from files compiled with AVX-512 flags.
//
// Everything here has internal linkage (anonymous namespace): each kernel file gets its own copy
// compiled with its own ISA flags, so the linker can never substitute one file's AVX-512 build of
// a helper into a file that must run on a lesser CPU. For the same reason the kernel files avoid
// inline std:: functions and templates (std::min, std::clamp, std::nearbyint, ...), whose single
// out-of-line copy the linker may take from any file; the scalar helpers below replace them.
#pragma once

// GCC 12's AVX-512 intrinsics build their pass-through operand with _mm512_undefined_ps(), a
// self-initialized variable that -Wuninitialized flags at every use (a false positive from the
// header itself). The header's own lines are exempted; our code keeps the warning. Include this
// header before anything that could pull in <immintrin.h>.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstddef>

#include "kernels/kernel_types.h"
#include "kernels/x86/x86_erf_coefficients.h"

#define ENCRT_X86_INLINE inline __attribute__((always_inline))

namespace encrt::kernels::x86 {
namespace {

// erf(z) ≈ z·P(z²)/Q(z²) on z clamped to ±3.92 (see x86_erf_coefficients.h for the fit and
// x86_kernels.h for the error bound, kErfMaxAbsError = 4e-7 absolute).
ENCRT_X86_INLINE __m512 erf_avx512(__m512 x) {
  using namespace erf_coefficients;
  const __m512 z = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-kErfClamp)), _mm512_set1_ps(kErfClamp));
  const __m512 t = _mm512_mul_ps(z, z);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kP5), t, _mm512_set1_ps(kP4));
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(kQ5), t, _mm512_set1_ps(kQ4));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kP3));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kQ3));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kP2));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kQ2));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kP1));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kQ1));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kP0));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
  return _mm512_div_ps(_mm512_mul_ps(z, p), q);
}

// GELU(x) = x·(0.5 + xc·P̂(xc²)/Q̂(xc²)), xc = clamp(x, ±5.54): erf(x/√2)/2 with the 1/√2 and
// the 1/2 folded into the coefficients (x86_erf_coefficients.h). Absolute error at most
// 0.5·|x|·kErfMaxAbsError + a few ulps of |x|; exactly x for x >= 5.54 and -0 for x <= -5.54.
ENCRT_X86_INLINE __m512 gelu_avx512(__m512 x) {
  using namespace erf_coefficients;
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-kGeluClamp)), _mm512_set1_ps(kGeluClamp));
  const __m512 t = _mm512_mul_ps(xc, xc);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kGP5), t, _mm512_set1_ps(kGP4));
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(kGQ5), t, _mm512_set1_ps(kGQ4));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kGP3));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kGQ3));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kGP2));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kGQ2));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kGP1));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(kGQ1));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kGP0));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.0f));
  const __m512 half_erf = _mm512_div_ps(_mm512_mul_ps(xc, p), q);
  // At the clamp the fp32 evaluation gives |half_erf| = 0.5 + 6e-8: clamping Φ(x) to [0, 1]
  // makes the saturated ends exact (GELU(x) = x and -0).
  const __m512 phi = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_set1_ps(0.5f), half_erf), _mm512_setzero_ps()), _mm512_set1_ps(1.0f));
  return _mm512_mul_ps(x, phi);
}

ENCRT_X86_INLINE __m512 activate_avx512(__m512 v, Activation act) {
  if (act == Activation::kRelu) return _mm512_max_ps(v, _mm512_setzero_ps());
  if (act == Activation::kGelu) return gelu_avx512(v);
  return v;
}

// Lanes [0, n) of a 16-lane vector, n in [1, 16].
ENCRT_X86_INLINE __mmask16 lanes_avx512(int n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

// nearbyint(x): round to an integer in the current rounding mode (half to even by default).
ENCRT_X86_INLINE float round_current_mode(float x) {
  const __m128 v = _mm_set_ss(x);
  return _mm_cvtss_f32(_mm_round_ss(v, v, _MM_FROUND_CUR_DIRECTION));
}
// sqrtf, correctly rounded (vsqrtss).
ENCRT_X86_INLINE float sqrt_float(float x) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))); }
// std::clamp's exact semantics: v < lo ? lo : hi < v ? hi : v.
ENCRT_X86_INLINE float clamp_float(float v, float lo, float hi) { return v < lo ? lo : hi < v ? hi : v; }

// The GEMM epilogue for 16 (or `mask`) consecutive outputs C[m, n..]: + bias, activation,
// + residual, store. The residual is read before C is written, so it may alias C.
ENCRT_X86_INLINE void finish_store_avx512(__m512 v, const GemmEpilogue& ep, int m, int n,
                                          __mmask16 mask, float* c_row) {
  if (ep.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ep.bias + n));
  v = activate_avx512(v, ep.activation);
  if (ep.residual)
    v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ep.residual + static_cast<size_t>(m) * ep.ldr + n));
  _mm512_mask_storeu_ps(c_row + n, mask, v);
}

}  // namespace
}  // namespace encrt::kernels::x86
