// SIMD (x86 and ARM) LayerNorm against ref::layer_norm (computed in double). Tolerance: 1e-5 relative to
// max(|ref|, |gamma| + |beta|), i.e. relative to the output, or to the output scale of a
// unit-variance input where the output itself crosses zero.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86) || defined(ENCRT_ARCH_ARM64)

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

namespace {

using namespace encrt::kernels;

using encrt::kernels::test::testable_simd_kernels;

constexpr float kSentinel = 12345.0f;

}  // namespace

TEST_CASE("SIMD LayerNorm matches the reference", "[simd][layer_norm]") {
  const float eps = 1e-12f;
  uint32_t seed = 3;
  const auto kernels = testable_simd_kernels(kLayerNormKernels);
  for (int N : {1, 3, 15, 16, 17, 31, 33, 100, 384, 1536}) {
    // Rows: centred data, a large common offset (mean 1000, std 1), small values, a constant row.
    const int M = 4, ldx = N + 5, ldy = N + 2;
    std::mt19937 rng(seed++);
    std::normal_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> X(static_cast<size_t>(M) * ldx), gamma(N), beta(N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < ldx; ++n) {
        float& x = X[static_cast<size_t>(m) * ldx + n];
        x = m == 0 ? 3.0f * unit(rng) + 0.5f : m == 1 ? 1000.0f + unit(rng) : m == 2 ? 1e-3f * unit(rng) : 2.5f;
      }
    for (int n = 0; n < N; ++n) gamma[n] = 1.0f + 0.5f * unit(rng), beta[n] = 0.3f * unit(rng);

    std::vector<float> want(static_cast<size_t>(M) * ldy, kSentinel);
    ref::layer_norm(M, N, X.data(), ldx, gamma.data(), beta.data(), eps, want.data(), ldy);
    for (const LayerNormKernel* k : kernels) {
      const LayerNormFn layer_norm = k->fn;
      std::vector<float> got(want.size(), kSentinel);
      layer_norm(M, N, X.data(), ldx, gamma.data(), beta.data(), eps, got.data(), ldy);
      // In place (X == Y, same stride).
      std::vector<float> in_place = X;
      layer_norm(M, N, in_place.data(), ldx, gamma.data(), beta.data(), eps, in_place.data(), ldx);
      int bad = 0, bad_in_place = 0, bad_padding = 0;
      double worst = 0;
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < ldy; ++n) {
          const float g = got[static_cast<size_t>(m) * ldy + n];
          if (n >= N) {
            bad_padding += g != kSentinel;
            continue;
          }
          const double w = want[static_cast<size_t>(m) * ldy + n];
          const double tol = 1e-5 * std::max(std::fabs(w), std::fabs(gamma[n]) + std::fabs(static_cast<double>(beta[n])));
          const double d = std::fabs(g - w);
          worst = std::max(worst, d / tol);
          bad += !(d <= tol);
          bad_in_place += in_place[static_cast<size_t>(m) * ldx + n] != g;
        }
      INFO(k->name << " N=" << N << " worst error / tolerance " << worst);
      CHECK(bad == 0);
      CHECK(bad_in_place == 0);
      CHECK(bad_padding == 0);
    }
  }
}

#endif  // ENCRT_ARCH_X86 || ENCRT_ARCH_ARM64
