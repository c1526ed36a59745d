// Reference GEMMs over packed weights: one output at a time, sums in the order k = 0..K-1.
#include <cmath>

#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

float apply_activation(float x, Activation act) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Activation::kGelu:
      return gelu(x);
    case Activation::kNone:
      break;
  }
  return x;
}

namespace {
inline void store(const GemmEpilogue& ep, float acc, int m, int n, float* C, int ldc) {
  if (ep.bias) acc += ep.bias[n];
  acc = apply_activation(acc, ep.activation);
  if (ep.residual) acc += ep.residual[static_cast<size_t>(m) * ep.ldr + n];
  C[static_cast<size_t>(m) * ldc + n] = acc;
}
}  // namespace

void gemm_f32(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
              const GemmEpilogue& ep) {
  for (int m = 0; m < M; ++m) {
    const float* a = A + static_cast<size_t>(m) * lda;
    for (int n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[k] * W[panel_f32_index(n, k, K)];
      store(ep, acc, m, n, C, ldc);
    }
  }
}

void gemm_f16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
              const GemmEpilogue& ep) {
  for (int m = 0; m < M; ++m) {
    const float* a = A + static_cast<size_t>(m) * lda;
    for (int n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += a[k] * half_to_float(W[panel_f32_index(n, k, K)]);
      store(ep, acc, m, n, C, ldc);
    }
  }
}

void gemm_u8s8(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  for (int m = 0; m < M; ++m) {
    const uint8_t* q = A.data + static_cast<size_t>(m) * A.ld;
    for (int n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int k = 0; k < K; ++k) acc += static_cast<int32_t>(q[k]) * W[panel_i8_index(n, k, K)];
      acc -= A.zero_point[m] * w_sum[n];
      const float value = static_cast<float>(acc) * A.scale[m] * w_scale[n];
      store(ep, value, m, n, C, ldc);
    }
  }
}

}  // namespace encrt::kernels::ref
