// f32_gemm_6x16__avx2 and f16w_gemm_6x16__avx2: C = epilogue(A · Wᵀ) with W packed PanelN16 in
// fp32, or in IEEE half widened by vcvtph2ps (F16C, exact) before fp32 FMAs.
//
// Register tile: 6 rows × 16 columns (one weight panel) = 12 ymm accumulators, 2 ymm of weights
// and one broadcast of A: 15 of the 16 ymm registers. Per k: 2 weight loads, 6 broadcasts and 12
// FMAs. Panels outside, row tiles inside, all of K in registers: one panel (16·K·4 bytes, 24 KiB
// at K = 384) stays in L1 while the row tiles stream through it.
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 6;
constexpr int kPrefetchBytes = 512;  // ahead of the current k in the panel

ENCRT_X86_INLINE __m256 load_w(const float* p) { return _mm256_loadu_ps(p); }
ENCRT_X86_INLINE __m256 load_w(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

template <typename WT>
struct TileArgs {
  int K;
  const float* a;  // row m0 of A
  size_t lda;
  const WT* w;     // the panel
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;        // valid columns of the panel, 1..16
  const GemmEpilogue* ep;
};

// The k loop of one tile, out of line so that GCC keeps the accumulators in registers.
// NV = ymm per row: 2 for a full panel, 1 when at most 8 columns are left.
template <typename WT, int MR, int NV>
__attribute__((noinline)) void accumulate(const TileArgs<WT>& t, __m256* acc_out) {
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm256_setzero_ps();
  const float* a = t.a;
  const size_t lda = t.lda;
  const WT* w = t.w;
  constexpr int kPrefetchElems = kPrefetchBytes / static_cast<int>(sizeof(WT));
  for (int k = 0; k < t.K; ++k) {
    __m256 wv[NV];
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) wv[j] = load_w(w + 8 * j);
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchElems), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 ab = _mm256_broadcast_ss(a + r * lda);
#pragma GCC unroll 2
      for (int j = 0; j < NV; ++j) acc[r][j] = _mm256_fmadd_ps(ab, wv[j], acc[r][j]);
    }
    a += 1;
    w += kPanelN;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) _mm256_store_ps(reinterpret_cast<float*>(acc_out + r * NV + j), acc[r][j]);
}

template <typename WT, int MR, int NV>
void tile(const TileArgs<WT>& t) {
  __m256 acc[MR * NV];
  accumulate<WT, MR, NV>(t, acc);
  const GemmEpilogue& ep = *t.ep;
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
#pragma GCC unroll 2
    for (int j = 0; j < NV; ++j) {
      const int valid = t.cols - 8 * j;
      finish_store_avx2(acc[r * NV + j], ep, m, t.n0 + 8 * j, valid >= 8, lanes_avx2(valid), c_row);
    }
  }
}

template <typename WT>
using TileFn = void (*)(const TileArgs<WT>&);

template <typename WT>
TileFn<WT> select_tile(int mr, int nv) {
  static_assert(kMR == 6, "the table below lists every (rows, vectors) pair");
  static const TileFn<WT> table[kMR][2] = {{tile<WT, 1, 1>, tile<WT, 1, 2>}, {tile<WT, 2, 1>, tile<WT, 2, 2>},
                                           {tile<WT, 3, 1>, tile<WT, 3, 2>}, {tile<WT, 4, 1>, tile<WT, 4, 2>},
                                           {tile<WT, 5, 1>, tile<WT, 5, 2>}, {tile<WT, 6, 1>, tile<WT, 6, 2>}};
  return table[mr - 1][nv - 1];
}

template <typename WT>
void gemm(int M, int N, int K, const float* A, int lda, const WT* W, float* C, int ldc, const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  TileArgs<WT> t{};
  t.K = K;
  t.lda = static_cast<size_t>(lda);
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  const size_t panel_elems = static_cast<size_t>(K) * kPanelN;
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    t.n0 = n0;
    t.cols = N - n0 < kPanelN ? N - n0 : kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * panel_elems;
    const int nv = t.cols > 8 ? 2 : 1;
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

void f32_gemm_6x16__avx2(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
                         const GemmEpilogue& ep) {
  gemm<float>(M, N, K, A, lda, W, C, ldc, ep);
}

void f16w_gemm_6x16__avx2(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                          const GemmEpilogue& ep) {
  gemm<uint16_t>(M, N, K, A, lda, W, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
