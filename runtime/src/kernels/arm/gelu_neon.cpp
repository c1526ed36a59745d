// The GELU of the NEON GEMM epilogues over an array (GeluFn), for backends that run their own
// GEMMs and add GELU after them.
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"

namespace encrt::kernels::arm {

void f32_gelu__neon(int n, const float* x, float* y) {
  int i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, gelu_neon(vld1q_f32(x + i)));
  if (i < n) {
    float tail[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; i + j < n; ++j) tail[j] = x[i + j];
    const float32x4_t v = gelu_neon(vld1q_f32(tail));
    vst1q_f32(tail, v);
    for (int j = 0; i + j < n; ++j) y[i + j] = tail[j];
  }
}

}  // namespace encrt::kernels::arm
