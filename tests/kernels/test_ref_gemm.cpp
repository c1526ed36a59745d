// Reference GEMMs (fp32, fp16 weights, u8×s8) and their epilogues against double-precision
// matrix products computed from the unpacked (or half-rounded, or dequantized) weights.
//
// Tolerances are forward error bounds of the fp32 evaluation, with u = 2^-24:
//   dot product of K terms:   |err| <= 1.01 * K * u * Σ|a_k w_k|
//   + bias:                   + u * (|acc| + |bias|)
//   activation:               ReLU is 1-Lipschitz and exact; GELU is 1.13-Lipschitz and its fp32
//                             evaluation adds <= 4u(|x| + |gelu(x)|)
//   + residual:               + 2u * |result|
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "naive_math.h"

namespace {

using namespace encrt::kernels;
namespace naive = encrt::test_naive;

constexpr double kU = FLT_EPSILON / 2.0;  // unit roundoff of fp32
const int kSizes[] = {1, 2, 3, 5, 16, 17, 33};
constexpr float kSentinel = 99.5f;

enum class ResidualMode { kNone, kSeparate, kAliasC };

struct EpilogueCase {
  bool bias;
  Activation activation;
  ResidualMode residual;
  const char* name;
};

const EpilogueCase kEpilogues[] = {
    {false, Activation::kNone, ResidualMode::kNone, "plain"},
    {true, Activation::kNone, ResidualMode::kNone, "bias"},
    {true, Activation::kRelu, ResidualMode::kNone, "bias+relu"},
    {true, Activation::kGelu, ResidualMode::kNone, "bias+gelu"},
    {false, Activation::kGelu, ResidualMode::kSeparate, "gelu+residual"},
    {true, Activation::kRelu, ResidualMode::kSeparate, "bias+relu+residual"},
    {true, Activation::kNone, ResidualMode::kAliasC, "bias+residual aliasing C"},
    {true, Activation::kGelu, ResidualMode::kAliasC, "bias+gelu+residual aliasing C"},
};

// Expected value and error bound of one output, given the exact pre-epilogue value `acc`, the
// bound `acc_err` on the kernel's error in it, and the epilogue inputs.
struct Expected {
  double value;
  double tolerance;
};

Expected apply_epilogue(double acc, double acc_err, const EpilogueCase& ec, double bias, double residual) {
  double x = acc;
  double err = acc_err;
  if (ec.bias) {
    x += bias;
    err += kU * (std::fabs(acc) + std::fabs(bias));
  }
  double y = x;
  if (ec.activation == Activation::kRelu) {
    y = x > 0.0 ? x : 0.0;
  } else if (ec.activation == Activation::kGelu) {
    y = naive::gelu(x);
    err = 1.13 * err + 4.0 * kU * (std::fabs(x) + std::fabs(y));
  }
  if (ec.residual != ResidualMode::kNone) {
    y += residual;
    err += 2.0 * kU * (std::fabs(y) + std::fabs(residual));
  }
  return {y, err};
}

// Shared driver: A [M, lda] with NaN beyond K (must never be read), C [M, ldc] with a sentinel
// beyond N (must never be written). `exact` gives the double value of Σ_k a w for (m, n) and the
// bound on the kernel's error in it; `run` calls the kernel under test.
template <typename ExactFn, typename RunFn>
void check_gemm(int M, int N, const EpilogueCase& ec, uint32_t seed, ExactFn exact, RunFn run) {
  const int ldc = N + 5, ldr = N + 2;
  const std::vector<float> bias = naive::random_floats(N, -1.0f, 1.0f, seed + 11);
  const std::vector<float> residual_values =
      naive::random_floats(static_cast<size_t>(M) * N, -2.0f, 2.0f, seed + 12);

  std::vector<float> C(static_cast<size_t>(M) * ldc, kSentinel);
  std::vector<float> R(static_cast<size_t>(M) * ldr, std::numeric_limits<float>::quiet_NaN());
  GemmEpilogue ep;
  ep.bias = ec.bias ? bias.data() : nullptr;
  ep.activation = ec.activation;
  if (ec.residual == ResidualMode::kSeparate) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) R[static_cast<size_t>(m) * ldr + n] = residual_values[static_cast<size_t>(m) * N + n];
    ep.residual = R.data();
    ep.ldr = ldr;
  } else if (ec.residual == ResidualMode::kAliasC) {
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) C[static_cast<size_t>(m) * ldc + n] = residual_values[static_cast<size_t>(m) * N + n];
    ep.residual = C.data();
    ep.ldr = ldc;
  }

  run(C.data(), ldc, ep);

  double worst_ratio = 0.0;
  std::string worst;
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double acc = 0.0, acc_err = 0.0;
      exact(m, n, &acc, &acc_err);
      const Expected e = apply_epilogue(acc, acc_err, ec, bias[n], residual_values[static_cast<size_t>(m) * N + n]);
      const double got = C[static_cast<size_t>(m) * ldc + n];
      const double err = std::fabs(got - e.value);
      const double ratio = std::isnan(got) ? INFINITY : err / (e.tolerance + 1e-30);
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " got=" + std::to_string(got) +
                " want=" + std::to_string(e.value) + " tol=" + std::to_string(e.tolerance);
      }
    }
    for (int n = N; n < ldc; ++n) REQUIRE(C[static_cast<size_t>(m) * ldc + n] == kSentinel);
  }
  INFO("epilogue " << ec.name << ", worst " << worst);
  REQUIRE(worst_ratio <= 1.0);
}

// Row-major A [M, lda] filled with values in [-1, 1] and NaN in the K..lda-1 gap.
std::vector<float> make_activations(int M, int K, int lda, uint32_t seed) {
  const std::vector<float> vals = naive::random_floats(static_cast<size_t>(M) * K, -1.0f, 1.0f, seed);
  std::vector<float> A(static_cast<size_t>(M) * lda, std::numeric_limits<float>::quiet_NaN());
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) A[static_cast<size_t>(m) * lda + k] = vals[static_cast<size_t>(m) * K + k];
  return A;
}

}  // namespace

TEST_CASE("ref gelu and apply_activation vs double formula", "[ref][gemm]") {
  double worst_ratio = 0.0;
  float worst_x = 0.0f;
  for (int i = -4000; i <= 4000; ++i) {
    const float x = static_cast<float>(i) * 0.0025f;  // [-10, 10]
    const double want = naive::gelu(x);
    const double got = encrt::kernels::ref::gelu(x);
    const double tol = 4.0 * kU * (std::fabs(static_cast<double>(x)) + std::fabs(want)) + 1e-37;
    const double ratio = std::fabs(got - want) / tol;
    if (ratio > worst_ratio) worst_ratio = ratio, worst_x = x;
    REQUIRE(encrt::kernels::ref::apply_activation(x, Activation::kGelu) == static_cast<float>(got));
    REQUIRE(encrt::kernels::ref::apply_activation(x, Activation::kNone) == x);
    REQUIRE(encrt::kernels::ref::apply_activation(x, Activation::kRelu) == (x > 0.0f ? x : 0.0f));
  }
  INFO("worst x " << worst_x);
  REQUIRE(worst_ratio <= 1.0);
  REQUIRE(encrt::kernels::ref::gelu(0.0f) == 0.0f);
  // Known values: gelu(1) = 0.8413447460685429, gelu(-1) = -0.15865525393145707.
  REQUIRE(std::fabs(encrt::kernels::ref::gelu(1.0f) - 0.8413447460685429) <= 2e-7);
  REQUIRE(std::fabs(encrt::kernels::ref::gelu(-1.0f) + 0.15865525393145707) <= 2e-7);
  REQUIRE(encrt::kernels::ref::gelu(-30.0f) == 0.0f);
  REQUIRE(encrt::kernels::ref::gelu(30.0f) == 30.0f);
}

TEST_CASE("ref gemm_f32 vs double matmul with all epilogues on odd shapes and strides", "[ref][gemm]") {
  uint32_t seed = 1000;
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) {
        CAPTURE(M, N, K);
        const int lda = K + 3;
        const std::vector<float> A = make_activations(M, K, lda, seed++);
        const std::vector<float> W = naive::random_floats(static_cast<size_t>(N) * K, -1.0f, 1.0f, seed++);
        std::vector<float> packed(panel_f32_size(N, K));
        ref::pack_weights_f32(N, K, W.data(), packed.data());
        auto exact = [&](int m, int n, double* acc, double* err) {
          double s = 0.0, sa = 0.0;
          for (int k = 0; k < K; ++k) {
            const double p = static_cast<double>(A[static_cast<size_t>(m) * lda + k]) * W[static_cast<size_t>(n) * K + k];
            s += p;
            sa += std::fabs(p);
          }
          *acc = s;
          *err = 1.01 * K * kU * sa;
        };
        for (const EpilogueCase& ec : kEpilogues) {
          check_gemm(M, N, ec, seed, exact, [&](float* C, int ldc, const GemmEpilogue& ep) {
            ref::gemm_f32(M, N, K, A.data(), lda, packed.data(), C, ldc, ep);
          });
        }
      }
}

TEST_CASE("ref gemm_f32 sums in fp32 (not exact arithmetic)", "[ref][gemm]") {
  // 1 + 2^-24 - 1 = 0 in fp32 summed left to right, 2^-24 exactly in double: the reference is
  // documented to accumulate in fp32, k = 0..K-1.
  const int M = 1, N = 1, K = 3;
  const float A[K] = {1.0f, 1.0f, -1.0f};
  const float W[K] = {1.0f, 0x1p-24f, 1.0f};
  std::vector<float> packed(panel_f32_size(N, K));
  ref::pack_weights_f32(N, K, W, packed.data());
  float C = -1.0f;
  ref::gemm_f32(M, N, K, A, K, packed.data(), &C, N, GemmEpilogue{});
  REQUIRE(C == 0.0f);
}

TEST_CASE("ref gemm_f16 vs double matmul on half-rounded weights", "[ref][gemm]") {
  uint32_t seed = 5000;
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) {
        CAPTURE(M, N, K);
        const int lda = K + 1;
        const std::vector<float> A = make_activations(M, K, lda, seed++);
        const std::vector<float> W = naive::random_floats(static_cast<size_t>(N) * K, -1.0f, 1.0f, seed++);
        std::vector<uint16_t> packed(panel_f32_size(N, K));
        ref::pack_weights_f16(N, K, W.data(), packed.data());
        std::vector<double> w_half(W.size());
        for (size_t i = 0; i < W.size(); ++i) w_half[i] = naive::naive_half_value(naive::naive_double_to_half(W[i]));
        auto exact = [&](int m, int n, double* acc, double* err) {
          double s = 0.0, sa = 0.0;
          for (int k = 0; k < K; ++k) {
            const double p = static_cast<double>(A[static_cast<size_t>(m) * lda + k]) * w_half[static_cast<size_t>(n) * K + k];
            s += p;
            sa += std::fabs(p);
          }
          *acc = s;
          *err = 1.01 * K * kU * sa;
        };
        for (const EpilogueCase& ec : kEpilogues) {
          check_gemm(M, N, ec, seed, exact, [&](float* C, int ldc, const GemmEpilogue& ep) {
            ref::gemm_f16(M, N, K, A.data(), lda, packed.data(), C, ldc, ep);
          });
        }
      }
}

namespace {

// Activations for the u8s8 tests: random rows plus special rows (all zero, negative only,
// positive only, constant) so every quantizer branch feeds the GEMM.
std::vector<float> make_u8_activations(int M, int K, int lda, uint32_t seed) {
  std::vector<float> A = make_activations(M, K, lda, seed);
  auto row = [&](int m) { return A.data() + static_cast<size_t>(m) * lda; };
  if (M > 1) std::fill(row(1), row(1) + K, 0.0f);
  if (M > 2)
    for (int k = 0; k < K; ++k) row(2)[k] = -std::fabs(row(2)[k]) - 0.1f;
  if (M > 3)
    for (int k = 0; k < K; ++k) row(3)[k] = std::fabs(row(3)[k]);
  if (M > 4) std::fill(row(4), row(4) + K, 0.37f);
  return A;
}

}  // namespace

TEST_CASE("ref gemm_u8s8 vs double on dequantized operands and vs the unquantized product",
          "[ref][gemm]") {
  uint32_t seed = 9000;
  double worst_bound_use = 0.0;  // max over outputs of |C - exact fp64| / stated bound
  for (int M : kSizes)
    for (int N : kSizes)
      for (int K : kSizes) {
        CAPTURE(M, N, K);
        const int lda = K + 2;
        const int ldq = round_up(K, kPanelK) + 8;
        const std::vector<float> A = make_u8_activations(M, K, lda, seed++);
        std::vector<float> W = naive::random_floats(static_cast<size_t>(N) * K, -1.0f, 1.0f, seed++);
        if (N > 1) std::fill(W.begin() + K, W.begin() + 2 * K, 0.0f);  // all-zero output channel

        std::vector<uint8_t> Q(static_cast<size_t>(M) * ldq, 0);
        std::vector<float> a_scale(M);
        std::vector<int32_t> a_zp(M);
        ref::quantize_rows_u8(M, K, A.data(), lda, nullptr, Q.data(), ldq, a_scale.data(), a_zp.data());
        // Padding bytes' values must not matter (their weights are zero): overwrite them.
        for (int m = 0; m < M; ++m)
          for (int k = K; k < ldq; ++k) Q[static_cast<size_t>(m) * ldq + k] = static_cast<uint8_t>(0xab + k);

        std::vector<int8_t> Wq(panel_i8_size(N, K));
        std::vector<float> w_scale(N);
        std::vector<int32_t> w_sum(N);
        ref::quantize_pack_weights_i8(N, K, W.data(), Wq.data(), w_scale.data(), w_sum.data());
        const std::vector<int8_t> w_int = naive::naive_unpack_panel_n16k4(N, K, Wq.data());

        // Dequantized operands in double.
        std::vector<double> a_deq(static_cast<size_t>(M) * K), w_deq(static_cast<size_t>(N) * K);
        for (int m = 0; m < M; ++m)
          for (int k = 0; k < K; ++k)
            a_deq[static_cast<size_t>(m) * K + k] =
                static_cast<double>(a_scale[m]) * (Q[static_cast<size_t>(m) * ldq + k] - a_zp[m]);
        for (int n = 0; n < N; ++n)
          for (int k = 0; k < K; ++k)
            w_deq[static_cast<size_t>(n) * K + k] = static_cast<double>(w_scale[n]) * w_int[static_cast<size_t>(n) * K + k];

        QuantizedRows rows;
        rows.data = Q.data();
        rows.ld = ldq;
        rows.scale = a_scale.data();
        rows.zero_point = a_zp.data();

        // The integer part is exact, then two fp32 multiplies: relative error <= 2u (plus the
        // double evaluation's own rounding, bounded by K 2^-53 Σ|terms|).
        auto exact = [&](int m, int n, double* acc, double* err) {
          double s = 0.0, sa = 0.0;
          for (int k = 0; k < K; ++k) {
            const double p = a_deq[static_cast<size_t>(m) * K + k] * w_deq[static_cast<size_t>(n) * K + k];
            s += p;
            sa += std::fabs(p);
          }
          *acc = s;
          *err = 2.01 * kU * std::fabs(s) + K * 0x1p-52 * sa;
        };
        for (const EpilogueCase& ec : kEpilogues) {
          check_gemm(M, N, ec, seed, exact, [&](float* C, int ldc, const GemmEpilogue& ep) {
            ref::gemm_u8s8(M, N, K, rows, Wq.data(), w_sum.data(), w_scale.data(), C, ldc, ep);
          });
        }

        // Against the unquantized fp64 product: per element
        //   |Σ a w - Σ ã w̃| <= Σ_k |a - ã| |w| + |ã| |w - w̃|
        //                   <= K (sa/2 max|w| + sw/2 (max|a| + sa/2))
        // with max over the row of A / row of W (quantization steps are half a scale, plus
        // 1e-4 of a step for the fp32 rounding of 1/scale), and 2u|C| for the kernel's rounding.
        std::vector<float> C(static_cast<size_t>(M) * N);
        ref::gemm_u8s8(M, N, K, rows, Wq.data(), w_sum.data(), w_scale.data(), C.data(), N, GemmEpilogue{});
        for (int m = 0; m < M; ++m) {
          double amax = 0.0;
          for (int k = 0; k < K; ++k) amax = std::max(amax, std::fabs(static_cast<double>(A[static_cast<size_t>(m) * lda + k])));
          for (int n = 0; n < N; ++n) {
            double wmax = 0.0, exact_product = 0.0;
            for (int k = 0; k < K; ++k) {
              wmax = std::max(wmax, std::fabs(static_cast<double>(W[static_cast<size_t>(n) * K + k])));
              exact_product += static_cast<double>(A[static_cast<size_t>(m) * lda + k]) * W[static_cast<size_t>(n) * K + k];
            }
            const double half_step = 0.5 + 1e-4;
            const double sa = a_scale[m], sw = w_scale[n];
            const double bound = K * (sa * half_step * wmax + sw * half_step * (amax + sa * half_step)) +
                                 2.01 * kU * std::fabs(C[static_cast<size_t>(m) * N + n]) + 1e-30;
            const double err = std::fabs(C[static_cast<size_t>(m) * N + n] - exact_product);
            CAPTURE(m, n, err, bound);
            REQUIRE(err <= bound);
            worst_bound_use = std::max(worst_bound_use, err / bound);
          }
        }
      }
  // The bound is a worst case; random data must use a visible part of it but never exceed it.
  INFO("max |err| / bound = " << worst_bound_use);
  REQUIRE(worst_bound_use > 0.01);
}

TEST_CASE("ref gemm_u8s8 on hand-computed integers", "[ref][gemm]") {
  // One row quantized by hand: scale 2, zero point 3; weights scale 0.5.
  const int M = 1, N = 2, K = 5;
  const uint8_t q[8] = {3, 4, 10, 0, 255, 77, 77, 77};  // x = 2 * (q - 3)
  const float a_scale = 2.0f;
  const int32_t a_zp = 3;
  const int8_t w_rows[N][K] = {{1, -2, 3, -4, 5}, {-127, 127, 0, 1, -1}};
  std::vector<int8_t> Wq(panel_i8_size(N, K), 0);
  int32_t w_sum[N] = {0, 0};
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      Wq[panel_i8_index(n, k, K)] = w_rows[n][k];
      w_sum[n] += w_rows[n][k];
    }
  const float w_scale[N] = {0.5f, 0.25f};
  QuantizedRows rows;
  rows.data = q;
  rows.ld = 8;
  rows.scale = &a_scale;
  rows.zero_point = &a_zp;
  float C[N] = {0.0f, 0.0f};
  ref::gemm_u8s8(M, N, K, rows, Wq.data(), w_sum, w_scale, C, N, GemmEpilogue{});
  // x = {0, 2, 14, -6, 504}
  // n=0: 0 - 4 + 42 + 24 + 2520 = 2582, * 0.5 = 1291
  // n=1: 0 + 254 + 0 - 6 - 504 = -256, * 0.25 = -64
  REQUIRE(C[0] == 1291.0f);
  REQUIRE(C[1] == -64.0f);
}

namespace {

// The error bound of fp16 arithmetic in blocks (kernel_types.h): a rounding of a (2^-11 relative),
// at most kF16ArithBlockK / 2 fp16 additions per lane and block (each 2^-11 of that lane's
// partial sum, itself bounded by the block's Σ|a·w|), underflow to half's subnormal grid (2^-25
// per step), and the fp32 block sums.
double f16_arith_bound(int K, double magnitude) {
  const double u_half = std::ldexp(1.0, -11);
  const int blocks = (K + kF16ArithBlockK - 1) / kF16ArithBlockK;
  return (kF16ArithBlockK / 2 + 2) * u_half * magnitude + K * std::ldexp(1.0, -25) +
         (blocks + 2) * kU * magnitude;
}

}  // namespace

TEST_CASE("ref gemm_f16_arith vs double matmul within the fp16 block bound", "[ref][gemm]") {
  uint32_t seed = 7000;
  const int kDepths[] = {1, 2, 3, 17, 63, 64, 65, 130, 385};
  double sum_sq_err = 0.0, sum_sq = 0.0;
  for (int M : {1, 3, 5})
    for (int N : {1, 17, 33})
      for (int K : kDepths) {
        CAPTURE(M, N, K);
        const int lda = K + 1;
        const std::vector<float> A = make_activations(M, K, lda, seed++);
        const std::vector<float> W = naive::random_floats(static_cast<size_t>(N) * K, -1.0f, 1.0f, seed++);
        std::vector<uint16_t> packed(panel_f32_size(N, K));
        ref::pack_weights_f16(N, K, W.data(), packed.data());
        std::vector<double> w_half(W.size());
        for (size_t i = 0; i < W.size(); ++i) w_half[i] = naive::naive_half_value(naive::naive_double_to_half(W[i]));
        auto exact = [&](int m, int n, double* acc, double* err) {
          double s = 0.0, sa = 0.0;
          for (int k = 0; k < K; ++k) {
            const double p = static_cast<double>(A[static_cast<size_t>(m) * lda + k]) * w_half[static_cast<size_t>(n) * K + k];
            s += p;
            sa += std::fabs(p);
          }
          *acc = s;
          *err = f16_arith_bound(K, sa);
        };
        for (const EpilogueCase& ec : kEpilogues) {
          check_gemm(M, N, ec, seed, exact, [&](float* C, int ldc, const GemmEpilogue& ep) {
            ref::gemm_f16_arith(M, N, K, A.data(), lda, packed.data(), C, ldc, ep);
          });
        }
        // The typical error, not only the bound: accumulate it over the plain outputs.
        std::vector<float> C(static_cast<size_t>(M) * N);
        ref::gemm_f16_arith(M, N, K, A.data(), lda, packed.data(), C.data(), N, GemmEpilogue{});
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            double acc, err;
            exact(m, n, &acc, &err);
            sum_sq_err += (C[static_cast<size_t>(m) * N + n] - acc) * (C[static_cast<size_t>(m) * N + n] - acc);
            sum_sq += acc * acc;
          }
      }
  const double relative_rms = std::sqrt(sum_sq_err / sum_sq);
  INFO("relative RMS error of fp16 block arithmetic: " << relative_rms);
  CHECK(relative_rms < 2e-3);  // measured: 8.9e-4 (about 2 × 2^-11)
}

TEST_CASE("ref gemm_f16_arith rounds in fp16 within a block and sums blocks in fp32", "[ref][gemm]") {
  // One row of ones against one column: W(0, 0) = 1024, W(0, 2) = 0.5, W(0, 64) = 0.5.
  // Block 0, even lane: 1024, then 1024 + 0.5 = 1024.5, a tie in half (spacing 1 at 1024) that
  // rounds to the even 1024. Block 1, even lane: 0.5. fp32: 1024 + 0.5 = 1024.5 (exact: 1025).
  const int K = 66;
  std::vector<float> a(K, 1.0f), w(K, 0.0f);
  w[0] = 1024.0f, w[2] = 0.5f, w[64] = 0.5f;
  std::vector<uint16_t> packed(panel_f32_size(1, K));
  ref::pack_weights_f16(1, K, w.data(), packed.data());
  float c = 0.0f;
  ref::gemm_f16_arith(1, 1, K, a.data(), K, packed.data(), &c, 1, GemmEpilogue{});
  CHECK(c == 1024.5f);
  // The odd lane is separate: moving 0.5 to k = 3 keeps 1024 exact in the even lane and 0.5 in
  // the odd one: 1024 + 0.5 + 0.5 = 1025.
  w[2] = 0.0f, w[3] = 0.5f;
  ref::pack_weights_f16(1, K, w.data(), packed.data());
  ref::gemm_f16_arith(1, 1, K, a.data(), K, packed.data(), &c, 1, GemmEpilogue{});
  CHECK(c == 1025.0f);
}

TEST_CASE("ref gemm_f16_arith falls back to fp32 when fp16 overflows", "[ref][gemm]") {
  // 300 · 300 = 90000 > 65504: every fp16 product overflows; the fp32 result is exact.
  const int K = 8;
  std::vector<float> a(K, 300.0f), w(K, 300.0f);
  std::vector<uint16_t> packed(panel_f32_size(1, K));
  ref::pack_weights_f16(1, K, w.data(), packed.data());
  float c = 0.0f;
  ref::gemm_f16_arith(1, 1, K, a.data(), K, packed.data(), &c, 1, GemmEpilogue{});
  CHECK(c == 720000.0f);
}
