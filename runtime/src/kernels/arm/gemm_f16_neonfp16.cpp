// f16_gemm_6x16__neonfp16: C = epilogue(A · Wᵀ) with W packed PanelN16 in IEEE half, in fp16
// arithmetic (fmla on 8 half lanes, twice the fp32 lanes), with the exact semantics of
// kernel_types.h (kF16ArithBlockK) and ref::gemm_f16_arith, as the x86 avx512fp16 kernel.
//
// Even/odd depth lanes: a panel stores rows k and k+1 of its 16 columns next to each other;
// zip1/zip2 of the two rows' halves give W(c, k), W(c, k+1), W(c+1, k), ... for 4 columns per
// register, and a 32-bit dup of the activation pair (a[m, k], a[m, k+1]) lines up with it: half
// lane 2c accumulates column c's even-k products, lane 2c+1 its odd-k products. Depth runs in
// blocks of kF16ArithBlockK, each block's fp16 sums added into fp32 (fcvtl/fcvtl2), and the even
// and odd fp32 sums are added at the end (uzp1/uzp2). A tile whose result is not finite (an fp16
// overflow) is recomputed in fp32 by f16w_gemm_6x16__neon.
//
// Register tile: 6 rows × 16 columns = 24 accumulators of 8 halves, 4 weight registers and the
// activation pair.
#include <cmath>
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/asm_accumulators.h"
#include "kernels/arm/neon_common.h"
#include "kernels/tiling.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 6;
constexpr int kBlock = kF16ArithBlockK;
static_assert(kBlock % 4 == 0, "a block converts A four floats at a time");

struct TileArgs {
  int K;
  const float* a;  // row m0 of A
  size_t lda;
  const uint16_t* w;  // the panel
  size_t panel_elems;
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;  // valid columns of the panel, 1..16
  const GemmEpilogue* ep;
};

// Rows k and k+1 of the panel as 4 registers of interleaved (column, k), (column, k+1) pairs;
// `second` = false when row k+1 lies past K (it is then zero).
ENCRT_ARM_INLINE void load_pair(const uint16_t* w, bool second, float16x8_t (&v)[4]) {
  const uint16x8_t r0a = vld1q_u16(w), r0b = vld1q_u16(w + 8);
  const uint16x8_t r1a = second ? vld1q_u16(w + 16) : vdupq_n_u16(0);
  const uint16x8_t r1b = second ? vld1q_u16(w + 24) : vdupq_n_u16(0);
  v[0] = vreinterpretq_f16_u16(vzip1q_u16(r0a, r1a));
  v[1] = vreinterpretq_f16_u16(vzip2q_u16(r0a, r1a));
  v[2] = vreinterpretq_f16_u16(vzip1q_u16(r0b, r1b));
  v[3] = vreinterpretq_f16_u16(vzip2q_u16(r0b, r1b));
}

// acc row r (v(4r)..v(4r+3), columns 0-3, 4-7, 8-11, 12-15) += the zipped weight pairs
// (v28, v24, v29, v25) · the activation pair broadcast in `a`.
#define ENCRT_FMLA_ROW(c0, c1, c2, c3, a)                                                      \
  "fmla v" #c0 ".8h, v28.8h, v" #a ".8h\n"                                                    \
  "fmla v" #c1 ".8h, v24.8h, v" #a ".8h\n"                                                    \
  "fmla v" #c2 ".8h, v29.8h, v" #a ".8h\n"                                                    \
  "fmla v" #c3 ".8h, v25.8h, v" #a ".8h\n"

// `pairs` ≥ 1 whole depth pairs (k, k+1) of a 6-row tile in assembly, load_pair's zips and the
// C++ loop's fmla, in its order: acc[r][j] in v(4r + j), loaded from and stored back to `acc`;
// ah: the 6 rows' halves of the block (row stride kBlock) from the first pair on. Per pair: 2 ldp,
// 4 zips, 6 ld1r (the pair broadcast), 24 fmla, the loop's 3: 39 instructions for 192 MACs. g++
// (12) spilled (24 accumulators + 4 weight pairs + the broadcast pair + the raw weight rows):
// 2.1 MACs per instruction over a MiniLM run. volatile: the asm's outputs are unused.
void pairs_6rows(float16x8_t (&acc)[6][4], const uint16_t* ah, const uint16_t* w, size_t pairs) {
  const uint16_t *a0 = ah, *a1 = ah + kBlock, *a2 = ah + 2 * kBlock, *a3 = ah + 3 * kBlock, *a4 = ah + 4 * kBlock,
                 *a5 = ah + 5 * kBlock;
  asm volatile(
      ENCRT_ASM_LOAD_ACC_0_15 ENCRT_ASM_LOAD_ACC_16_23
      "1:\n"
      "ldp q24, q25, [%[w]]\n"
      "ldp q26, q27, [%[w], #32]\n"
      "add %[w], %[w], #64\n"
      "zip1 v28.8h, v24.8h, v26.8h\n"
      "zip2 v24.8h, v24.8h, v26.8h\n"
      "zip1 v29.8h, v25.8h, v27.8h\n"
      "zip2 v25.8h, v25.8h, v27.8h\n"
      "ld1r {v26.4s}, [%[a0]], #4\n"
      "ld1r {v27.4s}, [%[a1]], #4\n"
      "ld1r {v30.4s}, [%[a2]], #4\n"
      "ld1r {v31.4s}, [%[a3]], #4\n"
      ENCRT_FMLA_ROW(0, 1, 2, 3, 26)
      "ld1r {v26.4s}, [%[a4]], #4\n"
      ENCRT_FMLA_ROW(4, 5, 6, 7, 27)
      "ld1r {v27.4s}, [%[a5]], #4\n"
      ENCRT_FMLA_ROW(8, 9, 10, 11, 30)
      ENCRT_FMLA_ROW(12, 13, 14, 15, 31)
      ENCRT_FMLA_ROW(16, 17, 18, 19, 26)
      ENCRT_FMLA_ROW(20, 21, 22, 23, 27)
      "subs %[pairs], %[pairs], #1\n"
      "b.ne 1b\n"
      ENCRT_ASM_STORE_ACC_0_15 ENCRT_ASM_STORE_ACC_16_23
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4), [a5] "+r"(a5), [w] "+r"(w),
        [pairs] "+r"(pairs)
      : [acc] "r"(&acc[0][0])
      : ENCRT_ASM_CLOBBER_ALL_VECTORS);
}
#undef ENCRT_FMLA_ROW

template <int MR>
__attribute__((noinline)) void tile(const TileArgs& t) {
  float32x4_t sum[MR][4][2];  // [row][4 columns][columns c, c+1 | c+2, c+3], (even, odd) pairs
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) sum[r][j][0] = sum[r][j][1] = vdupq_n_f32(0.0f);
  alignas(16) uint16_t ah[MR][kBlock];  // the block's A values in half, zero past its depth
  for (int k0 = 0; k0 < t.K; k0 += kBlock) {
    const int depth = t.K - k0 < kBlock ? t.K - k0 : kBlock;
    for (int r = 0; r < MR; ++r) {
      const float* src = t.a + r * t.lda + k0;
      // Zero past the depth only in a block's tail (a full block overwrites every element).
      if (depth < kBlock) std::memset(ah[r], 0, sizeof ah[r]);
      int d = 0;
      for (; d + 8 <= depth; d += 8) {
        const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(src + d)), vld1q_f32(src + d + 4));
        vst1q_u16(ah[r] + d, vreinterpretq_u16_f16(h));
      }
      for (; d + 4 <= depth; d += 4) vst1_u16(ah[r] + d, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + d))));
      for (; d < depth; ++d) {
        float in[4] = {src[d], 0, 0, 0};
        uint16_t out[4];
        vst1_u16(out, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in))));
        ah[r][d] = out[0];
      }
    }
    float16x8_t acc[MR][4];
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < 4; ++j) acc[r][j] = vreinterpretq_f16_u16(vdupq_n_u16(0));
    const uint16_t* w = t.w + static_cast<size_t>(k0) * kPanelN;
    int p0 = 0;
    if constexpr (MR == 6) {
      if (depth >= 2) pairs_6rows(acc, &ah[0][0], w, static_cast<size_t>(depth / 2));
      p0 = depth / 2;
    }
    for (int p = p0; 2 * p < depth; ++p) {
      float16x8_t wv[4];
      load_pair(w + 32 * p, 2 * p + 1 < depth, wv);
      for (int r = 0; r < MR; ++r) {
        uint32_t pair;
        std::memcpy(&pair, ah[r] + 2 * p, sizeof pair);
        const float16x8_t ab = vreinterpretq_f16_u32(vdupq_n_u32(pair));
        for (int j = 0; j < 4; ++j) acc[r][j] = vfmaq_f16(acc[r][j], ab, wv[j]);
      }
    }
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < 4; ++j) {
        sum[r][j][0] = vaddq_f32(sum[r][j][0], vcvt_f32_f16(vget_low_f16(acc[r][j])));
        sum[r][j][1] = vaddq_f32(sum[r][j][1], vcvt_high_f32_f16(acc[r][j]));
      }
  }
  float32x4_t x[MR][4];
  bool finite = true;
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) {
      x[r][j] = vaddq_f32(vuzp1q_f32(sum[r][j][0], sum[r][j][1]), vuzp2q_f32(sum[r][j][0], sum[r][j][1]));
      // |x| < inf is false for ±inf and NaN.
      finite = finite && vminvq_u32(vcaltq_f32(x[r][j], vdupq_n_f32(INFINITY))) != 0;
    }
  if (!finite) {  // an fp16 overflow somewhere in the tile: redo it in fp32 arithmetic
    GemmEpilogue shifted = *t.ep;
    if (shifted.bias) shifted.bias += t.n0;
    if (shifted.residual) shifted.residual += static_cast<size_t>(t.m0) * shifted.ldr + t.n0;
    f16w_gemm_6x16__neon(MR, t.cols, t.K, t.a, static_cast<int>(t.lda), t.w,
                         t.C + static_cast<size_t>(t.m0) * t.ldc + t.n0, static_cast<int>(t.ldc), shifted);
    return;
  }
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
    for (int j = 0; j < 4 && 4 * j < t.cols; ++j) finish_store_neon(x[r][j], *t.ep, m, t.n0 + 4 * j, t.cols - 4 * j, c_row);
  }
}

}  // namespace

void f16_gemm_6x16__neonfp16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                             const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  using TileFn = void (*)(const TileArgs&);
  static const TileFn tiles[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};
  TileArgs t{};
  t.K = K;
  t.lda = static_cast<size_t>(lda);
  t.panel_elems = static_cast<size_t>(K) * kPanelN;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    t.n0 = n0;
    t.cols = N - n0 < kPanelN ? N - n0 : kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * t.panel_elems;
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A + static_cast<size_t>(m0) * t.lda;
      tiles[mr - 1](t);
      m0 += mr;
    }
  }
}

}  // namespace encrt::kernels::arm
