// qu8s8_gemm_4x16__neoni8mm: uint8 activations × int8 weights (PanelN16K4) with usmmla, exact.
//
// usmmla multiplies a 2 × 8 block of unsigned bytes by the transpose of a 2 × 8 block of signed
// bytes into a 2 × 2 block of int32 sums: u8 × s8 directly, no offset trick. Operands for 8 depth
// values (two k-groups g, g+1):
//   activations: rows r and r+1, 8 bytes each, side by side in one register;
//   weights: the panel stores, per k-group, 16 columns × 4 bytes; zip1/zip2 of the 32-bit lanes of
//   groups g and g+1 give (column c: k 0..7 | column c+1: k 0..7), the layout usmmla wants.
// Register tile: 4 rows (2 pairs) × 16 columns (8 pairs) = 16 accumulators of 2 × 2 sums, 8 zipped
// weight registers and 2 activation registers. The 2 × 2 blocks are unzipped by 64-bit lanes in
// the epilogue, which then follows the reference's order: float(acc - zp[m]·w_sum[n]) · scale[m] ·
// w_scale[n], + bias, activation, + residual.
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"
#include "kernels/tiling.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 4;

struct TileArgs {
  int K4;  // k-groups of 4
  const uint8_t* a;  // row m0 of the quantized activations
  size_t lda;
  const int8_t* w;  // the panel
  const float* a_scale;
  const int32_t* a_zp;
  const int32_t* w_sum;
  const float* w_scale;
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;  // valid columns of the panel, 1..16
  const GemmEpilogue* ep;
};

// 8 bytes of a row from k-group g on; past the row's last group the bytes are zero (their
// weights are zero too).
ENCRT_ARM_INLINE uint8x8_t load8(const uint8_t* row, int g, int K4) {
  if (K4 - g >= 2) return vld1_u8(row + 4 * g);
  uint8_t tail[8] = {};
  std::memcpy(tail, row + 4 * g, 4);
  return vld1_u8(tail);
}

template <int MR>
__attribute__((noinline)) void tile(const TileArgs& t) {
  constexpr int kPairs = (MR + 1) / 2;
  int32x4_t acc[kPairs][8];
  for (int p = 0; p < kPairs; ++p)
    for (int c = 0; c < 8; ++c) acc[p][c] = vdupq_n_s32(0);
  for (int g = 0; g < t.K4; g += 2) {
    const bool second = g + 1 < t.K4;
    int8x16_t wz[8];
    for (int q = 0; q < 4; ++q) {
      const int32x4_t w0 = vreinterpretq_s32_s8(vld1q_s8(t.w + static_cast<size_t>(g) * 64 + 16 * q));
      const int32x4_t w1 =
          second ? vreinterpretq_s32_s8(vld1q_s8(t.w + static_cast<size_t>(g + 1) * 64 + 16 * q)) : vdupq_n_s32(0);
      wz[2 * q] = vreinterpretq_s8_s32(vzip1q_s32(w0, w1));      // columns 4q, 4q+1
      wz[2 * q + 1] = vreinterpretq_s8_s32(vzip2q_s32(w0, w1));  // columns 4q+2, 4q+3
    }
    for (int p = 0; p < kPairs; ++p) {
      const uint8x8_t r0 = load8(t.a + (2 * p) * t.lda, g, t.K4);
      // An odd last row pairs with zeros; its sums are never stored.
      const uint8x8_t r1 = 2 * p + 1 < MR ? load8(t.a + (2 * p + 1) * t.lda, g, t.K4) : vdup_n_u8(0);
      const uint8x16_t a = vcombine_u8(r0, r1);
      for (int c = 0; c < 8; ++c) acc[p][c] = vusmmlaq_s32(acc[p][c], a, wz[c]);
    }
  }
  for (int j = 0; j < 4 && 4 * j < t.cols; ++j) {  // columns 4j..4j+3: column pairs 2j, 2j+1
    const int n = t.n0 + 4 * j;
    const int valid = t.cols - 4 * j;
    int32_t ws[4] = {0, 0, 0, 0};
    float wsc[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4 && i < valid; ++i) ws[i] = t.w_sum[n + i], wsc[i] = t.w_scale[n + i];
    const int32x4_t w_sum = vld1q_s32(ws);
    const float32x4_t w_scale = vld1q_f32(wsc);
    for (int r = 0; r < MR; ++r) {
      const int64x2_t lo = vreinterpretq_s64_s32(acc[r / 2][2 * j]), hi = vreinterpretq_s64_s32(acc[r / 2][2 * j + 1]);
      const int32x4_t sums = vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(lo, hi) : vzip2q_s64(lo, hi));
      const int m = t.m0 + r;
      const int32x4_t exact = vmlsq_n_s32(sums, w_sum, t.a_zp[m]);
      const float32x4_t v = vmulq_f32(vmulq_n_f32(vcvtq_f32_s32(exact), t.a_scale[m]), w_scale);
      finish_store_neon(v, *t.ep, m, n, valid, t.C + static_cast<size_t>(m) * t.ldc);
    }
  }
}

}  // namespace

void qu8s8_gemm_4x16__neoni8mm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  using TileFn = void (*)(const TileArgs&);
  static const TileFn tiles[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>};
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
      tiles[mr - 1](t);
      m0 += mr;
    }
  }
}

}  // namespace encrt::kernels::arm
