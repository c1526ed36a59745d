// The sdot hooks of the ARM int8 attention's dense path (attention_i8_neon_common.h), shared by
// the dot-product and i8mm kernels (attention_i8_neondot.cpp, attention_i8_neoni8mm.cpp); include
// only from files built with the dot product:
//   DensePanels: the listed keys' quantized K rows regrouped once per head into panels of four
//     keys, [key group][depth group of 4][4 keys][4 bytes], so that one sdot by lane (the query's 4
//     bytes of a depth group) gives four keys' partial sums at once: D/4 sdot per four keys, two
//     key groups in flight. P·V the same way round: V regrouped into [key group][dim][4 keys], and
//     one sdot by lane (4 keys' u of the row) adds four keys to four dims' sums. sdot multiplies
//     signed bytes and u is in [0, 255], so the row's bytes are u - 128 and the sums start at
//     128 · Σ_j v_j,d over the listed keys: exact in int32, so the same sums as the reference.
//   sdot_scores: the masked path's Q·K, one key at a time, 16 depth bytes per sdot.
#pragma once

#include "kernels/arm/attention_i8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

// P·V of one query row, dims [d0, d0 + 4·kVecs), from u - 128 in t.u8 and the V panels of
// `groups` groups of four key groups (zero V past the listed keys).
template <int kVecs>
ENCRT_ARM_INLINE void pv_chunk(const I8AttentionScratch& t, int groups, int D, int D16, int d0, float sp, float* out) {
  int32x4_t acc[kVecs];
  for (int c = 0; c < kVecs; ++c) acc[c] = vshlq_n_s32(vld1q_s32(t.colsum + d0 + 4 * c), 7);
  const size_t block_bytes = static_cast<size_t>(D16) * 4;
  for (int g = 0; g < groups; ++g) {
    const int8x16_t u = vld1q_s8(t.u8 + 16 * g);
    const int8_t* v = t.vpanel + static_cast<size_t>(4 * g) * block_bytes + 4 * d0;
    for (int c = 0; c < kVecs; ++c) acc[c] = vdotq_laneq_s32(acc[c], vld1q_s8(v + 16 * c), u, 0);
    v += block_bytes;
    for (int c = 0; c < kVecs; ++c) acc[c] = vdotq_laneq_s32(acc[c], vld1q_s8(v + 16 * c), u, 1);
    v += block_bytes;
    for (int c = 0; c < kVecs; ++c) acc[c] = vdotq_laneq_s32(acc[c], vld1q_s8(v + 16 * c), u, 2);
    v += block_bytes;
    for (int c = 0; c < kVecs; ++c) acc[c] = vdotq_laneq_s32(acc[c], vld1q_s8(v + 16 * c), u, 3);
  }
  store_scaled_sums<kVecs>(acc, D, d0, sp, out);
}

struct DensePanels {
  static constexpr bool kQueryPairs = false;  // one query row at a time
  // t.panel (prepare_key_panels), t.vpanel and t.colsum (prepare_value_panels).
  void prepare(const I8AttentionScratch& t, int n, int D16) {
    prepare_value_panels(t, n, D16);
    prepare_key_panels(t, n, D16);
  }
  // t.dots[4kb .. 4kb + 4) for every key group (past n: the zero slots' 0).
  void dots(const I8AttentionScratch& t, int n, int D16) {
    const int blocks = (n + 3) / 4;
    const size_t block_bytes = static_cast<size_t>(D16) * 4;
    int kb = 0;
    for (; kb + 2 <= blocks; kb += 2) {
      const int8_t* p0 = t.panel + static_cast<size_t>(kb) * block_bytes;
      const int8_t* p1 = p0 + block_bytes;
      int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0;
      for (int c = 0; c < D16 / 16; ++c) {
        const int8x16_t q = vld1q_s8(t.q + 16 * c);
        const int8_t* a0 = p0 + 64 * c;
        const int8_t* a1 = p1 + 64 * c;
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0), q, 0);
        acc1 = vdotq_laneq_s32(acc1, vld1q_s8(a1), q, 0);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 16), q, 1);
        acc1 = vdotq_laneq_s32(acc1, vld1q_s8(a1 + 16), q, 1);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 32), q, 2);
        acc1 = vdotq_laneq_s32(acc1, vld1q_s8(a1 + 32), q, 2);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 48), q, 3);
        acc1 = vdotq_laneq_s32(acc1, vld1q_s8(a1 + 48), q, 3);
      }
      vst1q_s32(t.dots + 4 * kb, acc0);
      vst1q_s32(t.dots + 4 * kb + 4, acc1);
    }
    if (kb < blocks) {
      const int8_t* p0 = t.panel + static_cast<size_t>(kb) * block_bytes;
      int32x4_t acc0 = vdupq_n_s32(0);
      for (int c = 0; c < D16 / 16; ++c) {
        const int8x16_t q = vld1q_s8(t.q + 16 * c);
        const int8_t* a0 = p0 + 64 * c;
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0), q, 0);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 16), q, 1);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 32), q, 2);
        acc0 = vdotq_laneq_s32(acc0, vld1q_s8(a0 + 48), q, 3);
      }
      vst1q_s32(t.dots + 4 * kb, acc0);
    }
  }
  // u_j - 128 as bytes (store_u_minus_128), then P·V 32 dims at a time.
  void pv(const I8AttentionScratch& t, int n, int D, int D16, float sp, float* out) {
    const int groups = store_u_minus_128(t, n);
    int d0 = 0;
    for (; d0 + 32 <= D16; d0 += 32) pv_chunk<8>(t, groups, D, D16, d0, sp, out);
    if (d0 < D16) pv_chunk<4>(t, groups, D, D16, d0, sp, out);
  }
};

void sdot_scores(const I8AttentionScratch& t, int j_lo, int j_hi, int D16, const int32_t* mask) {
  for (int j = j_lo; j < j_hi; ++j) {
    if (mask && mask[j] == 0) continue;
    const int8_t* k = t.k + static_cast<size_t>(j) * D16;
    int32x4_t acc = vdupq_n_s32(0);
    for (int d = 0; d < D16; d += 16) acc = vdotq_s32(acc, vld1q_s8(t.q + d), vld1q_s8(k + d));
    t.dots[j] = vaddvq_s32(acc);
  }
}

}  // namespace
}  // namespace encrt::kernels::arm
