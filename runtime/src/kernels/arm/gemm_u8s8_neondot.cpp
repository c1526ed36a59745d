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
#include "kernels/arm/asm_accumulators.h"
#include "kernels/arm/gemm_u8s8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 4;

// Rows flipped once per block (u8s8_gemm_encoded_rows) when a GEMM has at least this many panels:
// the encoding costs about 3 instructions per row and 16 k, and saves one eor per row, 16 k and
// panel.
constexpr int kMinEncodedPanels = 4;

// 16 bytes of a row from k-group g on, as q - 128 (`flip`: 0x80 bytes, or zero for rows encoded
// already); past the row's last group the bytes are zero (their weights are never used).
ENCRT_ARM_INLINE int8x16_t load_row(const uint8_t* row, int g, int K4, uint8x16_t flip) {
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

#define ENCRT_SDOT(acc, w, a, lane) "sdot v" #acc ".4s, v" #w ".16b, v" #a ".4b[" #lane "]\n"
// Rows 0-3 (v0-v3, v4-v7, v8-v11, v12-v15) times k-group `lane` of the 16-byte row loads
// (v16-v19): the group's 64 panel bytes loaded into w0-w3 by two ldp at byte `off`.
#define ENCRT_GROUP(off, lane, w0, w1, w2, w3)                                                          \
  "ldp q" #w0 ", q" #w1 ", [%[w], #" #off "]\n"                                                      \
  "ldp q" #w2 ", q" #w3 ", [%[w], #" #off "+32]\n"                                                   \
  ENCRT_SDOT(0, w0, 16, lane) ENCRT_SDOT(1, w1, 16, lane) ENCRT_SDOT(2, w2, 16, lane)                  \
  ENCRT_SDOT(3, w3, 16, lane) ENCRT_SDOT(4, w0, 17, lane) ENCRT_SDOT(5, w1, 17, lane)                  \
  ENCRT_SDOT(6, w2, 17, lane) ENCRT_SDOT(7, w3, 17, lane) ENCRT_SDOT(8, w0, 18, lane)                  \
  ENCRT_SDOT(9, w1, 18, lane) ENCRT_SDOT(10, w2, 18, lane) ENCRT_SDOT(11, w3, 18, lane)                \
  ENCRT_SDOT(12, w0, 19, lane) ENCRT_SDOT(13, w1, 19, lane) ENCRT_SDOT(14, w2, 19, lane)               \
  ENCRT_SDOT(15, w3, 19, lane)

// The whole 4-group steps of a 4-row tile in assembly, acc[r][j] in v(4r + j), in the loop frame
// ENCRT_ASM_U8S8_4ROW_STEPS (asm_accumulators.h). g++ (12) copied accumulators between registers
// on every step (97 instructions per step of 1024 MACs); here 83: 4 row loads and 4 flips, 8 ldp,
// 64 sdot, the loop's 3; 79 on rows flipped already (kEncoded). `steps` >= 1.
#define ENCRT_ROW_LOADS                 \
  "ldr q16, [%[a0]], #16\n"             \
  "ldr q17, [%[a1]], #16\n"             \
  "ldr q18, [%[a2]], #16\n"             \
  "ldr q19, [%[a3]], #16\n"
#define ENCRT_PANEL_GROUPS              \
  ENCRT_GROUP(0, 0, 20, 21, 22, 23)     \
  ENCRT_GROUP(64, 1, 24, 25, 26, 27)    \
  ENCRT_GROUP(128, 2, 20, 21, 22, 23)   \
  ENCRT_GROUP(192, 3, 24, 25, 26, 27)
template <bool kEncoded>
ENCRT_ARM_INLINE void steps_4rows(int32x4_t (&acc)[4][4], const uint8_t* a0, const uint8_t* a1, const uint8_t* a2,
                                  const uint8_t* a3, const int8_t* w, size_t steps) {
  if constexpr (kEncoded) {
    ENCRT_ASM_U8S8_4ROW_STEPS("", ENCRT_ROW_LOADS ENCRT_PANEL_GROUPS);
  } else {
    ENCRT_ASM_U8S8_4ROW_STEPS("movi v28.16b, #0x80\n",
        ENCRT_ROW_LOADS
        "eor v16.16b, v16.16b, v28.16b\n"
        "eor v17.16b, v17.16b, v28.16b\n"
        "eor v18.16b, v18.16b, v28.16b\n"
        "eor v19.16b, v19.16b, v28.16b\n"
        ENCRT_PANEL_GROUPS);
  }
}
#undef ENCRT_PANEL_GROUPS
#undef ENCRT_ROW_LOADS
#undef ENCRT_GROUP
#undef ENCRT_SDOT

// The tile's k loop: whole steps of 4 k-groups (one 16-byte load per row) without a branch, then
// the 1-3 groups left. The sums go to the epilogue through a copy: a lambda holding a reference to
// the accumulators themselves makes g++ keep them in memory, stored on every step (38 stp in the
// loop of the version before, 48 sdot; now none).
template <int MR, bool kEncoded>
__attribute__((noinline)) void tile(const U8S8TileArgs& t) {
  int32x4_t acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) acc[r][j] = vdupq_n_s32(0);
  const uint8x16_t flip = vdupq_n_u8(kEncoded ? 0 : 0x80);
  const int full = t.K4 & ~3;
  const int g0 = u8s8_asm_whole_steps<MR>(t, full, [&](auto... args) { steps_4rows<kEncoded>(acc, args...); });
  for (int g = g0; g < full; g += 4) {
    int8x16_t a[MR];
    for (int r = 0; r < MR; ++r) a[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(t.a + r * t.lda + 4 * g), flip));
    sdot_lanes<MR, 4>(acc, a, t.w + static_cast<size_t>(g) * 64);
  }
  if (full < t.K4) {
    int8x16_t a[MR];
    for (int r = 0; r < MR; ++r) a[r] = load_row(t.a + r * t.lda, full, t.K4, flip);
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
  static const U8S8TileFn plain[kMR] = {tile<1, false>, tile<2, false>, tile<3, false>, tile<4, false>};
  static const U8S8TileFn encoded[kMR] = {tile<1, true>, tile<2, true>, tile<3, true>, tile<4, true>};
  u8s8_gemm_encoded_rows<kMR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, plain, encoded, vdupq_n_u8(0x80),
                              kMinEncodedPanels);
}

}  // namespace encrt::kernels::arm
