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

// GELU(x) = max(x, 0) - g(|x|), g(a) = a·Φ(-a) from a table of 16 quartic pieces selected by
// vpermps (x86_erf_coefficients.h, namespace gelu_table): absolute error at most
// gelu_table::kMaxAbsError + 2^-24·|GELU(x)| (3.9e-7 over every float of [-12, 12]), as accurate
// as the rational erf it replaced (0.5·|x|·kErfMaxAbsError), so every AVX-512 GEMM epilogue, fp32
// and fp16 included, uses it. Exactly x for x >= 5.37 and +inf, +0 for x <= -5.37, NaN for -inf
// (-inf · 0, as the reference), NaN stays NaN. Per 16 outputs: 5 FMAs, 5 permutes and 4 other
// FP operations, against 13 FMA-class
// operations, a division and 5 others for the rational erf; in the MiniLM ffn.up int8 GEMM
// (M 128, K 384, N 1536) the GELU adds 32 µs to the GEMM's 341 µs instead of 46 µs.
ENCRT_X86_INLINE __m512 gelu_avx512(__m512 x) {
  using namespace gelu_table;
  // a = min(|x|, kClamp) in one vrangeps (imm 0b1010: the operand of smaller magnitude, sign
  // cleared); NaN gives kClamp, i.e. g = 0, and the NaN comes through max(0, x) below.
  const __m512 a = _mm512_range_ps(x, _mm512_set1_ps(kClamp), 0x0a);
  // a/h + 1.5·2^23 rounds a/h to the nearest integer i, which then sits in the low mantissa bits:
  // vpermps reads the low 4 bits of each lane as the piece index.
  const __m512i piece = _mm512_castps_si512(_mm512_fmadd_ps(a, _mm512_set1_ps(kInvStep), _mm512_set1_ps(kRoundBias)));
  __m512 g = _mm512_permutexvar_ps(piece, _mm512_load_ps(kCoef[4]));
  g = _mm512_fmadd_ps(g, a, _mm512_permutexvar_ps(piece, _mm512_load_ps(kCoef[3])));
  g = _mm512_fmadd_ps(g, a, _mm512_permutexvar_ps(piece, _mm512_load_ps(kCoef[2])));
  g = _mm512_fmadd_ps(g, a, _mm512_permutexvar_ps(piece, _mm512_load_ps(kCoef[1])));
  g = _mm512_fmadd_ps(g, a, _mm512_permutexvar_ps(piece, _mm512_load_ps(kCoef[0])));
  // max returns its second operand when one is NaN: x goes second so that NaN propagates.
  const __m512 y = _mm512_sub_ps(_mm512_max_ps(_mm512_setzero_ps(), x), g);
  // GELU(-inf) is -inf · Φ(-inf) = -inf · 0: NaN, as in the reference and PyTorch (the limit 0
  // would hide an infinite input). vfixupimmps classifies x; its class -inf (token 4) takes
  // response 3 (the default NaN), every other class keeps y.
  return _mm512_fixupimm_ps(y, x, _mm512_set1_epi32(3 << 16), 0);
}

// ReLU as the reference: max(x, 0), NaN stays NaN (vmaxps would give 0: vfixupimmps puts the NaN
// of x, quieted, back for its classes QNaN and SNaN, tokens 0 and 1 -> response 2).
ENCRT_X86_INLINE __m512 relu_avx512(__m512 v) {
  return _mm512_fixupimm_ps(_mm512_max_ps(v, _mm512_setzero_ps()), v, _mm512_set1_epi32(0x22), 0);
}

ENCRT_X86_INLINE __m512 activate_avx512(__m512 v, Activation act) {
  if (act == Activation::kRelu) return relu_avx512(v);
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
