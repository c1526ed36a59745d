// Reference LayerNorm against the double formula (biased variance, eps inside the sqrt),
// including in-place use and the effect of eps on low-variance rows.
//
// Tolerance: the kernel's statistics are double; the output takes three fp32 roundings
// (normalized value, * gamma, + beta), so |err| <= 2.1u |x̂ γ| + 1.1u |y| with u = 2^-24.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/ref_kernels.h"
#include "naive_math.h"

namespace {

using namespace encrt::kernels;
namespace naive = encrt::test_naive;

constexpr double kU = FLT_EPSILON / 2.0;
const int kSizes[] = {1, 2, 3, 5, 16, 17, 33};
constexpr float kSentinel = -77.0f;

// Compares rows of Y [M, ldy] with the double formula applied to rows of X [M, ldx].
void check_rows(int M, int N, const std::vector<float>& X, int ldx, const std::vector<float>& gamma,
                const std::vector<float>& beta, float eps, const float* Y, int ldy) {
  const std::vector<double> g(gamma.begin(), gamma.end()), b(beta.begin(), beta.end());
  for (int m = 0; m < M; ++m) {
    std::vector<double> x(N);
    for (int n = 0; n < N; ++n) x[n] = X[static_cast<size_t>(m) * ldx + n];
    const std::vector<double> y = naive::layer_norm_row(x, g, b, eps);
    for (int n = 0; n < N; ++n) {
      const double got = Y[static_cast<size_t>(m) * ldy + n];
      const double normalized_times_gamma = y[n] - b[n];
      const double tol = 2.1 * kU * std::fabs(normalized_times_gamma) + 1.1 * kU * std::fabs(y[n]) + 1e-30;
      CAPTURE(m, n, got, y[n], tol);
      REQUIRE(std::fabs(got - y[n]) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("ref layer_norm vs double on strides and shapes", "[ref][layer_norm]") {
  uint32_t seed = 700;
  for (int M : kSizes)
    for (int N : kSizes)
      for (float eps : {1e-5f, 1e-12f}) {
        CAPTURE(M, N, eps);
        const int ldx = N + 2, ldy = N + 3;
        std::vector<float> X(static_cast<size_t>(M) * ldx, std::numeric_limits<float>::quiet_NaN());
        const std::vector<float> vals = naive::random_floats(static_cast<size_t>(M) * N, -4.0f, 6.0f, seed++);
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) X[static_cast<size_t>(m) * ldx + n] = vals[static_cast<size_t>(m) * N + n];
        const std::vector<float> gamma = naive::random_floats(N, 0.5f, 1.5f, seed++);
        const std::vector<float> beta = naive::random_floats(N, -0.5f, 0.5f, seed++);
        std::vector<float> Y(static_cast<size_t>(M) * ldy, kSentinel);
        ref::layer_norm(M, N, X.data(), ldx, gamma.data(), beta.data(), eps, Y.data(), ldy);
        check_rows(M, N, X, ldx, gamma, beta, eps, Y.data(), ldy);
        for (int m = 0; m < M; ++m)
          for (int n = N; n < ldy; ++n) REQUIRE(Y[static_cast<size_t>(m) * ldy + n] == kSentinel);
      }
}

TEST_CASE("ref layer_norm in place (X == Y)", "[ref][layer_norm]") {
  const int M = 5, N = 17, ld = 19;
  std::vector<float> X(static_cast<size_t>(M) * ld, 3.0f);
  const std::vector<float> vals = naive::random_floats(static_cast<size_t>(M) * N, -2.0f, 2.0f, 811);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) X[static_cast<size_t>(m) * ld + n] = vals[static_cast<size_t>(m) * N + n] + m;
  const std::vector<float> gamma = naive::random_floats(N, -1.0f, 1.0f, 812);
  const std::vector<float> beta = naive::random_floats(N, -1.0f, 1.0f, 813);
  const std::vector<float> original = X;
  std::vector<float> separate(X.size(), kSentinel);
  ref::layer_norm(M, N, original.data(), ld, gamma.data(), beta.data(), 1e-5f, separate.data(), ld);
  ref::layer_norm(M, N, X.data(), ld, gamma.data(), beta.data(), 1e-5f, X.data(), ld);
  check_rows(M, N, original, ld, gamma, beta, 1e-5f, X.data(), ld);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) REQUIRE(X[static_cast<size_t>(m) * ld + n] == separate[static_cast<size_t>(m) * ld + n]);
    for (int n = N; n < ld; ++n) REQUIRE(X[static_cast<size_t>(m) * ld + n] == 3.0f);  // gap untouched
  }
}

TEST_CASE("ref layer_norm: eps matters on low-variance rows and constant rows give beta", "[ref][layer_norm]") {
  const int N = 4;
  const std::vector<float> X = {1e-3f, -1e-3f, 1e-3f, -1e-3f};  // mean 0, variance 1e-6
  const std::vector<float> gamma = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<float> beta = {0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> Y_big(N), Y_small(N);
  ref::layer_norm(1, N, X.data(), N, gamma.data(), beta.data(), 1e-5f, Y_big.data(), N);
  ref::layer_norm(1, N, X.data(), N, gamma.data(), beta.data(), 1e-12f, Y_small.data(), N);
  check_rows(1, N, X, N, gamma, beta, 1e-5f, Y_big.data(), N);
  check_rows(1, N, X, N, gamma, beta, 1e-12f, Y_small.data(), N);
  // 1e-3 / sqrt(1e-6 + 1e-5) = 0.30151..., and ≈ 1 when eps is negligible.
  REQUIRE(std::fabs(Y_big[0] - 0.30151134) < 1e-6);
  REQUIRE(std::fabs(Y_small[0] - 1.0) < 1e-5);

  // Constant row: x - mean is exactly 0, so y == beta exactly.
  const std::vector<float> C = {2.5f, 2.5f, 2.5f, 2.5f};
  const std::vector<float> beta2 = {0.25f, -1.0f, 3.0f, 0.0f};
  std::vector<float> Yc(N, kSentinel);
  ref::layer_norm(1, N, C.data(), N, gamma.data(), beta2.data(), 1e-5f, Yc.data(), N);
  for (int n = 0; n < N; ++n) REQUIRE(Yc[n] == beta2[n]);
}
