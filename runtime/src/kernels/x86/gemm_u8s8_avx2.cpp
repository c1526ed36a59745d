// qu8s8_gemm_6x8__avx2: uint8 activations × int8 weights (PanelN16K4) without VNNI, exact.
//
// vpmaddubsw would be the obvious instruction, but it saturates its pairwise int16 sums
// (255·127·2 > 32767) and would not match the reference. Instead both operands are widened to
// int16 and multiplied by vpmaddwd, whose pairwise sums are int32 (|a·w + a'·w'| ≤ 64770):
//   weights: 16 bytes = 4 columns × 4 k of a panel's k-group → vpmovsxbw → 16 int16;
//   activations: 4 bytes of a row → broadcast → vpmovzxbw → (a0 a1 a2 a3) × 4 as int16;
//   vpmaddwd → per column two int32 partial sums (k0·k1 and k2·k3), accumulated by vpaddd.
// Register tile: 6 rows × 8 columns (half a panel) = 12 ymm accumulators + 2 weights + 1
// activation vector. At the end vphaddd folds each column's two partial sums.
//
// Epilogue as in the reference: float(acc - zp[m]·w_sum[n]) · scale[m] · w_scale[n], + bias,
// activation, + residual.
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

#include <cstring>

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 6;
constexpr int kNR = 8;

struct TileArgs {
  int K4;
  const uint8_t* a;     // row m0 of the quantized activations
  size_t lda;
  const int8_t* w;      // the k-group 0 of the tile's 8 columns inside their panel
  const float* a_scale;
  const int32_t* a_zp;
  const int32_t* w_sum;
  const float* w_scale;
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;             // valid columns, 1..8
  const GemmEpilogue* ep;
};

ENCRT_X86_INLINE __m256i broadcast_u8x4_as_i16(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_cvtepu8_epi16(_mm_set1_epi32(v));
}

// acc += vpmaddwd(a, w): as one asm block with acc tied in place ("+x") and an early-clobbered
// temporary, so that GCC keeps the 12 accumulators in registers (with the intrinsics it spills
// some of them on every step).
ENCRT_X86_INLINE void madd_accumulate(__m256i& acc, __m256i a_i16, __m256i w_i16) {
  __m256i product;
  asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(product) : "x"(a_i16), "x"(w_i16));
}

// Exact int32 column sums of one tile into acc_out[r] (8 columns in order). Out of line so that
// GCC keeps the accumulators in registers.
template <int MR>
__attribute__((noinline)) void accumulate(const TileArgs& t, __m256i* acc_out) {
  __m256i lo[MR], hi[MR];  // columns 0-3 and 4-7, two partial sums per column
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
  const uint8_t* a = t.a;
  const size_t lda = t.lda;
  const int8_t* w = t.w;
  for (int k = 0; k < t.K4; ++k) {
    const __m256i w_lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    const __m256i w_hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256i ab = broadcast_u8x4_as_i16(a + r * lda);
      madd_accumulate(lo[r], ab, w_lo);
      madd_accumulate(hi[r], ab, w_hi);
    }
    a += kPanelK;
    w += kPanelN * kPanelK;
  }
  // lo = (c0 c0 c1 c1 | c2 c2 c3 c3), hi = (c4 c4 c5 c5 | c6 c6 c7 c7):
  // vphaddd → (c0 c1 c4 c5 | c2 c3 c6 c7), then 64-bit lanes (0 2 1 3) → c0..c7.
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    _mm256_store_si256(acc_out + r, _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo[r], hi[r]), 0xd8));
}

template <int MR>
void tile(const TileArgs& t) {
  __m256i acc[MR];
  accumulate<MR>(t, acc);
  const GemmEpilogue& ep = *t.ep;
  const bool full = t.cols == kNR;
  const __m256i mask = lanes_avx2(t.cols);
  const __m256i ws = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.w_sum + t.n0))
                          : _mm256_maskload_epi32(t.w_sum + t.n0, mask);
  const __m256 wscale = full ? _mm256_loadu_ps(t.w_scale + t.n0) : _mm256_maskload_ps(t.w_scale + t.n0, mask);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    const __m256i exact = _mm256_sub_epi32(acc[r], _mm256_mullo_epi32(_mm256_set1_epi32(t.a_zp[m]), ws));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(exact), _mm256_set1_ps(t.a_scale[m]));
    v = _mm256_mul_ps(v, wscale);
    finish_store_avx2(v, ep, m, t.n0, full, mask, t.C + static_cast<size_t>(m) * t.ldc);
  }
}

using TileFn = void (*)(const TileArgs&);
TileFn select_tile(int mr) {
  static_assert(kMR == 6, "the table below lists every row count");
  static const TileFn table[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};
  return table[mr - 1];
}

}  // namespace

void qu8s8_gemm_6x8__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                          const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
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
  for (int n0 = 0; n0 < N; n0 += kNR) {
    t.n0 = n0;
    t.cols = N - n0 < kNR ? N - n0 : kNR;
    // Columns n0..n0+7 are the first or second half of their panel's 16 columns.
    t.w = W + static_cast<size_t>(n0 / kPanelN) * panel_bytes + (n0 % kPanelN) * kPanelK;
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A.data + static_cast<size_t>(m0) * t.lda;
      select_tile(mr)(t);
      m0 += mr;
    }
  }
}

}  // namespace encrt::kernels::x86
