// f32_gemm_6x64__avx512 and f16w_gemm_6x64__avx512: C = epilogue(A · Wᵀ) with W packed
// PanelN16 in fp32, or in IEEE half widened by vcvtph2ps (exact) before fp32 FMAs.
//
// Register tile: 6 rows × 64 columns = 24 zmm accumulators, 4 zmm of weights (one per 16-column
// panel) and the broadcast A element folded into vfmadd231ps as an embedded {1to16} operand.
// Per k: 4 weight loads and 24 FMAs, so the loop is bound by FMA throughput, not loads.
//
// Loop order: 64-column blocks outside, row tiles inside, all of K in registers; a block's
// weights (64·K·4 bytes: 96 KiB at K = 384) stay in L2 while the row tiles stream through them,
// with software prefetch a few cache lines ahead in each panel. Sums run k = 0..K-1 per output,
// as in the reference, but with FMA (one rounding per step instead of two), so results agree
// within a few ulps × √K.
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 6;
constexpr int kNV = 4;
constexpr int kPrefetchBytes = 512;  // ahead of the current k in each panel

ENCRT_X86_INLINE __m512 load_w(const float* p) { return _mm512_loadu_ps(p); }
ENCRT_X86_INLINE __m512 load_w(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <typename WT>
struct TileArgs {
  int K;
  const float* a;        // row m0 of A
  size_t lda;
  const WT* w;           // first panel of the block
  size_t panel_elems;    // K * 16
  float* C;
  size_t ldc;
  int m0, n0;
  int last_cols;         // valid columns in the tile's last zmm, 1..16
  const GemmEpilogue* ep;
};

// The k loop of one tile, out of line so that GCC keeps the 24 accumulators in registers (it
// spills them when the epilogue is inlined into the same function).
template <typename WT, int MR, int NV>
__attribute__((noinline)) void accumulate(const TileArgs<WT>& t, __m512* acc_out) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_setzero_ps();

  const float* a = t.a;
  const size_t lda = t.lda;
  const WT* w = t.w;
  const size_t ps = t.panel_elems;
  constexpr int kPrefetchElems = kPrefetchBytes / static_cast<int>(sizeof(WT));
  for (int k = 0; k < t.K; ++k) {
    __m512 wv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      wv[j] = load_w(w + j * ps);
      _mm_prefetch(reinterpret_cast<const char*>(w + j * ps + kPrefetchElems), _MM_HINT_T0);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 ab = _mm512_set1_ps(a[r * lda]);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_fmadd_ps(ab, wv[j], acc[r][j]);
    }
    a += 1;
    w += kPanelN;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_store_ps(reinterpret_cast<float*>(acc_out + r * NV + j), acc[r][j]);
}

template <typename WT, int MR, int NV>
void tile(const TileArgs<WT>& t) {
  __m512 acc[MR * NV];
  accumulate<WT, MR, NV>(t, acc);
  const GemmEpilogue& ep = *t.ep;
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      const __mmask16 mask = j == NV - 1 ? lanes_avx512(t.last_cols) : static_cast<__mmask16>(0xffff);
      finish_store_avx512(acc[r * NV + j], ep, m, t.n0 + 16 * j, mask, c_row);
    }
  }
}

template <typename WT>
using TileFn = void (*)(const TileArgs<WT>&);

template <typename WT>
TileFn<WT> select_tile(int mr, int nv) {
  static_assert(kMR == 6 && kNV == 4, "the table below lists every (rows, vectors) pair");
  static const TileFn<WT> table[kMR][kNV] = {
      {tile<WT, 1, 1>, tile<WT, 1, 2>, tile<WT, 1, 3>, tile<WT, 1, 4>},
      {tile<WT, 2, 1>, tile<WT, 2, 2>, tile<WT, 2, 3>, tile<WT, 2, 4>},
      {tile<WT, 3, 1>, tile<WT, 3, 2>, tile<WT, 3, 3>, tile<WT, 3, 4>},
      {tile<WT, 4, 1>, tile<WT, 4, 2>, tile<WT, 4, 3>, tile<WT, 4, 4>},
      {tile<WT, 5, 1>, tile<WT, 5, 2>, tile<WT, 5, 3>, tile<WT, 5, 4>},
      {tile<WT, 6, 1>, tile<WT, 6, 2>, tile<WT, 6, 3>, tile<WT, 6, 4>}};
  return table[mr - 1][nv - 1];
}

template <typename WT>
void gemm(int M, int N, int K, const float* A, int lda, const WT* W, float* C, int ldc, const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  TileArgs<WT> t{};
  t.K = K;
  t.lda = static_cast<size_t>(lda);
  t.panel_elems = static_cast<size_t>(K) * kPanelN;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  constexpr int kNR = kNV * kPanelN;
  for (int n0 = 0; n0 < N; n0 += kNR) {
    const int cols = N - n0 < kNR ? N - n0 : kNR;
    const int nv = (cols + kPanelN - 1) / kPanelN;
    t.n0 = n0;
    t.last_cols = cols - (nv - 1) * kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * t.panel_elems;
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A + static_cast<size_t>(m0) * t.lda;
      select_tile<WT>(mr, nv)(t);
      m0 += mr;
    }
  }
}

}  // namespace

void f32_gemm_6x64__avx512(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
                           const GemmEpilogue& ep) {
  gemm<float>(M, N, K, A, lda, W, C, ldc, ep);
}

void f16w_gemm_6x64__avx512(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C,
                            int ldc, const GemmEpilogue& ep) {
  gemm<uint16_t>(M, N, K, A, lda, W, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
