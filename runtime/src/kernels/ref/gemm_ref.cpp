// Reference GEMMs over packed weights: one output at a time, sums in the order k = 0..K-1.
#include <algorithm>
#include <cmath>

#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

void gelu_rows(int n, const float* x, float* y) {
  for (int i = 0; i < n; ++i) y[i] = gelu(x[i]);
}

float apply_activation(float x, Activation act) {
  switch (act) {
    case Activation::kRelu:  // NaN stays NaN, as in PyTorch
      return std::isnan(x) ? x : x > 0.0f ? x : 0.0f;
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

namespace {
// v rounded to the nearest IEEE half (ties to even), as a float; ±inf beyond half's range. The
// callers pass a·w + h for halves a, w, h, which double holds exactly or (when |a·w| is far below
// h's last bit) close enough that the half rounding cannot change, so this is the correctly
// rounded fp16 fused multiply-add.
float round_to_half(double v) {
  if (std::isnan(v) || v == 0.0) return static_cast<float>(v);
  const double mag = std::fabs(v);
  int e;
  std::frexp(mag, &e);                             // mag = f · 2^e, f in [0.5, 1)
  const int exponent = std::max(e - 1, -14);       // subnormals share 2^-14's quantum
  const double quantum = std::ldexp(1.0, exponent - 10);
  double r = std::nearbyint(mag / quantum) * quantum;  // ties to even
  if (r > 65504.0) r = INFINITY;
  return static_cast<float>(std::copysign(r, v));
}
}  // namespace

uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c) {
  const double exact = static_cast<double>(half_to_float(a)) * half_to_float(b) + half_to_float(c);
  return float_to_half(round_to_half(exact));  // a half value held in a float converts exactly
}

void gemm_f16_arith(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                    const GemmEpilogue& ep) {
  for (int m = 0; m < M; ++m) {
    const float* a = A + static_cast<size_t>(m) * lda;
    for (int n = 0; n < N; ++n) {
      float sum[2] = {0.0f, 0.0f};  // fp32 sums of the even-k and odd-k lanes
      for (int k0 = 0; k0 < K; k0 += kF16ArithBlockK) {
        float h[2] = {0.0f, 0.0f};  // the lanes' fp16 partial sums (held as floats)
        const int k1 = std::min(K, k0 + kF16ArithBlockK);
        for (int k = k0; k < k1; ++k) {
          const double ak = half_to_float(float_to_half(a[k]));
          const double wk = half_to_float(W[panel_f32_index(n, k, K)]);
          h[k & 1] = round_to_half(ak * wk + h[k & 1]);
        }
        sum[0] += h[0];
        sum[1] += h[1];
      }
      float x = sum[0] + sum[1];
      if (!std::isfinite(x)) {  // an fp16 overflow (or a non-finite input): fp32 arithmetic
        x = 0.0f;
        for (int k = 0; k < K; ++k) x += a[k] * half_to_float(W[panel_f32_index(n, k, K)]);
      }
      store(ep, x, m, n, C, ldc);
    }
  }
}

void gemm_u8s8(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  for (int m = 0; m < M; ++m) {
    const uint8_t* q = A.data + static_cast<size_t>(m) * A.ld;
    for (int n = 0; n < N; ++n) {
      // Modulo 2^32 in unsigned arithmetic (defined), as the SIMD kernels' 32-bit adds and
      // multiplies: with column sums that match the weights (the loader checks them) the exact
      // value only leaves int32 past K = 32,896 (2 · 255 · 128 · K > 2^31).
      uint32_t acc = 0;
      for (int k = 0; k < K; ++k)
        acc += static_cast<uint32_t>(static_cast<int32_t>(q[k]) * W[panel_i8_index(n, k, K)]);
      acc -= static_cast<uint32_t>(A.zero_point[m]) * static_cast<uint32_t>(w_sum[n]);
      const float value = static_cast<float>(static_cast<int32_t>(acc)) * A.scale[m] * w_scale[n];
      store(ep, value, m, n, C, ldc);
    }
  }
}

}  // namespace encrt::kernels::ref
