// Reference quantization of activations (per row, asymmetric uint8) and of weights (per output
// channel, symmetric int8), and weight packing. The rounding is exactly as kernel_types.h says.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

void quantize_rows_u8(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                      float* scale, int32_t* zero_point) {
  const int Kp = round_up(K, kPanelK);
  for (int m = 0; m < M; ++m) {
    const float* row = X + static_cast<size_t>(m) * ldx;
    auto x = [&](int k) { return multipliers ? row[k] * multipliers[k] : row[k]; };
    uint8_t* q = Q + static_cast<size_t>(m) * ldq;
    float lo = 0.0f, hi = 0.0f;
    for (int k = 0; k < K; ++k) {
      lo = std::min(lo, x(k));
      hi = std::max(hi, x(k));
    }
    const float s = (hi - lo) / 255.0f;
    const float inv = 1.0f / s;
    // The rows the formula cannot take (kernel_types.h): no range (or one too small for 1 / s),
    // and a range that is not finite.
    if (!(inv <= kFloatMax) || !(s <= kFloatMax)) {
      scale[m] = inv <= kFloatMax ? kQuietNaN : 1.0f;
      zero_point[m] = 0;
      std::memset(q, 0, static_cast<size_t>(Kp));
      continue;
    }
    const int32_t zp = static_cast<int32_t>(std::clamp(std::nearbyint(-lo * inv), 0.0f, 255.0f));
    for (int k = 0; k < K; ++k) {
      const float v = std::nearbyint(x(k) * inv) + static_cast<float>(zp);
      q[k] = std::isnan(v) ? uint8_t{0} : static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
    }
    for (int k = K; k < Kp; ++k) q[k] = static_cast<uint8_t>(zp);
    scale[m] = s;
    zero_point[m] = zp;
  }
}

void pack_weights_f32(int N, int K, const float* W, float* packed) {
  std::memset(packed, 0, panel_f32_size(N, K) * sizeof(float));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) packed[panel_f32_index(n, k, K)] = W[static_cast<size_t>(n) * K + k];
}

void pack_weights_f16(int N, int K, const float* W, uint16_t* packed) {
  std::memset(packed, 0, panel_f32_size(N, K) * sizeof(uint16_t));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      packed[panel_f32_index(n, k, K)] = float_to_half(W[static_cast<size_t>(n) * K + k]);
}

void quantize_pack_weights_i8(int N, int K, const float* W, int8_t* packed, float* scale,
                              int32_t* column_sum, int max_level) {
  std::memset(packed, 0, panel_i8_size(N, K));
  for (int n = 0; n < N; ++n) {
    const float* w = W + static_cast<size_t>(n) * K;
    float amax = 0.0f;
    for (int k = 0; k < K; ++k) amax = std::max(amax, std::fabs(w[k]));
    // For a row of tiny weights (max |w| below max_level · FLT_MIN) amax / max_level is subnormal
    // or 0: the scale is then FLT_MIN, a positive normal number (the runtime refuses any other)
    // with a finite 1/s, and the weights round to the multiples of it they are near.
    const float level = static_cast<float>(max_level);
    const float s = amax > 0.0f ? std::max(amax / level, std::numeric_limits<float>::min()) : 1.0f;
    const float inv = 1.0f / s;
    int32_t sum = 0;
    for (int k = 0; k < K; ++k) {
      const float v = std::clamp(std::nearbyint(w[k] * inv), -level, level);
      const int8_t q = std::isnan(v) ? int8_t{0} : static_cast<int8_t>(v);
      packed[panel_i8_index(n, k, K)] = q;
      sum += q;
    }
    scale[n] = s;
    column_sum[n] = sum;
  }
}

}  // namespace encrt::kernels::ref
