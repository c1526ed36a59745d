// Per-channel activation multipliers (SmoothQuant) in quantize_rows_u8: quantizing X with
// multipliers m is exactly quantizing the fp32 products X∘m, for every kernel of the list.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

using namespace encrt::kernels;
using encrt::kernels::test::testable_kernels;

TEST_CASE("quantize_rows_u8 with multipliers equals quantizing the products", "[quantize][smoothing]") {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> factor(0.05f, 20.0f);
  const auto kernels = testable_kernels(kQuantizeRowsU8Kernels);
  for (int K : {1, 3, 16, 17, 64, 100, 384, 1537}) {
    const int M = 5, ldx = K + 3, ldq = round_up(K, kPanelK) + 4;
    std::vector<float> X(static_cast<size_t>(M) * ldx), products(X.size()), m(static_cast<size_t>(K));
    for (auto& v : m) v = factor(rng);
    for (int r = 0; r < M; ++r)
      for (int k = 0; k < K; ++k) {
        const size_t i = static_cast<size_t>(r) * ldx + k;
        X[i] = normal(rng) * (k % 7 == 0 ? 30.0f : 1.0f);  // a few outlier channels
        products[i] = X[i] * m[static_cast<size_t>(k)];
      }
    std::vector<uint8_t> want(static_cast<size_t>(M) * ldq);
    std::vector<float> want_scale(M);
    std::vector<int32_t> want_zp(M);
    ref::quantize_rows_u8(M, K, products.data(), ldx, nullptr, want.data(), ldq, want_scale.data(), want_zp.data());
    for (const QuantizeRowsU8Kernel* k : kernels) {
      INFO("K " << K << ", " << k->name);
      std::vector<uint8_t> got(want.size());
      std::vector<float> scale(M);
      std::vector<int32_t> zp(M);
      k->fn(M, K, X.data(), ldx, m.data(), got.data(), ldq, scale.data(), zp.data());
      CHECK(scale == want_scale);
      CHECK(zp == want_zp);
      for (int r = 0; r < M; ++r)
        for (int k = 0; k < round_up(K, kPanelK); ++k)
          REQUIRE(got[static_cast<size_t>(r) * ldq + k] == want[static_cast<size_t>(r) * ldq + k]);
    }
  }
}
