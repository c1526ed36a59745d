// IEEE binary16 conversions of core/half.h against a naive implementation from the definition
// (tests/kernels/naive_math.h) and known bit patterns.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "naive_math.h"

namespace {

namespace naive = encrt::test_naive;

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float bits_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
bool is_half_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

}  // namespace

TEST_CASE("half: every half bit pattern decodes exactly and round-trips", "[ref][half]") {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = encrt::half_to_float(h);
    const double want = naive::naive_half_value(h);
    CAPTURE(bits);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::signbit(f) == ((h & 0x8000) != 0));
      const uint16_t back = encrt::float_to_half(f);
      REQUIRE(is_half_nan(back));  // NaN stays NaN (never collapses to inf)
      REQUIRE((back & 0x8000) == (h & 0x8000));
    } else {
      REQUIRE(static_cast<double>(f) == want);
      REQUIRE(std::signbit(f) == ((h & 0x8000) != 0));  // -0 stays -0
      REQUIRE(encrt::float_to_half(f) == h);
    }
  }
}

TEST_CASE("half: ties between neighbouring halves round to the even one", "[ref][half]") {
  // For every pair of adjacent finite halves, the midpoint (exact in fp32: 12 significant bits)
  // goes to the even pattern and its fp32 neighbours go to the nearer half.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    CAPTURE(h);
    const double a = naive::naive_half_value(static_cast<uint16_t>(h));
    const double b = naive::naive_half_value(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((a + b) / 2.0);
    REQUIRE(static_cast<double>(mid) == (a + b) / 2.0);
    const uint16_t even = static_cast<uint16_t>((h & 1) ? h + 1 : h);
    REQUIRE(encrt::float_to_half(mid) == even);
    REQUIRE(encrt::float_to_half(-mid) == (0x8000 | even));
    REQUIRE(encrt::float_to_half(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(encrt::float_to_half(std::nextafter(mid, INFINITY)) == h + 1);
  }
}

TEST_CASE("half: overflow and subnormals and NaN and known values", "[ref][half]") {
  using encrt::float_to_half;
  // Largest finite half 65504; the tie with the next (virtual) value 65536 is 65520 and goes to
  // the even side, which is infinity.
  REQUIRE(float_to_half(65504.0f) == 0x7bff);
  REQUIRE(float_to_half(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  REQUIRE(float_to_half(65520.0f) == 0x7c00);
  REQUIRE(float_to_half(-65520.0f) == 0xfc00);
  REQUIRE(float_to_half(1e10f) == 0x7c00);
  REQUIRE(float_to_half(FLT_MAX) == 0x7c00);
  REQUIRE(float_to_half(INFINITY) == 0x7c00);
  REQUIRE(float_to_half(-INFINITY) == 0xfc00);

  // Subnormals: smallest 2^-24; 2^-25 is a tie with 0 (even: 0); 3 * 2^-25 ties 1 and 2 (-> 2).
  REQUIRE(float_to_half(0x1p-24f) == 0x0001);
  REQUIRE(float_to_half(0x1p-25f) == 0x0000);
  REQUIRE(float_to_half(-0x1p-25f) == 0x8000);
  REQUIRE(float_to_half(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  REQUIRE(float_to_half(0x3p-25f) == 0x0002);
  REQUIRE(float_to_half(0x5p-25f) == 0x0002);
  REQUIRE(float_to_half(0x1p-14f) == 0x0400);               // smallest normal
  REQUIRE(float_to_half(std::nextafter(0x1p-14f, 0.0f)) == 0x0400);  // rounds up into normal
  REQUIRE(float_to_half(0x3ffp-24f) == 0x03ff);             // largest subnormal
  REQUIRE(float_to_half(FLT_MIN) == 0x0000);
  REQUIRE(float_to_half(bits_float(0x00000001u)) == 0x0000);  // fp32 subnormal
  REQUIRE(float_to_half(bits_float(0x80000001u)) == 0x8000);
  REQUIRE(float_to_half(-0.0f) == 0x8000);

  // Known values.
  REQUIRE(float_to_half(1.0f) == 0x3c00);
  REQUIRE(float_to_half(-2.0f) == 0xc000);
  REQUIRE(float_to_half(0.1f) == 0x2e66);
  REQUIRE(float_to_half(1.0f / 3.0f) == 0x3555);
  REQUIRE(float_to_half(3.140625f) == 0x4248);
  REQUIRE(encrt::half_to_float(0x3555) == 0x1.554p-2f);

  // NaN: quiet and signalling fp32 NaNs, with and without payload bits in the low 13 bits (which
  // a plain truncation would lose, turning the NaN into infinity).
  for (uint32_t nan_bits : {0x7fc00000u, 0x7f800001u, 0x7f801000u, 0xffc00000u, 0xff800001u, 0x7fffffffu}) {
    CAPTURE(nan_bits);
    const uint16_t h = float_to_half(bits_float(nan_bits));
    REQUIRE(is_half_nan(h));
    REQUIRE((h >> 15) == (nan_bits >> 31));
  }
}

TEST_CASE("half: float_to_half matches the naive nearest-even rounding on a sweep of fp32",
          "[ref][half]") {
  // Every 4099th fp32 bit pattern (~1M values, all exponents, both signs) plus, around each
  // binade edge of the half range, a dense window.
  auto check = [](uint32_t bits) {
    const float f = bits_float(bits);
    const uint16_t got = encrt::float_to_half(f);
    if (std::isnan(f)) {
      REQUIRE(is_half_nan(got));
      return;
    }
    const uint16_t want = naive::naive_double_to_half(f);
    if (got != want) {
      CAPTURE(bits, got, want);
      REQUIRE(got == want);
    }
  };
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4099) check(static_cast<uint32_t>(bits));
  for (int e = -26; e <= 16; ++e) {
    const uint32_t center = float_bits(std::ldexp(1.0f, e));
    for (uint32_t d = 0; d < 8192; ++d) {
      check(center - 4096 + d);
      check((center - 4096 + d) | 0x80000000u);
    }
  }
}
