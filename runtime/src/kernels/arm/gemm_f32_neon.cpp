// f32_gemm_6x16__neon and f16w_gemm_6x16__neon: C = epilogue(A · Wᵀ), W packed PanelN16 in fp32
// or IEEE half (widened by fcvtl, exact), fp32 FMAs.
//
// Register tile: 6 rows × 16 columns (one panel) = 24 q-register accumulators; per k: the
// panel's row of 16 weights in 4 registers, and for each row one A element multiplied in by FMLA
// (by element). 4 + 24 + 1 of the 32 vector registers. Loop order: panels outside, row tiles
// inside, all of K in registers: a panel's weights (16·K·4 bytes: 24 KiB at K = 384) stay in L1
// while the row tiles stream through them. Sums run k = 0..K-1 per output like the reference, with
// FMA (one rounding per step), so results agree within a few ulps × √K.
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"
#include "kernels/tiling.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 6;

ENCRT_ARM_INLINE void load_panel_row(const float* w, float32x4_t (&v)[4]) {
  for (int j = 0; j < 4; ++j) v[j] = vld1q_f32(w + 4 * j);
}
ENCRT_ARM_INLINE void load_panel_row(const uint16_t* w, float32x4_t (&v)[4]) {
  for (int j = 0; j < 4; ++j) v[j] = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(w + 4 * j)));
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

template <typename WT, int MR>
__attribute__((noinline)) void tile(const TileArgs<WT>& t) {
  float32x4_t acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_f32(0.0f);
  const float* a = t.a;
  const WT* w = t.w;
  for (int k = 0; k < t.K; ++k) {
    float32x4_t wv[4];
    load_panel_row(w, wv);
    for (int r = 0; r < MR; ++r) {
      const float ar = a[r * t.lda];
      for (int j = 0; j < 4; ++j) acc[r][j] = vfmaq_n_f32(acc[r][j], wv[j], ar);
    }
    a += 1;
    w += kPanelN;
  }
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
    for (int j = 0; j < 4 && 4 * j < t.cols; ++j)
      finish_store_neon(acc[r][j], *t.ep, m, t.n0 + 4 * j, t.cols - 4 * j, c_row);
  }
}

template <typename WT>
void gemm(int M, int N, int K, const float* A, int lda, const WT* W, float* C, int ldc, const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  using TileFn = void (*)(const TileArgs<WT>&);
  static const TileFn tiles[kMR] = {tile<WT, 1>, tile<WT, 2>, tile<WT, 3>, tile<WT, 4>, tile<WT, 5>, tile<WT, 6>};
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
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A + static_cast<size_t>(m0) * t.lda;
      tiles[mr - 1](t);
      m0 += mr;
    }
  }
}

}  // namespace

void f32_gemm_6x16__neon(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
                         const GemmEpilogue& ep) {
  gemm<float>(M, N, K, A, lda, W, C, ldc, ep);
}

void f16w_gemm_6x16__neon(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                          const GemmEpilogue& ep) {
  gemm<uint16_t>(M, N, K, A, lda, W, C, ldc, ep);
}

}  // namespace encrt::kernels::arm
