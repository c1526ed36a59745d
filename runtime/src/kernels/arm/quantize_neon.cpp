// qu8_quantize_rows__neon: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 (kernel_types.h). Two passes per row: the range (vminnm/vmaxnm skip NaNs,
// as the reference's std::min/std::max do), then q = clamp(rint(x·inv) + zp, 0, 255) in fp32
// exactly as the reference orders it (frintn rounds half to even like nearbyint), with NaN
// lanes forced to 0. A row's tail past a multiple of 4 runs the same steps one value at a time.
#include <cmath>
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"

namespace encrt::kernels::arm {

void qu8_quantize_rows__neon(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                             float* scale, int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  const int full = K & ~3;
  for (int m = 0; m < M; ++m) {
    const float* row = X + static_cast<size_t>(m) * ldx;
    uint8_t* q = Q + static_cast<size_t>(m) * ldq;
    auto value = [&](int k) { return multipliers ? row[k] * multipliers[k] : row[k]; };
    auto load = [&](int k) {
      const float32x4_t v = vld1q_f32(row + k);
      return multipliers ? vmulq_f32(v, vld1q_f32(multipliers + k)) : v;
    };
    float32x4_t vlo = vdupq_n_f32(0.0f), vhi = vdupq_n_f32(0.0f);
    for (int k = 0; k < full; k += 4) {
      const float32x4_t v = load(k);
      vlo = vminnmq_f32(vlo, v);
      vhi = vmaxnmq_f32(vhi, v);
    }
    float lo = vminnmvq_f32(vlo), hi = vmaxnmvq_f32(vhi);
    for (int k = full; k < K; ++k) {
      const float v = value(k);
      lo = v < lo ? v : lo;
      hi = hi < v ? v : hi;
    }
    const float s = (hi - lo) / 255.0f;
    const float inv = 1.0f / s;
    // The reference's rows without a usable range, from the same scalars (kernel_types.h).
    if (!(inv <= kFloatMax) || !(s <= kFloatMax)) {
      scale[m] = inv <= kFloatMax ? kQuietNaN : 1.0f;
      zero_point[m] = 0;
      std::memset(q, 0, static_cast<size_t>(Kp));
      continue;
    }
    const float zp_f = std::nearbyint(-lo * inv);
    const int32_t zp = static_cast<int32_t>(zp_f < 0.0f ? 0.0f : zp_f > 255.0f ? 255.0f : zp_f);
    const float32x4_t vinv = vdupq_n_f32(inv), vzp = vdupq_n_f32(static_cast<float>(zp));
    const float32x4_t zero = vdupq_n_f32(0.0f), top = vdupq_n_f32(255.0f);
    for (int k = 0; k < full; k += 4) {
      const float32x4_t v = vaddq_f32(vrndnq_f32(vmulq_f32(load(k), vinv)), vzp);
      const uint32x4_t not_nan = vceqq_f32(v, v);
      const uint32x4_t u = vandq_u32(vcvtq_u32_f32(vminq_f32(vmaxq_f32(v, zero), top)), not_nan);
      const uint16x4_t h = vmovn_u32(u);
      const uint8x8_t b = vmovn_u16(vcombine_u16(h, h));
      std::memcpy(q + k, &b, 4);
    }
    for (int k = full; k < K; ++k) {
      const float v = std::nearbyint(value(k) * inv) + static_cast<float>(zp);
      q[k] = std::isnan(v) ? uint8_t{0} : static_cast<uint8_t>(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
    for (int k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(zp);
    scale[m] = s;
    zero_point[m] = zp;
  }
}

}  // namespace encrt::kernels::arm
