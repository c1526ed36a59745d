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
#include "kernels/arm/gemm_u8s8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 4;

// 8 bytes of a row from k-group g on; past the row's last group the bytes are zero (their
// weights are zero too).
ENCRT_ARM_INLINE uint8x8_t load8(const uint8_t* row, int g, int K4) {
  if (K4 - g >= 2) return vld1_u8(row + 4 * g);
  uint8_t tail[8] = {};
  std::memcpy(tail, row + 4 * g, 4);
  return vld1_u8(tail);
}

template <int MR>
__attribute__((noinline)) void tile(const U8S8TileArgs& t) {
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
  // Columns 4j..4j+3 of row r: the 2 × 2 blocks of column pairs 2j, 2j+1 of its row pair,
  // unzipped by 64-bit lanes (the pair's first row is the low half of each block).
  u8s8_epilogue<MR>(t, 0, [&](int r, int j) {
    const int64x2_t lo = vreinterpretq_s64_s32(acc[r / 2][2 * j]), hi = vreinterpretq_s64_s32(acc[r / 2][2 * j + 1]);
    return vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(lo, hi) : vzip2q_s64(lo, hi));
  });
}

}  // namespace

void qu8s8_gemm_4x16__neoni8mm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  static const U8S8TileFn tiles[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>};
  u8s8_gemm_panels<kMR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, tiles);
}

}  // namespace encrt::kernels::arm
