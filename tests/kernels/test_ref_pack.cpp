// Weight packing helpers of the reference kernels (shared with the converter): element positions
// per the PanelN16 / PanelN16K4 layouts of kernel_types.h, zero padding, int8 scales and sums.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "naive_math.h"

namespace {

using namespace encrt::kernels;
namespace naive = encrt::test_naive;

const int kSizes[] = {1, 2, 3, 5, 16, 17, 33};
constexpr size_t kGuard = 64;  // elements past the packed size that must stay untouched

}  // namespace

TEST_CASE("ref pack: panel index helpers match the documented storage nests", "[ref][pack]") {
  for (int N : kSizes)
    for (int K : kSizes) {
      // Tag each element with its row-major position, pack naively, and look it up by index.
      std::vector<int> tags(static_cast<size_t>(N) * K);
      for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<int>(i) + 1;
      const std::vector<int> f32 = naive::naive_pack_panel_n16(N, K, tags);
      const std::vector<int> i8 = naive::naive_pack_panel_n16k4(N, K, tags);
      REQUIRE(panel_f32_size(N, K) == f32.size());
      REQUIRE(panel_i8_size(N, K) == i8.size());
      for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k) {
          const int tag = n * K + k + 1;
          REQUIRE(f32[panel_f32_index(n, k, K)] == tag);
          REQUIRE(i8[panel_i8_index(n, k, K)] == tag);
        }
    }
}

TEST_CASE("ref pack: pack_weights_f32 places every element and zero-pads", "[ref][pack]") {
  uint32_t seed = 1;
  for (int N : kSizes)
    for (int K : kSizes) {
      CAPTURE(N, K);
      const std::vector<float> w = naive::random_floats(static_cast<size_t>(N) * K, -2.0f, 2.0f, seed++);
      const std::vector<float> expected = naive::naive_pack_panel_n16(N, K, w);
      // Pre-fill with garbage so that padding zeros must actually be written.
      std::vector<float> packed(expected.size() + kGuard, 7.25f);
      ref::pack_weights_f32(N, K, w.data(), packed.data());
      for (size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        REQUIRE(packed[i] == expected[i]);
      }
      for (size_t i = expected.size(); i < packed.size(); ++i) REQUIRE(packed[i] == 7.25f);
    }
}

TEST_CASE("ref pack: pack_weights_f16 stores round-to-nearest-even halves", "[ref][pack]") {
  uint32_t seed = 100;
  for (int N : kSizes)
    for (int K : kSizes) {
      CAPTURE(N, K);
      std::vector<float> w = naive::random_floats(static_cast<size_t>(N) * K, -3.0f, 3.0f, seed++);
      // A few values that need rounding decisions or overflow.
      w[0] = 1.0f + 1.0f / 2048.0f;  // tie between 1 and 1+2^-10: even -> 1.0
      if (w.size() > 1) w[1] = 70000.0f;  // overflow -> inf
      if (w.size() > 2) w[2] = -1e-6f;   // subnormal half
      std::vector<uint16_t> w_half(w.size());
      for (size_t i = 0; i < w.size(); ++i) w_half[i] = naive::naive_double_to_half(w[i]);
      const std::vector<uint16_t> expected = naive::naive_pack_panel_n16(N, K, w_half);
      std::vector<uint16_t> packed(expected.size() + kGuard, 0xabcd);
      ref::pack_weights_f16(N, K, w.data(), packed.data());
      for (size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        REQUIRE(packed[i] == expected[i]);
      }
      for (size_t i = expected.size(); i < packed.size(); ++i) REQUIRE(packed[i] == 0xabcd);
      REQUIRE(packed[0] == 0x3c00);
      if (w.size() > 1) REQUIRE(packed[panel_f32_index(1 / K, 1 % K, K)] == 0x7c00);
    }
}

TEST_CASE("ref pack: quantize_pack_weights_i8 scales and values and sums and padding", "[ref][pack]") {
  uint32_t seed = 200;
  for (int N : kSizes)
    for (int K : kSizes) {
      CAPTURE(N, K);
      std::vector<float> w = naive::random_floats(static_cast<size_t>(N) * K, -1.5f, 1.5f, seed++);
      // Row 1 all zero (scale must be 1), row 2 a single negative extreme, row 3 wide range.
      if (N > 1) std::fill(w.begin() + K, w.begin() + 2 * K, 0.0f);
      if (N > 2) {
        std::fill(w.begin() + 2 * K, w.begin() + 3 * K, 0.01f);
        w[2 * K + K / 2] = -40.0f;
      }
      if (N > 3) w[3 * K] = 1000.0f;

      std::vector<int8_t> packed(panel_i8_size(N, K) + kGuard, static_cast<int8_t>(0x5a));
      std::vector<float> scale(N + 1, -1.0f);
      std::vector<int32_t> sums(N + 1, -12345);
      ref::quantize_pack_weights_i8(N, K, w.data(), packed.data(), scale.data(), sums.data());
      REQUIRE(scale[N] == -1.0f);
      REQUIRE(sums[N] == -12345);
      for (size_t i = panel_i8_size(N, K); i < packed.size(); ++i) REQUIRE(static_cast<int>(packed[i]) == 0x5a);

      const std::vector<int8_t> q = naive::naive_unpack_panel_n16k4(N, K, packed.data());
      // Everything that is not a real element (padding lanes and padding depth) must be zero:
      // re-packing the real elements naively must reproduce the whole buffer.
      const std::vector<int8_t> repacked = naive::naive_pack_panel_n16k4(N, K, q);
      for (size_t i = 0; i < repacked.size(); ++i) {
        CAPTURE(i);
        REQUIRE(static_cast<int>(packed[i]) == static_cast<int>(repacked[i]));
      }

      for (int n = 0; n < N; ++n) {
        CAPTURE(n);
        float amax = 0.0f;
        for (int k = 0; k < K; ++k) amax = std::max(amax, std::fabs(w[static_cast<size_t>(n) * K + k]));
        const float expected_scale = amax > 0.0f ? amax / 127.0f : 1.0f;
        REQUIRE(scale[n] == expected_scale);
        int32_t sum = 0;
        for (int k = 0; k < K; ++k) {
          CAPTURE(k);
          const int qv = q[static_cast<size_t>(n) * K + k];
          const double x = w[static_cast<size_t>(n) * K + k];
          sum += qv;
          REQUIRE(qv >= -127);
          REQUIRE(qv <= 127);
          // Rounding to nearest: within half a step (plus the fp32 rounding of 1/scale).
          REQUIRE(std::fabs(x / expected_scale - qv) <= 0.5 + 1e-4);
          if (amax > 0.0f && std::fabs(x) == amax) REQUIRE(std::abs(qv) == 127);
          if (x == 0.0) REQUIRE(qv == 0);
        }
        REQUIRE(sums[n] == sum);
      }
    }
}

TEST_CASE("ref pack: int8 weight rounding is half to even on exact ties", "[ref][pack]") {
  // amax = 127 gives scale 1 exactly, so w = k + 0.5 is an exact tie.
  const int N = 1, K = 6;
  const float w[K] = {127.0f, 0.5f, 1.5f, 2.5f, -2.5f, -126.5f};
  const int8_t expected[K] = {127, 0, 2, 2, -2, -126};
  std::vector<int8_t> packed(panel_i8_size(N, K));
  float scale = 0.0f;
  int32_t sum = 0;
  ref::quantize_pack_weights_i8(N, K, w, packed.data(), &scale, &sum);
  REQUIRE(scale == 1.0f);
  int32_t expected_sum = 0;
  for (int k = 0; k < K; ++k) {
    CAPTURE(k);
    REQUIRE(static_cast<int>(packed[panel_i8_index(0, k, K)]) == static_cast<int>(expected[k]));
    expected_sum += expected[k];
  }
  REQUIRE(sum == expected_sum);
}
