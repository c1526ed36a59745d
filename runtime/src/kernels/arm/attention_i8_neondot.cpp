// qs8_attention__neondot: int8 attention for one (sequence, head), bit for bit what
// ref::attention_i8 computes (kernels/ref/attention_i8_ref.cpp). Everything but Q·K is shared with
// the ARMv8.0 kernel (attention_i8_neon_common.h: quantization, the float steps in the reference's
// order, P·V with widening multiply-adds); Q·K here is sdot (signed × signed bytes), one key at a
// time, 16 depth bytes per sdot.
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/attention_i8_neon_common.h"

namespace encrt::kernels::arm {

size_t qs8_attention_scratch__neondot(int seq, int head_dim) { return i8_attention_scratch_bytes(seq, head_dim); }

void qs8_attention__neondot(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_rows(a, b, h, scratch, [](const I8AttentionScratch& t, int j_lo, int j_hi, int D16, const int32_t* mask) {
    for (int j = j_lo; j < j_hi; ++j) {
      if (mask && mask[j] == 0) continue;
      const int8_t* k = t.k + static_cast<size_t>(j) * D16;
      int32x4_t acc = vdupq_n_s32(0);
      for (int d = 0; d < D16; d += 16) acc = vdotq_s32(acc, vld1q_s8(t.q + d), vld1q_s8(k + d));
      t.dots[j] = vaddvq_s32(acc);
    }
  });
}

}  // namespace encrt::kernels::arm
