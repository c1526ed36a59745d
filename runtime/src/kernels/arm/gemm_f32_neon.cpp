// f32_gemm_6x16__neon and f16w_gemm_6x16__neon: C = epilogue(A · Wᵀ), W packed PanelN16 in fp32
// or IEEE half (widened by fcvtl, exact), fp32 FMAs.
//
// Register tile: 6 rows × 16 columns (one panel) = 24 q-register accumulators; per k: the
// panel's row of 16 weights in 4 registers, and for each row one A element multiplied in by FMLA
// (by element). 4 + 24 + 1 of the 32 vector registers. Loop order: panels outside, row tiles
// inside, all of K in registers: a panel's weights (16·K·4 bytes: 24 KiB at K = 384) stay in L1
// while the row tiles stream through them. Sums run k = 0..K-1 per output like the reference, with
// FMA (one rounding per step), so results agree within a few ulps × √K.
#include <type_traits>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/asm_accumulators.h"
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

// acc row `r` (v(4r)..v(4r+3)) += the panel row (v24-v27) · lane 0 of `a`.
#define ENCRT_FMLA_ROW(c0, c1, c2, c3, a)                                                      \
  "fmla v" #c0 ".4s, v24.4s, v" #a ".s[0]\n"                                                  \
  "fmla v" #c1 ".4s, v25.4s, v" #a ".s[0]\n"                                                  \
  "fmla v" #c2 ".4s, v26.4s, v" #a ".s[0]\n"                                                  \
  "fmla v" #c3 ".4s, v27.4s, v" #a ".s[0]\n"

// All of K for a 6-row or 4-row tile in assembly: acc[r][j] in v(4r + j), zeroed here and stored
// to `acc` at the end. Per k: the panel row into v24-v27 (`load`: one ld1 of fp32, or one ld1 of
// halves and 4 fcvtl), a scalar load per row, 4 fmla by element per row, subs + b.ne: 33
// instructions for 96 MACs with 6 rows of fp32 weights. g++ (12) kept two accumulators in memory
// and stored the others to the epilogue's copy on every k (24 accumulators + 4 weights + 6
// activations are 34 registers): 1.54 MACs per instruction over a MiniLM run, here 2.9.
// volatile: the asm's outputs (the advanced pointers) are unused. K >= 1; the k order of the C++
// loop.
#define ENCRT_LOAD_ROWS_0_3                                                             \
  "ldr s28, [%[a0]], #4\n"                                                              \
  "ldr s29, [%[a1]], #4\n"                                                              \
  "ldr s30, [%[a2]], #4\n"                                                              \
  "ldr s31, [%[a3]], #4\n"
#define ENCRT_BODY_6ROWS                                                                \
  ENCRT_LOAD_ROWS_0_3                                                                   \
  ENCRT_FMLA_ROW(0, 1, 2, 3, 28)                                                        \
  "ldr s28, [%[a4]], #4\n"                                                              \
  ENCRT_FMLA_ROW(4, 5, 6, 7, 29)                                                        \
  "ldr s29, [%[a5]], #4\n"                                                              \
  ENCRT_FMLA_ROW(8, 9, 10, 11, 30)                                                      \
  ENCRT_FMLA_ROW(12, 13, 14, 15, 31)                                                    \
  ENCRT_FMLA_ROW(16, 17, 18, 19, 28)                                                    \
  ENCRT_FMLA_ROW(20, 21, 22, 23, 29)
#define ENCRT_BODY_4ROWS                                                                \
  ENCRT_LOAD_ROWS_0_3                                                                   \
  ENCRT_FMLA_ROW(0, 1, 2, 3, 28)                                                        \
  ENCRT_FMLA_ROW(4, 5, 6, 7, 29)                                                        \
  ENCRT_FMLA_ROW(8, 9, 10, 11, 30)                                                      \
  ENCRT_FMLA_ROW(12, 13, 14, 15, 31)
#define ENCRT_STEPS(zero, load, body, store)                                                                    \
  asm volatile(zero "1:\n" load body "subs %[k], %[k], #1\n b.ne 1b\n" store                                    \
               : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4), [a5] "+r"(a5),      \
                 [w] "+r"(w), [k] "+r"(K)                                                                       \
               : [acc] "r"(&acc[0][0])                                                                          \
               : ENCRT_ASM_CLOBBER_ALL_VECTORS)
#define ENCRT_STEPS_ROWS(load)                                                                 \
  if constexpr (MR == 6)                                                                       \
    ENCRT_STEPS(ENCRT_ASM_ZERO_ACC_0_15 ENCRT_ASM_ZERO_ACC_16_23, load, ENCRT_BODY_6ROWS,      \
                ENCRT_ASM_STORE_ACC_0_15 ENCRT_ASM_STORE_ACC_16_23);                           \
  else                                                                                         \
    ENCRT_STEPS(ENCRT_ASM_ZERO_ACC_0_15, load, ENCRT_BODY_4ROWS, ENCRT_ASM_STORE_ACC_0_15)

template <typename WT, int MR>
void asm_steps(float32x4_t (&acc)[MR][4], const float* a, size_t lda, const WT* w, size_t K) {
  static_assert(MR == 6 || MR == 4, "6-row and 4-row tiles");
  // Rows past MR are never read (their operands stay unused in the 4-row loop).
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda, *a4 = a, *a5 = a;
  if constexpr (MR == 6) a4 = a + 4 * lda, a5 = a + 5 * lda;
  if constexpr (std::is_same_v<WT, float>) {
    ENCRT_STEPS_ROWS("ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [%[w]], #64\n");
  } else {
    // Halves: columns 0-7 in v24, 8-15 in v25, widened exactly (v25's halves first).
    ENCRT_STEPS_ROWS("ld1 {v24.8h, v25.8h}, [%[w]], #32\n"
                     "fcvtl2 v27.4s, v25.8h\n"
                     "fcvtl v26.4s, v25.4h\n"
                     "fcvtl2 v25.4s, v24.8h\n"
                     "fcvtl v24.4s, v24.4h\n");
  }
}
#undef ENCRT_STEPS_ROWS
#undef ENCRT_STEPS
#undef ENCRT_BODY_4ROWS
#undef ENCRT_BODY_6ROWS
#undef ENCRT_LOAD_ROWS_0_3
#undef ENCRT_FMLA_ROW

template <typename WT, int MR>
__attribute__((noinline)) void tile(const TileArgs<WT>& t) {
  float32x4_t acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_f32(0.0f);
  const float* a = t.a;
  const WT* w = t.w;
  int k0 = 0;
  if constexpr (MR == 6 || MR == 4) {
    if (t.K > 0) asm_steps<WT, MR>(acc, a, t.lda, w, static_cast<size_t>(t.K));
    k0 = t.K;
  }
  for (int k = k0; k < t.K; ++k) {
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
