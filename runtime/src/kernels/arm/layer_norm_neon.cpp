// f32_layer_norm__neon: y = (x - mean) / sqrt(var + eps) · gamma + beta per row, in fp32, with
// the corrected two-pass variance of the x86 kernels (layer_norm_avx512.cpp): m0 = Σx/N, then
// d = x - m0, var = Σd²/N - (Σd/N)², outputs from (d - Σd/N). X == Y is allowed.
#include <cmath>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"

namespace encrt::kernels::arm {

void f32_layer_norm__neon(int M, int N, const float* X, int ldx, const float* gamma, const float* beta, float eps,
                          float* Y, int ldy) {
  if (N <= 0) return;
  const int full = N & ~3;
  const float inv_n = 1.0f / static_cast<float>(N);
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    float* y = Y + static_cast<size_t>(m) * ldy;
    float32x4_t s = vdupq_n_f32(0.0f);
    for (int n = 0; n < full; n += 4) s = vaddq_f32(s, vld1q_f32(x + n));
    float sum = vaddvq_f32(s);
    for (int n = full; n < N; ++n) sum += x[n];
    const float mean0 = sum * inv_n;

    const float32x4_t vm0 = vdupq_n_f32(mean0);
    float32x4_t d = vdupq_n_f32(0.0f), sq = vdupq_n_f32(0.0f);
    for (int n = 0; n < full; n += 4) {
      const float32x4_t a = vsubq_f32(vld1q_f32(x + n), vm0);
      d = vaddq_f32(d, a);
      sq = vfmaq_f32(sq, a, a);
    }
    float dsum = vaddvq_f32(d), sqsum = vaddvq_f32(sq);
    for (int n = full; n < N; ++n) {
      const float a = x[n] - mean0;
      dsum += a;
      sqsum = std::fma(a, a, sqsum);
    }
    const float mean_d = dsum * inv_n;
    float var = sqsum * inv_n - mean_d * mean_d;
    var = var > 0.0f ? var : 0.0f;
    const float inv = 1.0f / std::sqrt(var + eps);
    const float32x4_t vmd = vdupq_n_f32(mean_d), vinv = vdupq_n_f32(inv);
    for (int n = 0; n < full; n += 4) {
      const float32x4_t v = vmulq_f32(vsubq_f32(vsubq_f32(vld1q_f32(x + n), vm0), vmd), vinv);
      vst1q_f32(y + n, vfmaq_f32(vld1q_f32(beta + n), v, vld1q_f32(gamma + n)));
    }
    for (int n = full; n < N; ++n) y[n] = std::fma((x[n] - mean0 - mean_d) * inv, gamma[n], beta[n]);
  }
}

}  // namespace encrt::kernels::arm
