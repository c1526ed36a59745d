// qu8s8_gemm_4x16__neoni8mm: uint8 activations × int8 weights (PanelN16K4) with usmmla, exact.
//
// usmmla multiplies a 2 × 8 block of unsigned bytes by the transpose of a 2 × 8 block of signed
// bytes into a 2 × 2 block of int32 sums: u8 × s8 directly, no offset trick. Operands for 8 depth
// values (two k-groups g, g+1):
//   activations: rows r and r+1, 8 bytes each, side by side in one register;
//   weights: the panel stores, per k-group, 16 columns × 4 bytes; zip1/zip2 of the 32-bit lanes of
//   groups g and g+1 give (column c: k 0..7 | column c+1: k 0..7), the layout usmmla wants.
// Register tile: 4 rows (2 pairs) × 16 columns (8 pairs) = 16 accumulators of 2 × 2 sums; the
// whole 16-k steps of 4-row tiles run in assembly (steps_4rows: the 4 row-pair operands of a step
// and 4 column quads' zipped weights at a time), the rest in intrinsics. Where a call has at least
// kMinZipTiles 4-row tiles and its workspace (qu8s8_i8mm_workspace(K) bytes, arm_kernels.h), each
// panel's whole steps are zipped once into it (ZipPanelHook) and every 4-row tile reads them
// as they are (steps_4rows_zipped: 51 instructions a step instead of 67). The 2 × 2 blocks are
// unzipped by 64-bit lanes in the epilogue, which then follows the reference's order:
// float(acc - zp[m]·w_sum[n]) · scale[m] · w_scale[n], + bias, activation, + residual.
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/asm_accumulators.h"
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

// The weights of k-groups g, g+1 (w points at group g) zipped by 32-bit lanes into column pairs:
// wz[2q] = (column 4q: k 0..7 | column 4q+1: k 0..7), wz[2q+1] the same for columns 4q+2, 4q+3.
// w1 holds group g+1, or zeros past the last group.
ENCRT_ARM_INLINE void zip_weights(int8x16_t (&wz)[8], const int8_t* w, bool second) {
  for (int q = 0; q < 4; ++q) {
    const int32x4_t w0 = vreinterpretq_s32_s8(vld1q_s8(w + 16 * q));
    const int32x4_t w1 = second ? vreinterpretq_s32_s8(vld1q_s8(w + 64 + 16 * q)) : vdupq_n_s32(0);
    wz[2 * q] = vreinterpretq_s8_s32(vzip1q_s32(w0, w1));
    wz[2 * q + 1] = vreinterpretq_s8_s32(vzip2q_s32(w0, w1));
  }
}

#define ENCRT_MM(acc, a, b) "usmmla v" #acc ".4s, v" #a ".16b, v" #b ".16b\n"
// A step's row-pair operands: 16 bytes of each of the 4 rows (post-indexed), their 64-bit halves
// zipped into v28 (rows 0-1, groups g, g+1), v29 (rows 0-1, g+2, g+3), v30, v31 (rows 2-3).
#define ENCRT_ROW_PAIRS                                                                             \
  "ldr q20, [%[a0]], #16\n ldr q21, [%[a1]], #16\n ldr q22, [%[a2]], #16\n ldr q23, [%[a3]], #16\n"     \
  "zip1 v28.2d, v20.2d, v21.2d\n zip2 v29.2d, v20.2d, v21.2d\n"                                      \
  "zip1 v30.2d, v22.2d, v23.2d\n zip2 v31.2d, v22.2d, v23.2d\n"
// Columns 4q..4q+7 (two column quads) of one 16-k step: the panel bytes of the quads q, q+1 of
// groups g..g+3 (ldp at `off`, 64 + off, ...), zipped into v16-v25 as in zip_weights, times the
// row-pair operands v28 (rows 0-1, groups g, g+1), v29 (rows 0-1, g+2, g+3), v30, v31 (rows 2-3).
#define ENCRT_QUADS(off, c0, c1, c2, c3, d0, d1, d2, d3)                                             \
  "ldp q20, q21, [%[w], #" #off "]\n"                                                               \
  "ldp q22, q23, [%[w], #64+" #off "]\n"                                                            \
  "ldp q24, q25, [%[w], #128+" #off "]\n"                                                           \
  "ldp q26, q27, [%[w], #192+" #off "]\n"                                                           \
  "zip1 v16.4s, v20.4s, v22.4s\n"                                                                  \
  "zip2 v20.4s, v20.4s, v22.4s\n"                                                                  \
  "zip1 v17.4s, v24.4s, v26.4s\n"                                                                  \
  "zip2 v24.4s, v24.4s, v26.4s\n"                                                                  \
  ENCRT_MM(c0, 28, 16) ENCRT_MM(d0, 30, 16) ENCRT_MM(c1, 28, 20) ENCRT_MM(d1, 30, 20)               \
  "zip1 v18.4s, v21.4s, v23.4s\n"                                                                  \
  "zip2 v21.4s, v21.4s, v23.4s\n"                                                                  \
  ENCRT_MM(c0, 29, 17) ENCRT_MM(d0, 31, 17) ENCRT_MM(c1, 29, 24) ENCRT_MM(d1, 31, 24)               \
  "zip1 v19.4s, v25.4s, v27.4s\n"                                                                  \
  "zip2 v25.4s, v25.4s, v27.4s\n"                                                                  \
  ENCRT_MM(c2, 28, 18) ENCRT_MM(d2, 30, 18) ENCRT_MM(c3, 28, 21) ENCRT_MM(d3, 30, 21)               \
  ENCRT_MM(c2, 29, 19) ENCRT_MM(d2, 31, 19) ENCRT_MM(c3, 29, 25) ENCRT_MM(d3, 31, 25)

// The whole 16-k steps of a 4-row tile in assembly, the accumulators acc[p][c] in v(8p + c),
// loaded from and stored back to `acc`: g++ (12) could not keep the 16 accumulators, the 4 row-pair
// operands and the zipped weights in the 32 registers and spilled and copied accumulators on every
// step (84 instructions per step; here 67: 4 row loads and 4 zips, 8 ldp, 16 weight zips, 32
// usmmla, the loop's 3). The loop's frame: ENCRT_ASM_U8S8_4ROW_STEPS (asm_accumulators.h).
ENCRT_ARM_INLINE void steps_4rows(int32x4_t (&acc)[2][8], const uint8_t* a0, const uint8_t* a1, const uint8_t* a2,
                                  const uint8_t* a3, const int8_t* w, size_t steps) {
  ENCRT_ASM_U8S8_4ROW_STEPS("",
      ENCRT_ROW_PAIRS
      ENCRT_QUADS(0, 0, 1, 2, 3, 8, 9, 10, 11)
      ENCRT_QUADS(32, 4, 5, 6, 7, 12, 13, 14, 15));
}
#undef ENCRT_QUADS

// One column quad q of a step from the panel's zipped steps (ZipPanelHook's layout: at 64q, the
// quad's zip1 and zip2 of groups g, g+1, then of g+2, g+3) into v(r0)..v(r3), times the row-pair
// operands v28-v31 as in ENCRT_QUADS; accumulators c0, c1 (rows 0-1), d0, d1 (rows 2-3).
#define ENCRT_ZIPPED_QUAD(off, r0, r1, r2, r3, c0, c1, d0, d1)                                     \
  "ldp q" #r0 ", q" #r1 ", [%[w], #" #off "]\n"                                                    \
  "ldp q" #r2 ", q" #r3 ", [%[w], #32+" #off "]\n"                                                 \
  ENCRT_MM(c0, 28, r0) ENCRT_MM(d0, 30, r0) ENCRT_MM(c1, 28, r1) ENCRT_MM(d1, 30, r1)               \
  ENCRT_MM(c0, 29, r2) ENCRT_MM(d0, 31, r2) ENCRT_MM(c1, 29, r3) ENCRT_MM(d1, 31, r3)

// steps_4rows on zipped panel steps (w: ZipPanelHook's layout): 4 row loads and 4 zips, 8 ldp,
// 32 usmmla and the loop's 3, 51 instructions a step. The quads alternate between v16-v19 and
// v24-v27 so that a quad's loads need not wait for the previous quad's products.
ENCRT_ARM_INLINE void steps_4rows_zipped(int32x4_t (&acc)[2][8], const uint8_t* a0, const uint8_t* a1,
                                         const uint8_t* a2, const uint8_t* a3, const int8_t* w, size_t steps) {
  ENCRT_ASM_U8S8_4ROW_STEPS("",
      ENCRT_ROW_PAIRS
      ENCRT_ZIPPED_QUAD(0, 16, 17, 18, 19, 0, 1, 8, 9)
      ENCRT_ZIPPED_QUAD(64, 24, 25, 26, 27, 2, 3, 10, 11)
      ENCRT_ZIPPED_QUAD(128, 16, 17, 18, 19, 4, 5, 12, 13)
      ENCRT_ZIPPED_QUAD(192, 24, 25, 26, 27, 6, 7, 14, 15));
}
#undef ENCRT_ZIPPED_QUAD
#undef ENCRT_ROW_PAIRS
#undef ENCRT_MM

// Zipping a panel costs about three instructions per weight register (load, zip, store), 48 a
// step, which the 16 zips saved per 4-row tile and step repay from about three tiles on: below
// kMinZipTiles whole 4-row tiles the tiles zip as they go.
constexpr int kMinZipTiles = 4;

// The panel hook: the panel's whole 16-k steps (K4 rounded down to a multiple of 4 groups) zipped
// into the workspace, per step and column quad q, at 64q: zip1, zip2 of the quad's groups g, g+1
// (its columns 4q, 4q+1 | 4q+2, 4q+3, k 0..7), then the same of g+2, g+3; t.panel_steps points at
// it. Nothing without a workspace or with fewer than kMinZipTiles whole 4-row tiles.
struct ZipPanelHook {
  int8_t* workspace;
  bool worth_it;
  void operator()(U8S8TileArgs& t) const {
    t.panel_steps = nullptr;
    if (!workspace || !worth_it) return;
    const int steps = (t.K4 & ~3) / 4;
    const int8_t* src = t.w;
    int8_t* dst = workspace;
    for (int s = 0; s < steps; ++s, src += 256, dst += 256)
      for (int q = 0; q < 4; ++q) {
        const int32x4_t g0 = vreinterpretq_s32_s8(vld1q_s8(src + 16 * q));
        const int32x4_t g1 = vreinterpretq_s32_s8(vld1q_s8(src + 64 + 16 * q));
        const int32x4_t g2 = vreinterpretq_s32_s8(vld1q_s8(src + 128 + 16 * q));
        const int32x4_t g3 = vreinterpretq_s32_s8(vld1q_s8(src + 192 + 16 * q));
        vst1q_s8(dst + 64 * q, vreinterpretq_s8_s32(vzip1q_s32(g0, g1)));
        vst1q_s8(dst + 64 * q + 16, vreinterpretq_s8_s32(vzip2q_s32(g0, g1)));
        vst1q_s8(dst + 64 * q + 32, vreinterpretq_s8_s32(vzip1q_s32(g2, g3)));
        vst1q_s8(dst + 64 * q + 48, vreinterpretq_s8_s32(vzip2q_s32(g2, g3)));
      }
    t.panel_steps = workspace;
  }
};

template <int kPairs>
ENCRT_ARM_INLINE void mmla_pairs(int32x4_t (&acc)[kPairs][8], const uint8x16_t (&a)[kPairs], const int8x16_t (&wz)[8]) {
  for (int p = 0; p < kPairs; ++p)
    for (int c = 0; c < 8; ++c) acc[p][c] = vusmmlaq_s32(acc[p][c], a[p], wz[c]);
}

// The tile's k loop: whole steps of 4 k-groups (16 bytes, one load per row; the 64-bit halves of
// two rows' loads zipped give the row pair's operands for groups g, g+1 and g+2, g+3) without a
// branch, then the 1-3 groups left, two at a time. The sums go to the epilogue through a copy (a
// lambda holding a reference to the accumulators makes g++ keep them in memory, see
// gemm_u8s8_neondot.cpp).
template <int MR>
__attribute__((noinline)) void tile(const U8S8TileArgs& t) {
  constexpr int kPairs = (MR + 1) / 2;
  int32x4_t acc[kPairs][8];
  for (int p = 0; p < kPairs; ++p)
    for (int c = 0; c < 8; ++c) acc[p][c] = vdupq_n_s32(0);
  const int full = t.K4 & ~3;
  const int g0 = u8s8_asm_whole_steps<MR>(t, full, [&](auto a0, auto a1, auto a2, auto a3, auto w, auto steps) {
    if (t.panel_steps)
      steps_4rows_zipped(acc, a0, a1, a2, a3, t.panel_steps, steps);
    else
      steps_4rows(acc, a0, a1, a2, a3, w, steps);
  });
  for (int g = g0; g < full; g += 4) {
    uint8x16_t lo[kPairs], hi[kPairs];
    for (int p = 0; p < kPairs; ++p) {
      const uint64x2_t r0 = vreinterpretq_u64_u8(vld1q_u8(t.a + (2 * p) * t.lda + 4 * g));
      // An odd last row pairs with zeros; its sums are never stored.
      const uint64x2_t r1 =
          2 * p + 1 < MR ? vreinterpretq_u64_u8(vld1q_u8(t.a + (2 * p + 1) * t.lda + 4 * g)) : vdupq_n_u64(0);
      lo[p] = vreinterpretq_u8_u64(vzip1q_u64(r0, r1));
      hi[p] = vreinterpretq_u8_u64(vzip2q_u64(r0, r1));
    }
    // Four columns at a time (their 2 + 2 zipped registers), so that the 16 accumulators, the 4
    // row-pair operands and the weights fit the 32 registers without spills.
    const int8_t* w = t.w + static_cast<size_t>(g) * 64;
    for (int q = 0; q < 4; ++q) {
      const int32x4_t w0 = vreinterpretq_s32_s8(vld1q_s8(w + 16 * q)), w1 = vreinterpretq_s32_s8(vld1q_s8(w + 64 + 16 * q));
      const int32x4_t w2 = vreinterpretq_s32_s8(vld1q_s8(w + 128 + 16 * q)), w3 = vreinterpretq_s32_s8(vld1q_s8(w + 192 + 16 * q));
      const int8x16_t z01a = vreinterpretq_s8_s32(vzip1q_s32(w0, w1)), z01b = vreinterpretq_s8_s32(vzip2q_s32(w0, w1));
      const int8x16_t z23a = vreinterpretq_s8_s32(vzip1q_s32(w2, w3)), z23b = vreinterpretq_s8_s32(vzip2q_s32(w2, w3));
      for (int p = 0; p < kPairs; ++p) {
        acc[p][2 * q] = vusmmlaq_s32(acc[p][2 * q], lo[p], z01a);
        acc[p][2 * q + 1] = vusmmlaq_s32(acc[p][2 * q + 1], lo[p], z01b);
        acc[p][2 * q] = vusmmlaq_s32(acc[p][2 * q], hi[p], z23a);
        acc[p][2 * q + 1] = vusmmlaq_s32(acc[p][2 * q + 1], hi[p], z23b);
      }
    }
  }
  for (int g = full; g < t.K4; g += 2) {
    uint8x16_t a[kPairs];
    for (int p = 0; p < kPairs; ++p) {
      const uint8x8_t r0 = load8(t.a + (2 * p) * t.lda, g, t.K4);
      const uint8x8_t r1 = 2 * p + 1 < MR ? load8(t.a + (2 * p + 1) * t.lda, g, t.K4) : vdup_n_u8(0);
      a[p] = vcombine_u8(r0, r1);
    }
    int8x16_t wz[8];
    zip_weights(wz, t.w + static_cast<size_t>(g) * 64, g + 1 < t.K4);
    mmla_pairs<kPairs>(acc, a, wz);
  }
  int32x4_t sums[kPairs][8];
  for (int p = 0; p < kPairs; ++p)
    for (int c = 0; c < 8; ++c) sums[p][c] = acc[p][c];
  // Columns 4j..4j+3 of row r: the 2 × 2 blocks of column pairs 2j, 2j+1 of its row pair,
  // unzipped by 64-bit lanes (the pair's first row is the low half of each block).
  u8s8_epilogue<MR>(t, 0, [&](int r, int j) {
    const int64x2_t lo = vreinterpretq_s64_s32(sums[r / 2][2 * j]), hi = vreinterpretq_s64_s32(sums[r / 2][2 * j + 1]);
    return vreinterpretq_s32_s64(r % 2 == 0 ? vzip1q_s64(lo, hi) : vzip2q_s64(lo, hi));
  });
}

}  // namespace

void qu8s8_gemm_4x16__neoni8mm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  static const U8S8TileFn tiles[kMR] = {tile<1>, tile<2>, tile<3>, tile<4>};
  const ZipPanelHook zip{reinterpret_cast<int8_t*>(A.workspace), M / kMR >= kMinZipTiles};
  u8s8_gemm_panels<kMR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, tiles, zip);
}

}  // namespace encrt::kernels::arm
