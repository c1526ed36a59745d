// qs8_attention__neon: int8 attention for one (sequence, head) with ARMv8.0 Advanced SIMD only (no
// dot product: Cortex-A53/A72, Raspberry Pi 3/4), bit for bit what ref::attention_i8 computes
// (kernels/ref/attention_i8_ref.cpp). Everything but the products is shared with the sdot kernel
// (attention_i8_neon_common.h: quantization, the float steps in the reference's order).
//
// The products with smull / smlal into int16 and sadalp into int32, on the panels the sdot kernel
// uses, built once per head (prepare_key_panels, prepare_value_panels):
//   Q·K (panel_dots)  the quantized Q and K values lie in [-127, 127] (the symmetric quantization
//     clamps to ±127, NaN → 0), so two products fit an int16 lane (2 · 127² = 32258 < 32767): per
//     4-key block and pair of depth groups, smull of one group's 16 panel bytes with the query's 4
//     bytes of it (repeated per key, in registers for the whole row at head_dim 32 and 64), smlal of
//     the next group's, sadalp; one addp per block gives its 4 scores.
//   P·V (smull_pv_chunk)  the same way round with u - 128 as signed bytes (|u - 128| <= 128, so
//     two products stay within ±32512) on the V panels, and 128 · Σ v added back.
// The masked path (pair masks, windows) keeps the key-by-key Q·K on the K rows (scores, dots4).
//
// Work, counted under qemu (instructions, not time; no ARM hardware has timed this kernel), seq 128,
// head_dim 32, benchmarks/qemu_instructions/arm_attention.sh: 0.661 M instructions per call, 40.3
// per (query, key) pair. Before the panels, Q·K took the listed keys' K rows four at a time (16
// instructions per pair in MiniLM) and P·V widened each V row to int16 against u (21 instructions
// per key with u != 0, 3 to skip a key with u = 0): 0.744 M per call. MiniLM int8 under qemu
// -cpu cortex-a53: the attention 64.9 M → 46.7 M instructions per run (76% of its u are nonzero; a
// per-row choice of the old P·V where u is sparse, by a count of the nonzero u, cost more than it
// saved, the count alone 2 M per run).
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/attention_i8_neon_common.h"

namespace encrt::kernels::arm {
namespace {

// acc += Σ of the 16 products q[d]·k[d] (for |q|, |k| <= 127), as 4 int32 partial sums.
ENCRT_ARM_INLINE int32x4_t dot16(int32x4_t acc, int8x16_t q, int8x16_t k) {
  return vpadalq_s16(acc, vmlal_high_s8(vmull_s8(vget_low_s8(q), vget_low_s8(k)), q, k));
}

// The query row's dot products with the K rows k0..k3, as lanes 0..3 (one load of the query per
// 16 depth bytes for the four), and with one row.
ENCRT_ARM_INLINE int32x4_t dots4(const int8_t* q, const int8_t* k0, const int8_t* k1, const int8_t* k2,
                                 const int8_t* k3, int D16) {
  int32x4_t vacc0 = vdupq_n_s32(0), vacc1 = vacc0, vacc2 = vacc0, vacc3 = vacc0;
  for (int d = 0; d < D16; d += 16) {
    const int8x16_t vq = vld1q_s8(q + d);
    vacc0 = dot16(vacc0, vq, vld1q_s8(k0 + d));
    vacc1 = dot16(vacc1, vq, vld1q_s8(k1 + d));
    vacc2 = dot16(vacc2, vq, vld1q_s8(k2 + d));
    vacc3 = dot16(vacc3, vq, vld1q_s8(k3 + d));
  }
  return vpaddq_s32(vpaddq_s32(vacc0, vacc1), vpaddq_s32(vacc2, vacc3));
}
ENCRT_ARM_INLINE int32_t dot1(const int8_t* q, const int8_t* k, int D16) {
  int32x4_t vacc = vdupq_n_s32(0);
  for (int d = 0; d < D16; d += 16) vacc = dot16(vacc, vld1q_s8(q + d), vld1q_s8(k + d));
  return vaddvq_s32(vacc);
}

void scores(const I8AttentionScratch& t, int j_lo, int S, int D16, const int32_t* mask) {
  auto k = [&](int j) { return t.k + static_cast<size_t>(j) * D16; };
  int j = j_lo;
  for (; j + 4 <= S; j += 4) {
    if (mask && (mask[j] | mask[j + 1] | mask[j + 2] | mask[j + 3]) == 0) continue;
    vst1q_s32(t.dots + j, dots4(t.q, k(j), k(j + 1), k(j + 2), k(j + 3), D16));
  }
  for (; j < S; ++j)
    if (!mask || mask[j] != 0) t.dots[j] = dot1(t.q, k(j), D16);
}

// acc_lo, acc_hi += the products of one 4-key block's depth groups g, g + 1 (16 panel bytes each:
// 4 keys × 4 depth bytes) with the query's bytes of those groups (q0, q1: 4 bytes repeated per key):
// smull + smlal into int16 (two products of |q|, |k| <= 127: at most 32258), sadalp into int32;
// acc_lo gathers keys 0 and 1 (two lanes each), acc_hi keys 2 and 3.
ENCRT_ARM_INLINE void block_groups(int32x4_t& acc_lo, int32x4_t& acc_hi, const int8_t* panel, int8x16_t q0, int8x16_t q1) {
  const int8x16_t a = vld1q_s8(panel), b = vld1q_s8(panel + 16);
  acc_lo = vpadalq_s16(acc_lo, vmlal_s8(vmull_s8(vget_low_s8(a), vget_low_s8(q0)), vget_low_s8(b), vget_low_s8(q1)));
  acc_hi = vpadalq_s16(acc_hi, vmlal_high_s8(vmull_high_s8(a, q0), b, q1));
}

ENCRT_ARM_INLINE int8x16_t query_group(const int8_t* q, int g) {
  return vreinterpretq_s8_u32(vld1q_dup_u32(reinterpret_cast<const uint32_t*>(q + 4 * g)));
}

// Q·K of the query row (t.q) with the K panels (prepare_key_panels), t.dots[4kb .. 4kb + 4) per key
// block (0 past n). kGroups: D16 / 4 when known (8 for head_dim 32, 16 for 64; the query's groups
// then stay in registers for the whole row), 0 for any.
template <int kGroups>
void panel_dots(const I8AttentionScratch& t, int n, int D16) {
  const int groups = kGroups ? kGroups : D16 / 4;  // even: D16 is a multiple of 16
  const size_t block_bytes = static_cast<size_t>(D16) * 4;
  int8x16_t q[kGroups ? kGroups : 1];
  if constexpr (kGroups > 0)
    for (int g = 0; g < kGroups; ++g) q[g] = query_group(t.q, g);
  for (int kb = 0; kb < (n + 3) / 4; ++kb) {
    const int8_t* p = t.panel + static_cast<size_t>(kb) * block_bytes;
    int32x4_t lo = vdupq_n_s32(0), hi = lo;
    if constexpr (kGroups > 0) {
      for (int g = 0; g < kGroups; g += 2) block_groups(lo, hi, p + 16 * g, q[g], q[g + 1]);
    } else {
      for (int g = 0; g < groups; g += 2) block_groups(lo, hi, p + 16 * g, query_group(t.q, g), query_group(t.q, g + 1));
    }
    vst1q_s32(t.dots + 4 * kb, vpaddq_s32(lo, hi));
  }
}

// P·V of one query row, dims [d0, d0 + 4·kVecs), from u - 128 in t.u8 (store_u_minus_128) and the
// V panels (prepare_value_panels) of `groups` 16-key groups. Two 4-key blocks at a time: per 4 dims,
// smull of one block's 16 bytes (4 dims × 4 keys) with its keys' 4 bytes of u - 128 (repeated per
// dim), smlal of the next block's, sadalp into int32 pairs. Each int16 lane adds two products of
// |u - 128| <= 128 and |v| <= 127 (the symmetric quantization's range): at most 32512, no wrap.
// lo[c] gathers dims 4c, 4c+1 (two lanes each), hi[c] dims 4c+2, 4c+3; one addp per 4 dims and
// 128 · colsum give the exact Σ_j u_j v_j,d.
template <int kVecs>
ENCRT_ARM_INLINE void smull_pv_chunk(const I8AttentionScratch& t, int groups, int D, int D16, int d0, float sp, float* out) {
  int32x4_t lo[kVecs], hi[kVecs];
  for (int c = 0; c < kVecs; ++c) lo[c] = hi[c] = vdupq_n_s32(0);
  const size_t block_bytes = static_cast<size_t>(D16) * 4;
  // Pairs of 4-key blocks (8 keys, their u - 128 broadcast per block by ld1r), 4 pairs per 16-key group.
  for (int pair = 0; pair < 2 * groups; ++pair) {
    const int8_t* u = t.u8 + 8 * pair;
    const int8x16_t u0 = vreinterpretq_s8_u32(vld1q_dup_u32(reinterpret_cast<const uint32_t*>(u)));
    const int8x16_t u1 = vreinterpretq_s8_u32(vld1q_dup_u32(reinterpret_cast<const uint32_t*>(u + 4)));
    const int8_t* v0 = t.vpanel + static_cast<size_t>(2 * pair) * block_bytes + 4 * d0;
    const int8_t* v1 = v0 + block_bytes;
    for (int c = 0; c < kVecs; ++c) {
      const int8x16_t a = vld1q_s8(v0 + 16 * c), b = vld1q_s8(v1 + 16 * c);
      lo[c] = vpadalq_s16(lo[c], vmlal_s8(vmull_s8(vget_low_s8(a), vget_low_s8(u0)), vget_low_s8(b), vget_low_s8(u1)));
      hi[c] = vpadalq_s16(hi[c], vmlal_high_s8(vmull_high_s8(a, u0), b, u1));
    }
  }
  int32x4_t acc[kVecs];
  for (int c = 0; c < kVecs; ++c)
    acc[c] = vaddq_s32(vpaddq_s32(lo[c], hi[c]), vshlq_n_s32(vld1q_s32(t.colsum + d0 + 4 * c), 7));
  store_scaled_sums<kVecs>(acc, D, d0, sp, out);
}

// The dense path's hooks (attention_i8_neon_common.h): Q·K on the rows of the listed keys, four
// at a time; P·V on the V panels.
struct DenseDots {
  static constexpr bool kQueryPairs = false;  // one query row at a time
  void prepare(const I8AttentionScratch& t, int n, int D16) {
    prepare_key_panels(t, n, D16);
    prepare_value_panels(t, n, D16);
  }
  void dots(const I8AttentionScratch& t, int n, int D16) {
    if (D16 == 32)
      panel_dots<8>(t, n, D16);
    else if (D16 == 64)
      panel_dots<16>(t, n, D16);
    else
      panel_dots<0>(t, n, D16);
  }
  void pv(const I8AttentionScratch& t, int n, int D, int D16, float sp, float* out) {
    const int groups = store_u_minus_128(t, n);
    int d0 = 0;
    for (; d0 + 32 <= D16; d0 += 32) smull_pv_chunk<8>(t, groups, D, D16, d0, sp, out);
    if (d0 < D16) smull_pv_chunk<4>(t, groups, D, D16, d0, sp, out);
  }
};

}  // namespace

void f32_exp2_x255__neon(int n, const float* t, float* y) {
  int i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp2_x255_neon(vld1q_f32(t + i)));
  if (i < n) {
    float in[4] = {0.0f, 0.0f, 0.0f, 0.0f}, out[4];
    for (int l = 0; i + l < n; ++l) in[l] = t[i + l];
    vst1q_f32(out, exp2_x255_neon(vld1q_f32(in)));
    for (int l = 0; i + l < n; ++l) y[i + l] = out[l];
  }
}

size_t qs8_attention_scratch__neon(int seq, int head_dim) { return i8_attention_scratch_bytes(seq, head_dim); }

void qs8_attention__neon(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_rows(a, b, h, scratch, scores, DenseDots{});
}

}  // namespace encrt::kernels::arm
