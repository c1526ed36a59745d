// Reference GEMMs over packed weights. What each output is: the sum over k = 0..K-1, in that order,
// of a[k] · w[k] (fp32 products and adds, no fused multiply-add), then the epilogue. They walk the
// weights a panel (kPanelN columns) and a few rows at a time, so that each weight is read (and an
// fp16 one widened) once for those rows and the panel's sums, independent of each other, can run
// side by side; each sum still takes its terms one at a time in k order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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

namespace {
constexpr int kRowsAtOnce = 4;

// C[m, n] for `Rows` rows from m0 and the columns of the panel at n0. load(n0, k, w) writes the
// panel's kPanelN weights of depth k as floats (columns past N are the panel's padding: summed,
// never stored).
template <int Rows, typename LoadPanelRow>
void panel_rows(int m0, int n0, int N, int K, const float* A, int lda, LoadPanelRow load, float* C, int ldc,
                const GemmEpilogue& ep) {
  float sum[Rows][kPanelN] = {};
  for (int k = 0; k < K; ++k) {
    float w[kPanelN];
    load(n0, k, w);
    for (int r = 0; r < Rows; ++r) {
      const float a = A[static_cast<size_t>(m0 + r) * lda + k];
      for (int j = 0; j < kPanelN; ++j) sum[r][j] += a * w[j];
    }
  }
  const int width = std::min(kPanelN, N - n0);
  for (int r = 0; r < Rows; ++r)
    for (int j = 0; j < width; ++j) store(ep, sum[r][j], m0 + r, n0 + j, C, ldc);
}

template <typename LoadPanelRow>
void gemm_by_panels(int M, int N, int K, const float* A, int lda, LoadPanelRow load, float* C, int ldc,
                    const GemmEpilogue& ep) {
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    int m0 = 0;
    for (; m0 + kRowsAtOnce <= M; m0 += kRowsAtOnce) panel_rows<kRowsAtOnce>(m0, n0, N, K, A, lda, load, C, ldc, ep);
    for (; m0 < M; ++m0) panel_rows<1>(m0, n0, N, K, A, lda, load, C, ldc, ep);
  }
}
}  // namespace

void gemm_f32(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
              const GemmEpilogue& ep) {
  auto load = [W, K](int n0, int k, float* w) {
    const float* from = W + panel_f32_index(n0, k, K);
    for (int j = 0; j < kPanelN; ++j) w[j] = from[j];
  };
  gemm_by_panels(M, N, K, A, lda, load, C, ldc, ep);
}

void gemm_f16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
              const GemmEpilogue& ep) {
  auto load = [W, K](int n0, int k, float* w) {
    const uint16_t* from = W + panel_f32_index(n0, k, K);
    for (int j = 0; j < kPanelN; ++j) w[j] = half_to_float(from[j]);
  };
  gemm_by_panels(M, N, K, A, lda, load, C, ldc, ep);
}

namespace {
// v rounded to the nearest IEEE half (ties to even), as a float; ±inf beyond half's range. The
// callers pass a·w + h for halves a, w, h, which double holds exactly or (when |a·w| is far below
// h's last bit) close enough that the half rounding cannot change, so this is the correctly
// rounded fp16 fused multiply-add.
float round_to_half(double v) {
  if (std::isnan(v) || v == 0.0) return static_cast<float>(v);
  const double mag = std::fabs(v);
  uint64_t bits;
  std::memcpy(&bits, &mag, sizeof bits);
  const int e = static_cast<int>(bits >> 52) - 1023;  // mag = 1.f · 2^e (e = -1023: far below half's range)
  const int exponent = std::max(e, -14);              // subnormals share 2^-14's quantum
  const uint64_t quantum_bits = static_cast<uint64_t>(exponent - 10 + 1023) << 52;
  double quantum;                                     // 2^(exponent - 10), exactly
  std::memcpy(&quantum, &quantum_bits, sizeof quantum);
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

namespace {
// gemm_u8s8's sums for `Rows` rows from m0 and the columns of the panel at n0, then its epilogue.
template <int Rows>
void panel_rows_u8s8(int m0, int n0, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                     const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  uint32_t acc[Rows][kPanelN] = {};
  for (int k = 0; k < K; ++k) {
    int32_t w[kPanelN];
    const int8_t* from = W + panel_i8_index(n0, k, K);  // column j's weight is kPanelK bytes on
    for (int j = 0; j < kPanelN; ++j) w[j] = from[j * kPanelK];
    for (int r = 0; r < Rows; ++r) {
      const int32_t q = A.data[static_cast<size_t>(m0 + r) * A.ld + k];
      for (int j = 0; j < kPanelN; ++j) acc[r][j] += static_cast<uint32_t>(q * w[j]);
    }
  }
  const int width = std::min(kPanelN, N - n0);
  for (int r = 0; r < Rows; ++r) {
    const int m = m0 + r;
    for (int j = 0; j < width; ++j) {
      const int n = n0 + j;
      const uint32_t sum = acc[r][j] - static_cast<uint32_t>(A.zero_point[m]) * static_cast<uint32_t>(w_sum[n]);
      const float value = static_cast<float>(static_cast<int32_t>(sum)) * A.scale[m] * w_scale[n];
      store(ep, value, m, n, C, ldc);
    }
  }
}
}  // namespace

void gemm_u8s8(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  // Modulo 2^32 in unsigned arithmetic (defined), as the SIMD kernels' 32-bit adds and
  // multiplies: with column sums that match the weights (the loader checks them) the exact
  // value only leaves int32 past K = 32,896 (2 · 255 · 128 · K > 2^31). A panel and a few rows
  // at a time, as the float GEMMs (integer sums: their order does not matter).
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    int m0 = 0;
    for (; m0 + kRowsAtOnce <= M; m0 += kRowsAtOnce)
      panel_rows_u8s8<kRowsAtOnce>(m0, n0, N, K, A, W, w_sum, w_scale, C, ldc, ep);
    for (; m0 < M; ++m0) panel_rows_u8s8<1>(m0, n0, N, K, A, W, w_sum, w_scale, C, ldc, ep);
  }
}

}  // namespace encrt::kernels::ref
