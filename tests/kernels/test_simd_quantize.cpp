// SIMD (x86 and ARM) per-row uint8 quantization against ref::quantize_rows_u8: bit-exact (bytes, padding bytes,
// scales and zero points), for every kernel of the list this CPU supports.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86) || defined(ENCRT_ARCH_ARM64)

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

namespace {

using namespace encrt::kernels;

using encrt::kernels::test::testable_simd_kernels;

constexpr uint8_t kSentinel = 0xA5;

// Runs the reference and every SIMD kernel on X [M, K] (stride ldx), without and with per-channel
// multipliers, and requires identical results, including the padding bytes up to
// round_up(K, 4) and untouched bytes after them.
void check_rows(int M, int K, const std::vector<float>& X, int ldx) {
  const int ldq = round_up(K, kPanelK) + 12;
  std::vector<float> multipliers(static_cast<size_t>(K));
  std::mt19937 rng(static_cast<uint32_t>(K));
  std::uniform_real_distribution<float> factor(0.1f, 8.0f);
  for (float& f : multipliers) f = factor(rng);
  const auto kernels = testable_simd_kernels(kQuantizeRowsU8Kernels);
  for (const float* mult : {static_cast<const float*>(nullptr), static_cast<const float*>(multipliers.data())}) {
    std::vector<uint8_t> want(static_cast<size_t>(M) * ldq, kSentinel);
    std::vector<float> want_scale(M);
    std::vector<int32_t> want_zp(M);
    ref::quantize_rows_u8(M, K, X.data(), ldx, mult, want.data(), ldq, want_scale.data(), want_zp.data());
    for (const QuantizeRowsU8Kernel* k : kernels) {
      std::vector<uint8_t> got(want.size(), kSentinel);
      std::vector<float> scale(M, -1.0f);
      std::vector<int32_t> zp(M, -1);
      k->fn(M, K, X.data(), ldx, mult, got.data(), ldq, scale.data(), zp.data());
      INFO(k->name << " M=" << M << " K=" << K << (mult ? " with multipliers" : ""));
      CHECK(got == want);
      CHECK(scale == want_scale);
      CHECK(zp == want_zp);
    }
  }
}

}  // namespace

TEST_CASE("SIMD quantize_rows_u8 is bit-exact on random rows", "[simd][quantize]") {
  uint32_t seed = 5;
  for (int K : {1, 3, 4, 5, 15, 16, 17, 31, 32, 33, 64, 100, 384, 1537}) {
    const int M = 7, ldx = K + 3;
    std::mt19937 rng(seed++);
    std::vector<float> X(static_cast<size_t>(M) * ldx);
    for (int m = 0; m < M; ++m) {
      // Row kinds: mixed sign, positive only, negative only, wide range, tiny values.
      const float lo = m == 1 ? 0.1f : m == 2 ? -3.0f : m == 4 ? -1e4f : m == 5 ? -1e-30f : -2.0f;
      const float hi = m == 1 ? 5.0f : m == 2 ? -0.5f : m == 4 ? 3e3f : m == 5 ? 1e-30f : 7.0f;
      std::uniform_real_distribution<float> dist(lo, hi);
      for (int k = 0; k < ldx; ++k) X[static_cast<size_t>(m) * ldx + k] = dist(rng);
    }
    check_rows(M, K, X, ldx);
  }
}

TEST_CASE("SIMD quantize_rows_u8 special rows", "[simd][quantize]") {
  // Row 0: all zero (scale 1, zero point 0). Row 1: constant positive. Row 2: ties: with
  // lo = -127.5 and hi = 127.5 the scale is exactly 1 and x·inv = 0.5, 1.5, 2.5, -0.5 ... land
  // exactly halfway, where only round-half-to-even matches the reference; the zero point
  // rint(127.5) = 128 is a tie too. Row 3: a single element.
  const int K = 37, ldx = 40;
  std::vector<float> X(static_cast<size_t>(4) * ldx, 0.0f);
  for (int k = 0; k < K; ++k) X[1 * ldx + k] = 3.25f;
  for (int k = 0; k < K; ++k) X[2 * ldx + k] = static_cast<float>(k % 9) - 4.5f;
  X[2 * ldx + 0] = -127.5f;
  X[2 * ldx + 1] = 127.5f;
  X[3 * ldx + 17] = -2.0f;
  check_rows(4, K, X, ldx);

  const int ldq = round_up(K, kPanelK);
  std::vector<uint8_t> q(static_cast<size_t>(4) * ldq);
  std::vector<float> scale(4);
  std::vector<int32_t> zp(4);
  for (const QuantizeRowsU8Kernel* k : testable_simd_kernels(kQuantizeRowsU8Kernels)) {
    k->fn(4, K, X.data(), ldx, nullptr, q.data(), ldq, scale.data(), zp.data());
    INFO(k->name);
    CHECK(scale[0] == 1.0f);
    CHECK(zp[0] == 0);
    CHECK(scale[2] == 1.0f);
    CHECK(zp[2] == 128);
    CHECK(q[2 * ldq + 4] == 128);      // x = -0.5 → rint(-0.5) = -0 → 128
    CHECK(q[2 * ldq + 5] == 128);      // x = 0.5 → 0 → 128
    CHECK(q[2 * ldq + 6] == 130);      // x = 1.5 → 2 → 130
    CHECK(q[2 * ldq + 7] == 130);      // x = 2.5 → 2 → 130
    CHECK(q[2 * ldq + K] == 128);      // padding bytes hold the zero point
  }
}

TEST_CASE("SIMD quantize_rows_u8 skips NaNs in the range and quantizes them to 0", "[simd][quantize]") {
  // kernel_types.h: NaN does not take part in min/max (std::min(lo, x) keeps lo) and becomes 0.
  for (int K : {5, 40, 130}) {
    const int M = 3, ldx = K;
    std::vector<float> X(static_cast<size_t>(M) * ldx);
    for (int k = 0; k < K; ++k) {
      X[k] = static_cast<float>(k % 11) - 3.0f;
      X[ldx + k] = 0.25f * static_cast<float>(k % 5);
      X[2 * ldx + k] = std::nanf("");
    }
    for (int k = 1; k < K; k += 7) X[k] = std::nanf("");
    X[ldx] = std::nanf("");
    check_rows(M, K, X, ldx);
  }
}

#endif  // ENCRT_ARCH_X86 || ENCRT_ARCH_ARM64
