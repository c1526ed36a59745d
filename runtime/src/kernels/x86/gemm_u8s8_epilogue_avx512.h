// The float epilogue of the AVX-512 int8 GEMMs (qu8s8_gemm_8x48__avx512vnni, qu8s8_gemm_32x32__amx):
// from a tile's exact int32 sums to C. The kernels share this one code, so the same sums give the
// same instructions in the same order, and bit for bit the same outputs, whatever computed the
// sums (vpdpbusd or tdpbusd). Include only from files compiled with AVX-512 flags.
//
// Per output, the reference's order (kernel_types.h): exact acc - zp[m]·w_sum[n] in int32, then
// float · scale[m] · w_scale[n], + bias, activation, + residual, store.
#pragma once

#include "kernels/x86/x86_avx512_common.h"

namespace encrt::kernels::x86 {
namespace {

// Where a tile's outputs go: rows m0.. and columns n0.. of C, with the per-row and per-column
// factors of the whole GEMM.
struct U8S8TileOut {
  const float* a_scale;     // [M]
  const int32_t* a_zp;      // [M]
  const int32_t* w_sum;     // [N]
  const float* w_scale;     // [N]
  float* C;
  size_t ldc;
  int m0, n0;
  int last_cols;            // valid columns in the tile's last zmm, 1..16
  const GemmEpilogue* ep;
};

// The epilogue of one tile, from the int32 sums acc[r·NV + j] (row r, columns 16j..16j+15) of
// `rows` rows. Specialized on the activation and on the residual so that the per-vector code is
// straight-line; the per-column vectors (w_sum, w_scale, bias) are loaded once per tile. A missing
// bias adds -0.0f, the exact identity of IEEE addition.
template <int NV, Activation kAct, bool kResidual>
void u8s8_epilogue_avx512(const U8S8TileOut& t, int rows, const __m512i* acc) {
  const GemmEpilogue& ep = *t.ep;
  const int n0 = t.n0;
  __mmask16 mask[NV];
  __m512i ws[NV];
  __m512 wsc[NV], bias[NV];
#pragma GCC unroll 4
  for (int j = 0; j < NV; ++j) {
    mask[j] = j == NV - 1 ? lanes_avx512(t.last_cols) : static_cast<__mmask16>(0xffff);
    ws[j] = _mm512_maskz_loadu_epi32(mask[j], t.w_sum + n0 + 16 * j);
    wsc[j] = _mm512_maskz_loadu_ps(mask[j], t.w_scale + n0 + 16 * j);
    bias[j] = ep.bias ? _mm512_maskz_loadu_ps(mask[j], ep.bias + n0 + 16 * j) : _mm512_set1_ps(-0.0f);
  }
  const float* residual = kResidual ? ep.residual + static_cast<size_t>(t.m0) * ep.ldr + n0 : nullptr;
  const size_t ldr = kResidual ? static_cast<size_t>(ep.ldr) : 0;
  float* c_row = t.C + static_cast<size_t>(t.m0) * t.ldc + n0;
  const size_t ldc = t.ldc;
  for (int r = 0; r < rows; ++r) {
    const int m = t.m0 + r;
    const __m512i zp = _mm512_set1_epi32(t.a_zp[m]);
    const __m512 sc = _mm512_set1_ps(t.a_scale[m]);
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __m512i exact = _mm512_sub_epi32(acc[r * NV + j], _mm512_mullo_epi32(zp, ws[j]));
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(exact), sc), wsc[j]);
      v = _mm512_add_ps(v, bias[j]);
      if (kAct == Activation::kRelu) v = relu_avx512(v);
      if (kAct == Activation::kGelu) v = gelu_avx512(v);
      // The residual is read before C is written: it may alias C.
      if (kResidual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask[j], residual + 16 * j));
      _mm512_mask_storeu_ps(c_row + 16 * j, mask[j], v);
    }
    c_row += ldc;
    residual += ldr;
  }
}

using U8S8EpilogueFn = void (*)(const U8S8TileOut&, int, const __m512i*);

template <int kMaxNV, Activation kAct, bool kResidual>
U8S8EpilogueFn select_u8s8_epilogue_nv(int nv) {
  static_assert(kMaxNV >= 1 && kMaxNV <= 3, "one case per vector count below");
  if constexpr (kMaxNV >= 3)
    if (nv == 3) return u8s8_epilogue_avx512<3, kAct, kResidual>;
  if constexpr (kMaxNV >= 2)
    if (nv == 2) return u8s8_epilogue_avx512<2, kAct, kResidual>;
  return u8s8_epilogue_avx512<1, kAct, kResidual>;
}

// The epilogue for tiles of nv zmm per row (1..kMaxNV) and the GEMM's epilogue `ep`.
template <int kMaxNV>
U8S8EpilogueFn select_u8s8_epilogue(int nv, const GemmEpilogue& ep) {
  const bool res = ep.residual != nullptr;
  switch (ep.activation) {
    case Activation::kRelu:
      return res ? select_u8s8_epilogue_nv<kMaxNV, Activation::kRelu, true>(nv)
                 : select_u8s8_epilogue_nv<kMaxNV, Activation::kRelu, false>(nv);
    case Activation::kGelu:
      return res ? select_u8s8_epilogue_nv<kMaxNV, Activation::kGelu, true>(nv)
                 : select_u8s8_epilogue_nv<kMaxNV, Activation::kGelu, false>(nv);
    case Activation::kNone:
      break;
  }
  return res ? select_u8s8_epilogue_nv<kMaxNV, Activation::kNone, true>(nv)
             : select_u8s8_epilogue_nv<kMaxNV, Activation::kNone, false>(nv);
}

}  // namespace
}  // namespace encrt::kernels::x86
