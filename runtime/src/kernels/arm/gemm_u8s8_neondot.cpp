// qu8s8_gemm_4x16__neondot: uint8 activations × int8 weights (PanelN16K4) with sdot, exact.
//
// sdot multiplies signed bytes by signed bytes, so each activation byte is flipped to q - 128 (an
// eor with 0x80) and the sum corrected through the weights' column sums:
//   Σ_k q·w - zp·w_sum = Σ_k (q - 128)·w + (128 - zp)·w_sum      (exact in int32).
// Register tile: 4 rows × 16 columns = 16 q-register accumulators. One 16-byte load of a row
// holds 4 k-groups; for each k-group the panel's 64 bytes (4 registers of 4 columns × 4 depth
// bytes) meet the row's group through sdot by element (lane = the group). 16 + 4 + 4 registers.
// The epilogue follows the reference's float order: float(exact) · scale[m] · w_scale[n], + bias,
// activation, + residual.
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/gemm_u8s8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 4;

// 16 bytes of a row from k-group g on, as q - 128; past the row's last group the bytes are zero
// (their weights are never used).
ENCRT_ARM_INLINE int8x16_t load_row(const uint8_t* row, int g, int K4) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  if (K4 - g >= 4) return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(row + 4 * g), flip));
  uint8_t tail[16] = {};
  std::memcpy(tail, row + 4 * g, static_cast<size_t>(4 * (K4 - g)));
  return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(tail), flip));
}

// acc[r][j] += sdot of the columns 4j..4j+3 (16 bytes of the panel) with row r's k-group `lane`
// (its 4 bytes in a[r]), for the lanes 0..L-1 of one 16-byte row load: w holds L × 64 panel bytes.
template <int MR, int L>
ENCRT_ARM_INLINE void sdot_lanes(int32x4_t (&acc)[MR][4], const int8x16_t (&a)[MR], const int8_t* w) {
  if constexpr (L > 0) {
    sdot_lanes<MR, L - 1>(acc, a, w);
    int8x16_t wv[4];
    for (int j = 0; j < 4; ++j) wv[j] = vld1q_s8(w + 64 * (L - 1) + 16 * j);
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < 4; ++j) acc[r][j] = vdotq_laneq_s32(acc[r][j], wv[j], a[r], L - 1);
  }
}

// The tile's k loop: whole steps of 4 k-groups (one 16-byte load per row) without a branch, then
// the 1-3 groups left. The sums go to the epilogue through a copy: a lambda holding a reference to
// the accumulators themselves makes g++ keep them in memory, stored on every step (38 stp in the
// loop of the version before, 48 sdot; now none).
template <int MR>
__attribute__((noinline)) void tile(const U8S8TileArgs& t) {
  int32x4_t acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_s32(0);
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const int full = t.K4 & ~3;
  for (int g = 0; g < full; g += 4) {
    int8x16_t a[MR];
    for (int r = 0; r < MR; ++r) a[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(t.a + r * t.lda + 4 * g), flip));
    sdot_lanes<MR, 4>(acc, a, t.w + static_cast<size_t>(g) * 64);
  }
  if (full < t.K4) {
    int8x16_t a[MR];
    for (int r = 0; r < MR; ++r) a[r] = load_row(t.a + r * t.lda, full, t.K4);
    const int8_t* w = t.w + static_cast<size_t>(full) * 64;
    switch (t.K4 - full) {
      case 1: sdot_lanes<MR, 1>(acc, a, w); break;
      case 2: sdot_lanes<MR, 2>(acc, a, w); break;
      default: sdot_lanes<MR, 3>(acc, a, w); break;
    }
  }
  int32x4_t sums[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) sums[r][j] = acc[r][j];
  u8s8_epilogue<MR>(t, 128, [&](int r, int j) { return sums[r][j]; });
}

}  // namespace

void qu8s8_gemm_4x16__neondot(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                              const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  static const U8S8TileFn tiles[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>};
  u8s8_gemm_panels<kMR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, tiles);
}

}  // namespace encrt::kernels::arm
