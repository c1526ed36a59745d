// Helpers shared by the AVX2 kernel files (*_avx2.cpp): erf/GELU, the GEMM epilogue, tail masks
// and reductions. Include only from files compiled with -mavx2 -mfma -mf16c.
//
// Everything here has internal linkage (anonymous namespace): each kernel file gets its own copy
// compiled with its own ISA flags, so the linker can never substitute one file's build of a
// helper into another. For the same reason the kernel files avoid inline std:: functions and
// templates (std::min, std::clamp, std::nearbyint, ...), whose single out-of-line copy the linker
// may take from any file; the scalar helpers below replace them.
#pragma once

// As in x86_avx512_common.h: GCC 12's intrinsics headers trip -Wuninitialized on their own
// _mm*_undefined_*() helpers; only the header's lines are exempted. Include this header before
// anything that could pull in <immintrin.h>.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if defined(__GNUC__) && !defined(__clang__)  // a GCC-only group: clang would warn that it is unknown
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstddef>

#include "kernels/kernel_types.h"
#include "kernels/x86/x86_erf_coefficients.h"

#define ENCRT_X86_INLINE inline __attribute__((always_inline))

namespace encrt::kernels::x86 {
namespace {

// erf(z) ≈ z·P(z²)/Q(z²) on z clamped to ±3.92 (x86_erf_coefficients.h; absolute error below
// kErfMaxAbsError = 4e-7, x86_kernels.h).
ENCRT_X86_INLINE __m256 erf_avx2(__m256 x) {
  using namespace erf_coefficients;
  const __m256 z = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-kErfClamp)), _mm256_set1_ps(kErfClamp));
  const __m256 t = _mm256_mul_ps(z, z);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kP5), t, _mm256_set1_ps(kP4));
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(kQ5), t, _mm256_set1_ps(kQ4));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP3));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kQ3));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP2));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kQ2));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP1));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kQ1));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kP0));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.0f));
  return _mm256_div_ps(_mm256_mul_ps(z, p), q);
}

// GELU(x) = x·(0.5 + xc·P̂(xc²)/Q̂(xc²)), xc = clamp(x, ±5.54): erf(x/√2)/2 with the 1/√2 and
// the 1/2 folded into the coefficients (x86_erf_coefficients.h). Absolute error at most
// 0.5·|x|·kErfMaxAbsError + a few ulps of |x|; exactly x for x >= 5.54 and -0 for x <= -5.54.
ENCRT_X86_INLINE __m256 gelu_avx2(__m256 x) {
  using namespace erf_coefficients;
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-kGeluClamp)), _mm256_set1_ps(kGeluClamp));
  const __m256 t = _mm256_mul_ps(xc, xc);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kGP5), t, _mm256_set1_ps(kGP4));
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(kGQ5), t, _mm256_set1_ps(kGQ4));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kGP3));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kGQ3));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kGP2));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kGQ2));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kGP1));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(kGQ1));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kGP0));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.0f));
  const __m256 half_erf = _mm256_div_ps(_mm256_mul_ps(xc, p), q);
  // At the clamp the fp32 evaluation gives |half_erf| = 0.5 + 6e-8: clamping Φ(x) to [0, 1]
  // makes the saturated ends exact (GELU(x) = x and -0).
  const __m256 phi = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_set1_ps(0.5f), half_erf), _mm256_setzero_ps()), _mm256_set1_ps(1.0f));
  return _mm256_mul_ps(x, phi);
}

// ReLU as the reference: max(x, 0), NaN stays NaN (vmaxps alone would give 0).
ENCRT_X86_INLINE __m256 relu_avx2(__m256 v) {
  return _mm256_blendv_ps(_mm256_max_ps(v, _mm256_setzero_ps()), v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

ENCRT_X86_INLINE __m256 activate_avx2(__m256 v, Activation act) {
  if (act == Activation::kRelu) return relu_avx2(v);
  if (act == Activation::kGelu) return gelu_avx2(v);
  return v;
}

// Mask of lanes [0, n) for vmaskmovps, n >= 1 (n >= 8: all lanes).
ENCRT_X86_INLINE __m256i lanes_avx2(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

ENCRT_X86_INLINE float reduce_add_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
ENCRT_X86_INLINE float reduce_min_avx2(__m256 v) {
  __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_min_ps(s, _mm_movehl_ps(s, s));
  s = _mm_min_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
ENCRT_X86_INLINE float reduce_max_avx2(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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

// The GEMM epilogue for 8 consecutive outputs C[m, n..n+8) of which `mask` selects the valid
// ones: + bias, activation, + residual, store. The residual is read before C is written, so it
// may alias C.
ENCRT_X86_INLINE void finish_store_avx2(__m256 v, const GemmEpilogue& ep, int m, int n, bool full,
                                        __m256i mask, float* c_row) {
  if (ep.bias) v = _mm256_add_ps(v, full ? _mm256_loadu_ps(ep.bias + n) : _mm256_maskload_ps(ep.bias + n, mask));
  v = activate_avx2(v, ep.activation);
  if (ep.residual) {
    const float* r = ep.residual + static_cast<size_t>(m) * ep.ldr + n;
    v = _mm256_add_ps(v, full ? _mm256_loadu_ps(r) : _mm256_maskload_ps(r, mask));
  }
  if (full)
    _mm256_storeu_ps(c_row + n, v);
  else
    _mm256_maskstore_ps(c_row + n, mask, v);
}

}  // namespace
}  // namespace encrt::kernels::x86
