// qu8_quantize_rows__neon: per-row asymmetric uint8 quantization, bit-exact with
// ref::quantize_rows_u8 (kernel_types.h). Two passes per row: the range (vminnm/vmaxnm skip NaNs,
// as the reference's std::min/std::max do), then q = clamp(rint(x·inv) + zp, 0, 255). The
// reference rounds x·inv with nearbyint, adds zp in float and clamps; here fcvtns rounds x·inv
// half to even straight to int32 (|x·inv| <= 256: exact), zp is added in int32 (exact, as the
// float sum of two small integers is) and the saturating narrows clamp to [0, 255]. fcvtns turns
// a NaN into 0, where the reference's NaN gives 0 only after the addition: NaN lanes are masked
// to 0 at the end. 16 values per step of the second pass; a row's tail past a multiple of 16
// runs 4 at a time, then one at a time, with the same steps.
#include <cmath>
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"

namespace encrt::kernels::arm {
namespace {

template <bool kMul>
ENCRT_ARM_INLINE float32x4_t load_row(const float* row, const float* mul, int k) {
  const float32x4_t v = vld1q_f32(row + k);
  return kMul ? vmulq_f32(v, vld1q_f32(mul + k)) : v;
}

// rint(x·inv) + zp as int32, 0 where x·inv is NaN (then the reference's value is NaN, stored as 0).
ENCRT_ARM_INLINE int32x4_t quantize4(float32x4_t x, float32x4_t vinv, int32x4_t vzp) {
  const float32x4_t y = vmulq_f32(x, vinv);
  const int32x4_t q = vaddq_s32(vcvtnq_s32_f32(y), vzp);
  return vandq_s32(q, vreinterpretq_s32_u32(vceqq_f32(y, y)));
}

// Four int32 vectors to 16 bytes, clamped to [0, 255] by the saturating narrows.
ENCRT_ARM_INLINE uint8x16_t narrow16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  const uint16x8_t ab = vqmovun_high_s32(vqmovun_s32(a), b);
  const uint16x8_t cd = vqmovun_high_s32(vqmovun_s32(c), d);
  return vqmovn_high_u16(vqmovn_u16(ab), cd);
}

template <bool kMul>
void quantize_rows(int M, int K, const float* X, int ldx, const float* mul, uint8_t* Q, int ldq, float* scale,
                   int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  const int full4 = K & ~3, full8 = K & ~7, full16 = K & ~15;
  for (int m = 0; m < M; ++m) {
    const float* row = X + static_cast<size_t>(m) * ldx;
    uint8_t* q = Q + static_cast<size_t>(m) * ldq;
    auto value = [&](int k) { return kMul ? row[k] * mul[k] : row[k]; };
    float32x4_t lo0 = vdupq_n_f32(0.0f), hi0 = lo0, lo1 = lo0, hi1 = lo0;
    int k = 0;
    for (; k < full8; k += 8) {
      const float32x4_t a = load_row<kMul>(row, mul, k), b = load_row<kMul>(row, mul, k + 4);
      lo0 = vminnmq_f32(lo0, a), hi0 = vmaxnmq_f32(hi0, a);
      lo1 = vminnmq_f32(lo1, b), hi1 = vmaxnmq_f32(hi1, b);
    }
    for (; k < full4; k += 4) {
      const float32x4_t a = load_row<kMul>(row, mul, k);
      lo0 = vminnmq_f32(lo0, a), hi0 = vmaxnmq_f32(hi0, a);
    }
    float lo = vminnmvq_f32(vminnmq_f32(lo0, lo1)), hi = vmaxnmvq_f32(vmaxnmq_f32(hi0, hi1));
    for (; k < K; ++k) {
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
    const float32x4_t vinv = vdupq_n_f32(inv);
    const int32x4_t vzp = vdupq_n_s32(zp);
    for (k = 0; k < full16; k += 16) {
      const int32x4_t a = quantize4(load_row<kMul>(row, mul, k), vinv, vzp);
      const int32x4_t b = quantize4(load_row<kMul>(row, mul, k + 4), vinv, vzp);
      const int32x4_t c = quantize4(load_row<kMul>(row, mul, k + 8), vinv, vzp);
      const int32x4_t d = quantize4(load_row<kMul>(row, mul, k + 12), vinv, vzp);
      vst1q_u8(q + k, narrow16(a, b, c, d));
    }
    for (; k < full4; k += 4) {
      const int32x4_t a = quantize4(load_row<kMul>(row, mul, k), vinv, vzp);
      const uint32_t bytes = vgetq_lane_u32(vreinterpretq_u32_u8(narrow16(a, a, a, a)), 0);
      std::memcpy(q + k, &bytes, 4);
    }
    for (; k < K; ++k) {
      const float v = std::nearbyint(value(k) * inv) + static_cast<float>(zp);
      q[k] = std::isnan(v) ? uint8_t{0} : static_cast<uint8_t>(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
    }
    for (k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(zp);
    scale[m] = s;
    zero_point[m] = zp;
  }
}

}  // namespace

void qu8_quantize_rows__neon(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                             float* scale, int32_t* zero_point) {
  if (multipliers)
    quantize_rows<true>(M, K, X, ldx, multipliers, Q, ldq, scale, zero_point);
  else
    quantize_rows<false>(M, K, X, ldx, nullptr, Q, ldq, scale, zero_point);
}

}  // namespace encrt::kernels::arm
