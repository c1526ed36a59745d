// Reference activation quantizer (per-row asymmetric uint8): the exact rule of kernel_types.h,
// its accuracy properties, and its special rows and ties.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "naive_math.h"

namespace {

using namespace encrt::kernels;
namespace naive = encrt::test_naive;

const int kSizes[] = {1, 2, 3, 5, 16, 17, 33};
constexpr uint8_t kSentinel = 0xee;

struct QuantizedOutput {
  std::vector<uint8_t> q;  // [M, ldq]
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
};

QuantizedOutput quantize(int M, int K, const std::vector<float>& X, int ldx, int ldq) {
  QuantizedOutput out;
  out.q.assign(static_cast<size_t>(M) * ldq, kSentinel);
  out.scale.assign(M, -1.0f);
  out.zero_point.assign(M, -1);
  ref::quantize_rows_u8(M, K, X.data(), ldx, nullptr, out.q.data(), ldq, out.scale.data(), out.zero_point.data());
  return out;
}

// Checks one quantized row against the documented rule and its properties.
void check_row(const float* x, int K, const uint8_t* q, int ldq, float scale, int32_t zp) {
  const int Kp = round_up(K, kPanelK);
  float lo = 0.0f, hi = 0.0f;
  for (int k = 0; k < K; ++k) lo = std::min(lo, x[k]), hi = std::max(hi, x[k]);

  REQUIRE(zp >= 0);
  REQUIRE(zp <= 255);
  if (hi == lo) {  // all zero
    REQUIRE(scale == 1.0f);
    REQUIRE(zp == 0);
    for (int k = 0; k < Kp; ++k) REQUIRE(static_cast<int>(q[k]) == 0);
  } else {
    // The rule, exactly (fp32 scale and reciprocal, rint = round half to even).
    const float s = (hi - lo) / 255.0f;
    const float inv = 1.0f / s;
    REQUIRE(scale == s);
    const double zp_rule = std::min(255.0, std::max(0.0, static_cast<double>(std::nearbyint(-lo * inv))));
    REQUIRE(zp == static_cast<int32_t>(zp_rule));
    for (int k = 0; k < K; ++k) {
      CAPTURE(k, x[k]);
      const double rule = std::min(255.0, std::max(0.0, static_cast<double>(std::nearbyint(x[k] * inv)) + zp));
      REQUIRE(static_cast<int>(q[k]) == static_cast<int>(rule));
      // Property: dequantized value within half a step (plus the fp32 rounding of 1/scale,
      // at most ~255 ulp of a step) of x.
      const double deq = static_cast<double>(scale) * (static_cast<int>(q[k]) - zp);
      REQUIRE(std::fabs(deq - x[k]) <= scale * (0.5 + 1e-4));
      if (x[k] == 0.0f) REQUIRE(static_cast<int>(q[k]) == zp);
    }
    for (int k = K; k < Kp; ++k) REQUIRE(static_cast<int>(q[k]) == zp);
  }
  for (int k = Kp; k < ldq; ++k) REQUIRE(static_cast<int>(q[k]) == kSentinel);
}

}  // namespace

TEST_CASE("ref quantize_rows_u8: rule and properties on random and special rows", "[ref][quantize]") {
  uint32_t seed = 300;
  for (int M : kSizes)
    for (int K : kSizes) {
      CAPTURE(M, K);
      const int ldx = K + 3;
      const int ldq = round_up(K, kPanelK) + 4;
      std::vector<float> X(static_cast<size_t>(M) * ldx, std::numeric_limits<float>::quiet_NaN());
      const std::vector<float> vals = naive::random_floats(static_cast<size_t>(M) * K, -3.0f, 2.0f, seed++);
      for (int m = 0; m < M; ++m) {
        float* row = X.data() + static_cast<size_t>(m) * ldx;
        for (int k = 0; k < K; ++k) row[k] = vals[static_cast<size_t>(m) * K + k];
        switch (m % 8) {
          case 1: std::fill(row, row + K, 0.0f); break;                       // all zero
          case 2: for (int k = 0; k < K; ++k) row[k] = -std::fabs(row[k]) - 0.5f; break;  // negative
          case 3: for (int k = 0; k < K; ++k) row[k] = std::fabs(row[k]) + 0.5f; break;   // positive
          case 4: std::fill(row, row + K, 1.75f); break;                      // constant > 0
          case 5: std::fill(row, row + K, -0.3f); break;                      // constant < 0
          case 6: for (int k = 0; k < K; ++k) row[k] *= 1e-20f; break;        // tiny range
          case 7: row[K / 2] = 0.0f; break;                                   // contains a zero
          default: break;
        }
      }
      const QuantizedOutput out = quantize(M, K, X, ldx, ldq);
      for (int m = 0; m < M; ++m) {
        CAPTURE(m);
        check_row(X.data() + static_cast<size_t>(m) * ldx, K, out.q.data() + static_cast<size_t>(m) * ldq, ldq,
                  out.scale[m], out.zero_point[m]);
      }
    }
}

TEST_CASE("ref quantize_rows_u8: special rows have the documented exact results", "[ref][quantize]") {
  const int K = 5, ldq = 8;
  const std::vector<float> X = {
      0.0f, 0.0f, 0.0f, 0.0f, 0.0f,        // all zero -> scale 1, zp 0
      2.0f, 2.0f, 2.0f, 2.0f, 2.0f,        // constant positive -> zp 0, q 255
      -4.0f, -4.0f, -4.0f, -4.0f, -4.0f,   // constant negative -> zp 255, q 0
      -1.0f, -0.5f, -1.9921875f, -0.25f, 0.0f,  // negative only, min -255/128 -> zp 255
      0.0f, 1.0f, 0.5f, 3.984375f, 0.25f,        // positive only, max 255/64 -> zp 0
  };
  const int M = 5;
  const QuantizedOutput out = quantize(M, K, X, K, ldq);
  REQUIRE(out.scale[0] == 1.0f);
  REQUIRE(out.zero_point[0] == 0);
  REQUIRE(out.scale[1] == 2.0f / 255.0f);
  REQUIRE(out.zero_point[1] == 0);
  REQUIRE(out.scale[2] == 4.0f / 255.0f);
  REQUIRE(out.zero_point[2] == 255);
  REQUIRE(out.scale[3] == 0x1p-7f);
  REQUIRE(out.zero_point[3] == 255);
  REQUIRE(out.scale[4] == 0x1p-6f);
  REQUIRE(out.zero_point[4] == 0);
  const uint8_t expected_q[M][ldq] = {
      {0, 0, 0, 0, 0, 0, 0, 0},
      {255, 255, 255, 255, 255, 0, 0, 0},
      {0, 0, 0, 0, 0, 255, 255, 255},
      // x * 128 = -128, -64, -255, -32, 0; + 255
      {127, 191, 0, 223, 255, 255, 255, 255},
      // x * 64 = 0, 64, 32, 255, 16
      {0, 64, 32, 255, 16, 0, 0, 0},
  };
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < ldq; ++k) {
      CAPTURE(m, k);
      if (k < round_up(K, kPanelK)) {
        REQUIRE(static_cast<int>(out.q[static_cast<size_t>(m) * ldq + k]) == expected_q[m][k]);
      } else {
        REQUIRE(static_cast<int>(out.q[static_cast<size_t>(m) * ldq + k]) == kSentinel);
      }
    }
}

TEST_CASE("ref quantize_rows_u8: rounding is half to even on exact ties", "[ref][quantize]") {
  // Ranges of 255 * 2^e make scale and 1/scale exact, so x * inv lands exactly on .5 ties.
  const int K = 6;
  const std::vector<float> X = {
      -0.5f, 254.5f, 2.5f, 3.5f, -0.5f, 0.0f,   // scale 1, zp = rint(0.5) = 0
      -1.5f, 253.5f, 0.5f, -0.5f, 1.5f, 0.0f,   // scale 1, zp = rint(1.5) = 2
      -3.0f, 507.0f, 5.0f, 7.0f, -1.0f, 1.0f,   // scale 2, zp = rint(1.5) = 2
      -127.5f, 127.5f, 2.5f, -2.5f, 0.0f, 1.5f,  // scale 1, zp = rint(127.5) = 128
  };
  const int M = 4, ldq = 8;
  const QuantizedOutput out = quantize(M, K, X, K, ldq);
  const float expected_scale[M] = {1.0f, 1.0f, 2.0f, 1.0f};
  const int32_t expected_zp[M] = {0, 2, 2, 128};
  const int expected_q[M][K] = {
      {0, 254, 2, 4, 0, 0},       // 254.5 -> 254, 2.5 -> 2, 3.5 -> 4, -0.5 -> -0 -> 0
      {0, 255, 2, 2, 4, 2},       // -1.5 -> -2 + 2, 253.5 -> 254 + 2 = 256 -> 255, 0.5 -> 0 + 2
      {0, 255, 4, 6, 2, 2},       // 2.5 -> 2, 3.5 -> 4, -0.5 -> 0, 0.5 -> 0
      {0, 255, 130, 126, 128, 130},  // -127.5 -> -128 + 128, 127.5 -> 128 + 128 -> 255
  };
  for (int m = 0; m < M; ++m) {
    CAPTURE(m);
    REQUIRE(out.scale[m] == expected_scale[m]);
    REQUIRE(out.zero_point[m] == expected_zp[m]);
    for (int k = 0; k < K; ++k) {
      CAPTURE(k);
      REQUIRE(static_cast<int>(out.q[static_cast<size_t>(m) * ldq + k]) == expected_q[m][k]);
    }
    for (int k = K; k < ldq; ++k) REQUIRE(static_cast<int>(out.q[static_cast<size_t>(m) * ldq + k]) == expected_zp[m]);
  }
}
