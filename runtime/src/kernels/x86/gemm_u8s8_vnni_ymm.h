// The int8 GEMM of qu8s8_gemm_6x16__avxvnni (gemm_u8s8_avxvnni.cpp): uint8 activations × int8
// weights (PanelN16K4) with vpdpbusd on ymm registers, as a template over that one instruction
// (Dot::dpbusd) so that the tests can run the same code with an emulated vpdpbusd on CPUs
// without AVX-VNNI (tests/kernels/test_x86_u8s8_vnni_emulated_avx2.cpp). Include only from
// files built with AVX2 flags.
//
// Register tile: 6 rows × 16 columns (one weight panel) = 12 ymm int32 accumulators; per k-group
// of 4: the panel's 64 bytes as 2 ymm (columns 0-7 and 8-15, 4 bytes of depth each), 6
// broadcasts of 4 activation bytes (load port only) and 12 vpdpbusd. 15 of the 16 ymm registers.
// vpdpbusd's u8 × s8 products and int32 sums are exact (no int16 saturation, unlike vpmaddubsw),
// so the integer part equals the reference's bit for bit, and the epilogue follows the
// reference's float order: float(acc - zp[m]·w_sum[n]) · scale[m] · w_scale[n], + bias,
// activation, + residual.
//
// Loop order: panels outside, row tiles inside, the whole depth in registers: a panel's weights
// (16 × K bytes: 6 KiB at K = 384) stay in L1 while the row tiles stream through them.
#pragma once

#include <cstring>

#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

namespace vnni_ymm {

constexpr int kMR = 6;
constexpr int kPrefetchGroups = 8;  // in-panel software prefetch distance, in k-groups of 64 bytes

struct TileArgs {
  int K4;                 // k-groups of 4
  const uint8_t* a;       // row m0 of the quantized activations
  size_t lda;
  const int8_t* w;        // the panel
  const float* a_scale;   // [M]
  const int32_t* a_zp;    // [M]
  const int32_t* w_sum;   // [N]
  const float* w_scale;   // [N]
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;               // valid columns of the panel, 1..16
  const GemmEpilogue* ep;
};

ENCRT_X86_INLINE __m256i broadcast_u8x4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// Exact int32 sums of one tile: acc_out[2r] columns 0-7, acc_out[2r + 1] columns 8-15 of row r.
// Out of line so that GCC keeps the 12 accumulators in registers.
template <class Dot, int MR>
__attribute__((noinline)) void accumulate(const TileArgs& t, __m256i* acc_out) {
  __m256i lo[MR], hi[MR];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
  const uint8_t* a = t.a;
  const size_t lda = t.lda;
  const int8_t* w = t.w;
  for (int k = 0; k < t.K4; ++k) {
    const __m256i w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    const __m256i w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchGroups * 64), _MM_HINT_T0);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256i ab = broadcast_u8x4(a + r * lda);
      Dot::dpbusd(lo[r], ab, w_lo);
      Dot::dpbusd(hi[r], ab, w_hi);
    }
    a += kPanelK;
    w += kPanelN * kPanelK;
  }
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_store_si256(acc_out + 2 * r, lo[r]);
    _mm256_store_si256(acc_out + 2 * r + 1, hi[r]);
  }
}

template <class Dot, int MR>
void tile(const TileArgs& t) {
  alignas(32) __m256i acc[2 * MR];
  accumulate<Dot, MR>(t, acc);
  const GemmEpilogue& ep = *t.ep;
  for (int half = 0; half < 2; ++half) {
    const int n = t.n0 + 8 * half;
    const int cols = t.cols - 8 * half;
    if (cols <= 0) break;
    const bool full = cols >= 8;
    const __m256i mask = lanes_avx2(cols);
    const __m256i ws = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.w_sum + n))
                            : _mm256_maskload_epi32(t.w_sum + n, mask);
    const __m256 wscale = full ? _mm256_loadu_ps(t.w_scale + n) : _mm256_maskload_ps(t.w_scale + n, mask);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const int m = t.m0 + r;
      const __m256i exact = _mm256_sub_epi32(acc[2 * r + half], _mm256_mullo_epi32(_mm256_set1_epi32(t.a_zp[m]), ws));
      __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(exact), _mm256_set1_ps(t.a_scale[m]));
      v = _mm256_mul_ps(v, wscale);
      finish_store_avx2(v, ep, m, n, full, mask, t.C + static_cast<size_t>(m) * t.ldc);
    }
  }
}

template <class Dot>
using TileFn = void (*)(const TileArgs&);

template <class Dot>
TileFn<Dot> select_tile(int mr) {
  static_assert(kMR == 6, "the table below lists every row count");
  static const TileFn<Dot> table[kMR] = {tile<Dot, 1>, tile<Dot, 2>, tile<Dot, 3>,
                                         tile<Dot, 4>, tile<Dot, 5>, tile<Dot, 6>};
  return table[mr - 1];
}

}  // namespace vnni_ymm

template <class Dot>
void qu8s8_vnni_ymm_gemm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                         const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  using namespace vnni_ymm;
  if (M <= 0 || N <= 0) return;
  TileArgs t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.lda = static_cast<size_t>(A.ld);
  t.a_scale = A.scale;
  t.a_zp = A.zero_point;
  t.w_sum = w_sum;
  t.w_scale = w_scale;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  const size_t panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    t.n0 = n0;
    t.cols = N - n0 < kPanelN ? N - n0 : kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * panel_bytes;
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A.data + static_cast<size_t>(m0) * t.lda;
      select_tile<Dot>(mr)(t);
      m0 += mr;
    }
  }
}

}  // namespace
}  // namespace encrt::kernels::x86
