// qu8s8_gemm_2x16__neon: uint8 activations × int8 weights (PanelN16K4), ARMv8.0 Advanced SIMD
// only (no dot product: Cortex-A53/A72, Raspberry Pi 3/4), exact for every uint8 and int8 value.
//
// The products go through smull / smlsl on int8 lanes into int16, then sadalp (pairwise
// add-accumulate) into int32. smull is signed × signed, so the activations are flipped, and
// differently in the two k-groups of a pair (g even, g + 1), both with one eor:
//   a = q ^ 0x80 = q - 128  (group g),   b = q ^ 0x7f = 127 - q  (group g + 1),   a, b in [-128, 127].
// One int16 lane then holds t = a·w_g - b·w_g+1 (smull, then smlsl). Each product lies in
// [-16256, 16384], so t lies in [-32640, 32640] and never wraps, whatever the weights (-128
// included; the x86 vpmaddubsw trap, or XNNPACK's smull + smlal, which needs weights in
// [-127, 127], cannot happen here). Since q·w_g = a·w_g + 128·w_g and q·w_g+1 = 128·w_g+1 - (b + 1)·w_g+1,
//   Σ_k (q - 128)·w = Σ t - Σ_(odd groups) w                                   (exact in int32),
// and the epilogue adds (128 - zp)·w_sum[n] as for the sdot kernel (gemm_u8s8_neon_common.h). The
// odd groups' weight sums (16 per panel) are computed once per panel by the panel hook and shared by
// all of its row tiles.
//
// Register tile: 2 rows × 16 columns (one panel). Every column has two int32 lanes (sadalp adds
// pairs of the 4 depth bytes of a group: k 0+1 and k 2+3), so a row needs 8 q-register
// accumulators: 2 rows = 16, plus half a panel of weights of both k-groups (4 registers, 2 ldp),
// both rows' ld2r-broadcast groups (4), the two flip patterns and 2 int16 products: 28 of the 32
// registers. A third row would need 24 accumulators (36 registers) and spill; fewer columns per
// tile would share each row's activation work (ld2r + 2 eor per pair of groups) among fewer
// products. As it is, the activations' cost is shared by 16 columns, the weight loads by 2 rows.
//
// Static speed figure (no ARM hardware measured this kernel; qemu's timings mean nothing): int8
// multiply-accumulates per instruction of the inner loop, counted in aarch64-linux-gnu-objdump -d
// of this file's object (g++ 12.2 -O3, -fno-schedule-insns: runtime/CMakeLists.txt). tile<2>'s loop,
// two pairs of k-groups per step (16 k × 2 rows × 16 columns = 512 MACs), is 123 instructions:
// 32 smull/smull2 + 32 smlsl/smlsl2 + 32 sadalp, 8 ldp (weights), 4 ld2r + 8 eor (activations),
// 5 add, cmp, b.ne: 4.16 MACs per instruction (tile<1>, the last odd row: 256 in 67, 3.82); on
// rows flipped once per block (u8s8_gemm_encoded_rows, the usual case) 115 without the 8 eor: 4.45
// (MiniLM int8 under qemu -cpu cortex-a53: the tiles 332.4 M → 310.8 M instructions per run). The
// panel hook adds 8 instructions per odd k-group and panel, shared by all rows. For comparison,
// counted the same way in Debian's arm64 libXNNPACK.so.0 (README.md, "Kernel levels"): the kernels
// XNNPACK's init picks without the dot product, xnn_qs8_gemm_minmax_fp32_ukernel_2x8c8__aarch64_
// neon_mlal (cores it does not list; smull + smlal of two int8 products in int16, which needs
// weights in [-127, 127]) 256 MACs in 61 instructions = 4.20, its _prfm variant (Cortex-A72/A73)
// 256 in 65 = 3.94, and ..._4x16__aarch64_neon_mlal_lane_cortex_a53 (Cortex-A53) 512 in 181 =
// 2.83; for scale, encrt's sdot kernel (tile<4>, four k-groups per step, in assembly) 1024 in 83
// = 12.3.
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/gemm_u8s8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

constexpr int kMR = 2;
// Odd k-groups summed in int16 before widening: each adds two int8 values (>= -256) to a lane.
constexpr int kOddGroupsPerFlush = 64;

// Four groups' broadcast bytes (4 lanes of 32 bits, each the row's 4 bytes of one group) flipped.
ENCRT_ARM_INLINE int8x16_t flip(uint32x4_t v, uint32_t pattern) {
  return vreinterpretq_s8_u32(veorq_u32(v, vdupq_n_u32(pattern)));
}

// The panel hook: per column, the sum of its weights in the odd k-groups, for the correction
// above (t.panel_sums[n - n0]).
struct OddGroupSums {
  int32_t sums[kPanelN];
  void operator()(U8S8TileArgs& t) {
    int32x4_t s32[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
    for (int g0 = 1; g0 < t.K4; g0 += 2 * kOddGroupsPerFlush) {
      int16x8_t s16[4] = {vdupq_n_s16(0), vdupq_n_s16(0), vdupq_n_s16(0), vdupq_n_s16(0)};
      const int g1 = t.K4 - g0 < 2 * kOddGroupsPerFlush ? t.K4 : g0 + 2 * kOddGroupsPerFlush;
      for (int g = g0; g < g1; g += 2) {
        const int8x16x4_t w = vld1q_s8_x4(t.w + static_cast<size_t>(g) * 64);
        for (int j = 0; j < 4; ++j) s16[j] = vpadalq_s8(s16[j], w.val[j]);
      }
      for (int j = 0; j < 4; ++j) s32[j] = vpadalq_s16(s32[j], s16[j]);
    }
    for (int j = 0; j < 4; ++j) vst1q_s32(sums + 4 * j, s32[j]);
    t.panel_sums = sums;
  }
};

// A row's 4 bytes of group g broadcast and flipped to q - 128 (a), and of group g + 1 flipped to
// 127 - q (b); kEncoded: the row's bytes are flipped already (flip_pattern, u8s8_gemm_encoded_rows). Rows
// hold at least 4·K4 readable bytes, so both groups are inside the row.
template <bool kEncoded>
ENCRT_ARM_INLINE void load_pair(const uint8_t* row, int8x16_t& a, int8x16_t& b) {
  const uint32x4x2_t d = vld2q_dup_u32(reinterpret_cast<const uint32_t*>(row));
  if constexpr (kEncoded) {
    a = vreinterpretq_s8_u32(d.val[0]);
    b = vreinterpretq_s8_u32(d.val[1]);
  } else {
    a = flip(d.val[0], 0x80808080u);
    b = flip(d.val[1], 0x7f7f7f7fu);
  }
}

// A last, single (even) group's 4 bytes broadcast as q - 128.
template <bool kEncoded>
ENCRT_ARM_INLINE int8x16_t load_single(const uint8_t* row) {
  const uint32x4_t d = vld1q_dup_u32(reinterpret_cast<const uint32_t*>(row));
  return kEncoded ? vreinterpretq_s8_u32(d) : flip(d, 0x80808080u);
}

// The flips of u8s8_gemm_encoded_rows: 16 bytes = groups 4i..4i+3, even ones ^ 0x80, odd ones ^ 0x7f.
ENCRT_ARM_INLINE uint8x16_t flip_pattern() {
  return vreinterpretq_u8_u64(vdupq_n_u64(0x7f7f7f7f80808080ull));
}
// Encoding the rows once pays from the first panel on (4 eor per row and 16 k saved per panel,
// about as many instructions spent once); two, to be clear of it.
constexpr int kMinEncodedPanels = 2;

// Columns 4j..4j+3 of one row += a·w0 - b·w1 (w0, w1: the 16 bytes of the columns in groups g, g + 1):
// lo_acc holds columns 4j, 4j+1 (two lanes each: k 0+1, k 2+3), hi_acc 4j+2, 4j+3.
ENCRT_ARM_INLINE void mac_quad(int8x16_t a, int8x16_t b, int8x16_t w0, int8x16_t w1, int32x4_t& lo_acc,
                               int32x4_t& hi_acc) {
  lo_acc = vpadalq_s16(lo_acc, vmlsl_s8(vmull_s8(vget_low_s8(a), vget_low_s8(w0)), vget_low_s8(b), vget_low_s8(w1)));
  hi_acc = vpadalq_s16(hi_acc, vmlsl_high_s8(vmull_high_s8(a, w0), b, w1));
}

// The same for a last, single group (an even one: a alone).
ENCRT_ARM_INLINE void mac_quad_single(int8x16_t a, int8x16_t w0, int32x4_t& lo_acc, int32x4_t& hi_acc) {
  lo_acc = vpadalq_s16(lo_acc, vmull_s8(vget_low_s8(a), vget_low_s8(w0)));
  hi_acc = vpadalq_s16(hi_acc, vmull_high_s8(a, w0));
}

// Named accumulators (vacc<row>x<j>), not an array: g++ keeps an array of 16 vectors in memory and
// stores it on every step of the loop (as it does for the sdot kernel's acc[4][4]). The weights
// are loaded half a panel at a time (4 registers live, not 8); with g++'s pre-allocation scheduler
// off for this file (runtime/CMakeLists.txt), the loop has no spills.
template <int MR, bool kEncoded>
__attribute__((noinline)) void tile(const U8S8TileArgs& t) {
  int32x4_t vacc0x0 = vdupq_n_s32(0), vacc0x1 = vacc0x0, vacc0x2 = vacc0x0, vacc0x3 = vacc0x0, vacc0x4 = vacc0x0,
            vacc0x5 = vacc0x0, vacc0x6 = vacc0x0, vacc0x7 = vacc0x0;
  int32x4_t vacc1x0 = vacc0x0, vacc1x1 = vacc0x0, vacc1x2 = vacc0x0, vacc1x3 = vacc0x0, vacc1x4 = vacc0x0,
            vacc1x5 = vacc0x0, vacc1x6 = vacc0x0, vacc1x7 = vacc0x0;
  const uint8_t* a0 = t.a;
  const uint8_t* a1 = t.a + t.lda;
  const int8_t* w = t.w;
  int g = 0;
  // Two pairs per step: the loop's pointer updates and branch are shared by 512 MACs.
#pragma GCC unroll 2
  for (; g + 2 <= t.K4; g += 2, w += 128, a0 += 8, a1 += 8) {
    int8x16_t va0, vb0, va1, vb1;
    load_pair<kEncoded>(a0, va0, vb0);
    if constexpr (MR == 2) load_pair<kEncoded>(a1, va1, vb1);
    const int8x16x2_t w0lo = {{vld1q_s8(w), vld1q_s8(w + 16)}}, w1lo = {{vld1q_s8(w + 64), vld1q_s8(w + 80)}};
    mac_quad(va0, vb0, w0lo.val[0], w1lo.val[0], vacc0x0, vacc0x1);
    mac_quad(va0, vb0, w0lo.val[1], w1lo.val[1], vacc0x2, vacc0x3);
    if constexpr (MR == 2) {
      mac_quad(va1, vb1, w0lo.val[0], w1lo.val[0], vacc1x0, vacc1x1);
      mac_quad(va1, vb1, w0lo.val[1], w1lo.val[1], vacc1x2, vacc1x3);
    }
    const int8x16x2_t w0hi = {{vld1q_s8(w + 32), vld1q_s8(w + 48)}}, w1hi = {{vld1q_s8(w + 96), vld1q_s8(w + 112)}};
    mac_quad(va0, vb0, w0hi.val[0], w1hi.val[0], vacc0x4, vacc0x5);
    mac_quad(va0, vb0, w0hi.val[1], w1hi.val[1], vacc0x6, vacc0x7);
    if constexpr (MR == 2) {
      mac_quad(va1, vb1, w0hi.val[0], w1hi.val[0], vacc1x4, vacc1x5);
      mac_quad(va1, vb1, w0hi.val[1], w1hi.val[1], vacc1x6, vacc1x7);
    }
  }
  if (g < t.K4) {
    const int8x16_t va0 = load_single<kEncoded>(a0);
    const int8x16x4_t w0 = vld1q_s8_x4(w);
    mac_quad_single(va0, w0.val[0], vacc0x0, vacc0x1);
    mac_quad_single(va0, w0.val[1], vacc0x2, vacc0x3);
    mac_quad_single(va0, w0.val[2], vacc0x4, vacc0x5);
    mac_quad_single(va0, w0.val[3], vacc0x6, vacc0x7);
    if constexpr (MR == 2) {
      const int8x16_t va1 = load_single<kEncoded>(a1);
      mac_quad_single(va1, w0.val[0], vacc1x0, vacc1x1);
      mac_quad_single(va1, w0.val[1], vacc1x2, vacc1x3);
      mac_quad_single(va1, w0.val[2], vacc1x4, vacc1x5);
      mac_quad_single(va1, w0.val[3], vacc1x6, vacc1x7);
    }
  }
  // Columns 4j..4j+3: the lane pairs of accumulators 2j, 2j + 1 added, minus the odd groups' sums.
  const int32x4_t odd0 = vld1q_s32(t.panel_sums), odd1 = vld1q_s32(t.panel_sums + 4),
                  odd2 = vld1q_s32(t.panel_sums + 8), odd3 = vld1q_s32(t.panel_sums + 12);
  const int32x4_t sums[2][4] = {
      {vsubq_s32(vpaddq_s32(vacc0x0, vacc0x1), odd0), vsubq_s32(vpaddq_s32(vacc0x2, vacc0x3), odd1),
       vsubq_s32(vpaddq_s32(vacc0x4, vacc0x5), odd2), vsubq_s32(vpaddq_s32(vacc0x6, vacc0x7), odd3)},
      {vsubq_s32(vpaddq_s32(vacc1x0, vacc1x1), odd0), vsubq_s32(vpaddq_s32(vacc1x2, vacc1x3), odd1),
       vsubq_s32(vpaddq_s32(vacc1x4, vacc1x5), odd2), vsubq_s32(vpaddq_s32(vacc1x6, vacc1x7), odd3)}};
  u8s8_epilogue<MR>(t, 128, [&](int r, int j) { return sums[r][j]; });
}

}  // namespace

void qu8s8_gemm_2x16__neon(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  static const U8S8TileFn plain[kMR] = {tile<1, false>, tile<2, false>};
  static const U8S8TileFn encoded[kMR] = {tile<1, true>, tile<2, true>};
  u8s8_gemm_encoded_rows<kMR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, plain, encoded, flip_pattern(),
                              kMinEncodedPanels, OddGroupSums{});
}

}  // namespace encrt::kernels::arm
