// qs8_attention__neon: int8 attention for one (sequence, head) with ARMv8.0 Advanced SIMD only (no
// dot product: Cortex-A53/A72, Raspberry Pi 3/4), bit for bit what ref::attention_i8 computes
// (kernels/ref/attention_i8_ref.cpp). Everything but the products is shared with the sdot kernel
// (attention_i8_neon_common.h: quantization, the float steps in the reference's order); P·V here is
// the shared widening one (widened_pv: the 8-bit probabilities times the int8 V rows in int16,
// summed in int32 registers).
//
// Q·K with smull / smlal2 into int16 and sadalp into int32: the quantized Q and K values lie in
// [-127, 127] (the symmetric quantization clamps to ±127, NaN → 0, and this kernel quantizes them
// itself), so two products fit an int16 lane (2 · 127² = 32258 < 32767): per 16 depth bytes, smull
// of the low halves, smlal2 of the high halves, sadalp of the 8 sums. Keys go four at a time, so
// each 16-byte load of the query row serves four keys, and the four sums are reduced together
// (two addp); the dense path takes the listed keys' rows four at a time the same way.
//
// Work per call, counted under qemu (instructions, not time: benchmarks/qemu_instructions/
// arm_attention.sh; no ARM hardware has timed this kernel), seq 128, head_dim 32: 1.26 M
// instructions, 77 per (query, key) pair, about 30 of them in the C library's expf; 1.86 M before
// the dense path.
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

// The dense path's hooks (attention_i8_neon_common.h): the rows of the listed keys, four at a time.
struct DenseDots {
  static constexpr bool kQueryPairs = false;  // one query row at a time
  void prepare(const I8AttentionScratch&, int, int) {}
  void dots(const I8AttentionScratch& t, int n, int D16) {
    auto k = [&](int j) { return t.k + static_cast<size_t>(t.keys[j]) * D16; };
    int j = 0;
    for (; j + 4 <= n; j += 4) vst1q_s32(t.dots + j, dots4(t.q, k(j), k(j + 1), k(j + 2), k(j + 3), D16));
    for (; j < n; ++j) t.dots[j] = dot1(t.q, k(j), D16);
  }
  void pv(const I8AttentionScratch& t, int n, int D, int D16, float sp, float* out) { widened_pv(t, n, D, D16, sp, out); }
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
