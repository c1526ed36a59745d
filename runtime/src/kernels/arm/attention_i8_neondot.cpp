// qs8_attention__neondot: int8 attention for one (sequence, head), bit for bit what
// ref::attention_i8 computes (kernels/ref/attention_i8_ref.cpp). Everything but Q·K is shared with
// the ARMv8.0 kernel (attention_i8_neon_common.h: quantization, the float steps in the reference's
// order); Q·K and P·V here are sdot (signed × signed bytes), attention_i8_sdot.h's hooks: the
// dense path on panels of four keys, the masked path one key at a time.
// Work per call, counted under qemu (instructions, not time: benchmarks/qemu_instructions/
// arm_attention.sh), seq 128, head_dim 32: 1.03 M instructions, 63 per (query, key) pair, about 30
// of them in the C library's expf; 2.13 M before the dense path and its panels.
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/attention_i8_sdot.h"

namespace encrt::kernels::arm {

size_t qs8_attention_scratch__neondot(int seq, int head_dim) { return i8_attention_scratch_bytes(seq, head_dim); }

void qs8_attention__neondot(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_rows(a, b, h, scratch, sdot_scores, DensePanels{});
}

}  // namespace encrt::kernels::arm
