// f16_add_row__neon: dst[i] += float(src[i]) · scale for embedding rows stored as IEEE half,
// bit for bit the reference: fcvtl widens exactly, then a multiply and an add, each rounded once
// (no fused multiply-add, which would round once and differ).
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"
#include "core/half.h"

namespace encrt::kernels::arm {

void f16_add_row__neon(int n, const uint16_t* src, float scale, float* dst) {
  const float32x4_t vs = vdupq_n_f32(scale);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const float32x4_t x = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i)));
    vst1q_f32(dst + i, vaddq_f32(vld1q_f32(dst + i), vmulq_f32(x, vs)));
  }
  for (; i < n; ++i) dst[i] += half_to_float(src[i]) * scale;
}

}  // namespace encrt::kernels::arm
