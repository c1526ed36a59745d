// The fp16-arithmetic GEMM of f16_gemm_8x48__avx512fp16 (gemm_f16_avx512fp16.cpp), as a template
// over its four fp16 operations (Fp16: Vec, zero, from_bits, to_bits, fmadd), so that the same
// code also runs with an emulated vfmadd231ph in the tests on CPUs without AVX512-FP16
// (tests/kernels/test_x86_f16_arith_emulated_avx512.cpp). Include only from AVX-512 files.
//
// C = epilogue(A · Wᵀ) with W packed PanelN16 in IEEE half, in fp16 arithmetic (vfmadd231ph:
// 32 lanes per instruction, twice vfmadd231ps), with the exact semantics of kernel_types.h
// (kF16ArithBlockK) and ref::gemm_f16_arith.
//
// Even/odd depth lanes: a PanelN16 panel stores rows k and k+1 of its 16 columns next to each
// other, so one 64-byte load gives W(c, k) for c = 0..15 followed by W(c, k+1); one vpermw
// interleaves them to W(0, k), W(0, k+1), W(1, k), W(1, k+1), ... A 32-bit broadcast of the pair
// (a[m, k], a[m, k+1]) then lines up with it: fp16 lane 2c accumulates column c's even-k products
// and lane 2c+1 its odd-k products. The two are added in fp32 at the end (a vpermt2ps pair picks
// the even and the odd sums apart). Same file format as the F16C kernels; no repacking.
//
// Register tile: 8 rows × 48 columns = 24 zmm fp16 accumulators, 3 zmm of weights. Per depth
// pair: 3 weight loads and 3 vpermw, 8 broadcasts (load port only), 24 FMAs. Depth runs in
// blocks of kF16ArithBlockK: each block converts the tile's A values to half (vcvtps2ph) into a
// small stack buffer, runs its pairs, then adds the fp16 accumulators into fp32 sums (vcvtph2ps +
// vaddps), which bounds the fp16 rounding error (kernel_types.h). A tile whose result has a
// non-finite value (an fp16 overflow) is recomputed in fp32 by f16w_gemm_6x64__avx512.
// Measured on an Intel Xeon (benchmarks/run_bundle_x86.sh): 1.66-1.84× f16w_gemm_6x64__avx512.
#pragma once

#include <cstring>

#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 8;
constexpr int kNV = 3;
constexpr int kBlock = kF16ArithBlockK;        // depth values per fp16 block (even)
constexpr int kPrefetchHalves = 256;           // 512 bytes ahead in each panel
static_assert(kBlock % 32 == 0, "a block converts A in whole zmm of 16 floats, two per pair of rows");

struct TileArgs {
  int K;
  const float* a;          // row m0 of A
  size_t lda;
  const uint16_t* w;       // first panel of the tile's columns
  size_t panel_elems;      // K * 16
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;                // valid columns in the tile, 1..48
  const GemmEpilogue* ep;
};

// The fp32 sums of one tile: [row][panel][columns 0..7 | 8..15], each as (even k, odd k) pairs.
template <int MR, int NV>
struct TileSums {
  __m512 v[MR][NV][2];
};

// Depth pairs of one block: acc += broadcast(a pair) · (W rows k, k+1), in fp16.
// fp16 lane 2c ← lane c (row k), lane 2c+1 ← lane 16+c (row k+1).
ENCRT_X86_INLINE __m512i interleave_rows_index() {
  return _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4,
                          19, 3, 18, 2, 17, 1, 16, 0);
}

template <class Fp16, int MR, int NV>
ENCRT_X86_INLINE void block_pairs(int pairs, bool odd_tail, const uint16_t (*ah)[kBlock], const uint16_t* w,
                                  size_t ps, typename Fp16::Vec (&acc)[MR][NV]) {
  const __m512i interleave = interleave_rows_index();
  // One depth pair p; `rows` selects the halves of the panel to load: all 32 (rows k and k+1),
  // or the first 16 for the last value of an odd K (row k+1 lies past the panel; the activation
  // buffer is zero there too). Inlined with a constant mask, the full loads are plain loads.
  auto step = [&](int p, __mmask32 rows) __attribute__((always_inline)) {
    typename Fp16::Vec wv[NV];
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) {
      wv[j] = Fp16::from_bits(_mm512_permutexvar_epi16(interleave, _mm512_maskz_loadu_epi16(rows, w + j * ps + 32 * p)));
      _mm_prefetch(reinterpret_cast<const char*>(w + j * ps + 32 * p + kPrefetchHalves), _MM_HINT_T0);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      int32_t pair;
      std::memcpy(&pair, ah[r] + 2 * p, sizeof pair);
      const typename Fp16::Vec ab = Fp16::from_bits(_mm512_set1_epi32(pair));
#pragma GCC unroll 3
      for (int j = 0; j < NV; ++j) acc[r][j] = Fp16::fmadd(ab, wv[j], acc[r][j]);
    }
  };
  for (int p = 0; p < pairs; ++p) step(p, 0xffffffffu);
  if (odd_tail) step(pairs, 0x0000ffffu);
}

// The depth loop of one tile, out of line so that GCC keeps the 24 accumulators in registers.
template <class Fp16, int MR, int NV>
__attribute__((noinline)) void accumulate(const TileArgs& t, TileSums<MR, NV>* sums) {
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) sums->v[r][j][0] = sums->v[r][j][1] = _mm512_setzero_ps();

  alignas(64) uint16_t ah[MR][kBlock];  // the block's A values in half, zero past its depth
  for (int k0 = 0; k0 < t.K; k0 += kBlock) {
    const int depth = t.K - k0 < kBlock ? t.K - k0 : kBlock;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const float* src = t.a + r * t.lda + k0;
#pragma GCC unroll 4
      for (int i = 0; i < kBlock / 16; ++i) {
        const int left = depth - 16 * i;
        const __mmask16 mask = left >= 16 ? static_cast<__mmask16>(0xffff) : left <= 0 ? 0 : lanes_avx512(left);
        const __m512 v = _mm512_maskz_loadu_ps(mask, src + 16 * i);
        _mm256_store_si256(reinterpret_cast<__m256i*>(ah[r] + 16 * i),
                           _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
    }
    typename Fp16::Vec acc[MR][NV];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
      for (int j = 0; j < NV; ++j) acc[r][j] = Fp16::zero();
    block_pairs<Fp16, MR, NV>(depth / 2, depth % 2 != 0, ah, t.w + static_cast<size_t>(k0) * kPanelN, t.panel_elems, acc);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
      for (int j = 0; j < NV; ++j) {
        const __m512i h = Fp16::to_bits(acc[r][j]);
        sums->v[r][j][0] = _mm512_add_ps(sums->v[r][j][0], _mm512_cvtph_ps(_mm512_castsi512_si256(h)));
        sums->v[r][j][1] = _mm512_add_ps(sums->v[r][j][1], _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)));
      }
  }
}

template <class Fp16, int MR, int NV>
void tile(const TileArgs& t) {
  TileSums<MR, NV> sums;
  accumulate<Fp16, MR, NV>(t, &sums);
  const int last_cols = t.cols - (NV - 1) * kPanelN;
  // Sums of columns 0..7 hold (even, odd) pairs, then columns 8..15: pick the evens and the odds.
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  __m512 x[MR][NV];
  __mmask16 not_finite = 0;
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) {
      x[r][j] = _mm512_add_ps(_mm512_permutex2var_ps(sums.v[r][j][0], even, sums.v[r][j][1]),
                              _mm512_permutex2var_ps(sums.v[r][j][0], odd, sums.v[r][j][1]));
      not_finite |= _mm512_fpclass_ps_mask(x[r][j], 0x99);  // QNaN | +inf | -inf | SNaN
    }
  if (not_finite) {  // an fp16 overflow somewhere in the tile: redo it in fp32 arithmetic
    const GemmEpilogue& ep = *t.ep;
    GemmEpilogue shifted = ep;
    if (ep.bias) shifted.bias = ep.bias + t.n0;
    if (ep.residual) shifted.residual = ep.residual + static_cast<size_t>(t.m0) * ep.ldr + t.n0;
    f16w_gemm_6x64__avx512(MR, t.cols, t.K, t.a, static_cast<int>(t.lda), t.w,
                           t.C + static_cast<size_t>(t.m0) * t.ldc + t.n0, static_cast<int>(t.ldc), shifted);
    return;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
#pragma GCC unroll 3
    for (int j = 0; j < NV; ++j) {
      const __mmask16 mask = j == NV - 1 ? lanes_avx512(last_cols) : static_cast<__mmask16>(0xffff);
      finish_store_avx512(x[r][j], *t.ep, m, t.n0 + 16 * j, mask, c_row);
    }
  }
}

using TileFn = void (*)(const TileArgs&);

template <class Fp16>
TileFn select_tile(int mr, int nv) {
  static_assert(kMR == 8 && kNV == 3, "the table below lists every (rows, vectors) pair");
  static const TileFn table[kMR][kNV] = {
      {tile<Fp16, 1, 1>, tile<Fp16, 1, 2>, tile<Fp16, 1, 3>}, {tile<Fp16, 2, 1>, tile<Fp16, 2, 2>, tile<Fp16, 2, 3>},
      {tile<Fp16, 3, 1>, tile<Fp16, 3, 2>, tile<Fp16, 3, 3>}, {tile<Fp16, 4, 1>, tile<Fp16, 4, 2>, tile<Fp16, 4, 3>},
      {tile<Fp16, 5, 1>, tile<Fp16, 5, 2>, tile<Fp16, 5, 3>}, {tile<Fp16, 6, 1>, tile<Fp16, 6, 2>, tile<Fp16, 6, 3>},
      {tile<Fp16, 7, 1>, tile<Fp16, 7, 2>, tile<Fp16, 7, 3>}, {tile<Fp16, 8, 1>, tile<Fp16, 8, 2>, tile<Fp16, 8, 3>}};
  return table[mr - 1][nv - 1];
}

template <class Fp16>
void f16_arith_gemm(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                    const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  TileArgs t{};
  t.K = K;
  t.lda = static_cast<size_t>(lda);
  t.panel_elems = static_cast<size_t>(K) * kPanelN;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  constexpr int kNR = kNV * kPanelN;
  // Column blocks outside, row tiles inside: a block's weights (48·K halves, 36 KiB at K = 384)
  // stay in L1/L2 while the row tiles stream through them.
  for (int n0 = 0; n0 < N; n0 += kNR) {
    t.cols = N - n0 < kNR ? N - n0 : kNR;
    const int nv = (t.cols + kPanelN - 1) / kPanelN;
    t.n0 = n0;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * t.panel_elems;
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A + static_cast<size_t>(m0) * t.lda;
      select_tile<Fp16>(mr, nv)(t);
      m0 += mr;
    }
  }
}

}  // namespace
}  // namespace encrt::kernels::x86
