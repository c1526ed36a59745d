// The colour scale: dark to bright in even steps of perceived lightness, its ends, clamping.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli/heatmap/colormap.h"

using namespace encrt::heatmap;

TEST_CASE("colormap: OKLab lightness rises steadily from 0 to 1", "[heatmap][colormap]") {
  double previous = -1;
  for (int i = 0; i <= 100; ++i) {
    const double t = i / 100.0;
    const double L = oklab_lightness(colormap(t));
    INFO("t = " << t << ", L = " << L);
    CHECK(L > previous);  // strictly monotonic: order of values = order of brightness
    // The design's lightness line, give or take 8-bit rounding and gamut clipping of the chroma.
    CHECK(std::abs(L - (0.28 + 0.64 * t)) < 0.01);
    previous = L;
  }
}

TEST_CASE("colormap: violet at the bottom, yellow at the top, clamped outside", "[heatmap][colormap]") {
  const Rgb lo = colormap(0), hi = colormap(1);
  CHECK(lo.b > lo.g);  // violet: blue and red over green
  CHECK(lo.r > lo.g);
  CHECK(hi.r > 200);  // yellow: red and green high, blue low
  CHECK(hi.g > 200);
  CHECK(hi.b < 80);
  CHECK(colormap(-3) == lo);
  CHECK(colormap(7) == hi);
  CHECK(colormap(std::nan("")) == lo);
  CHECK(colormap(0.5) != lo);
  CHECK(to_hex(Rgb{255, 10, 0}) == "#ff0a00");
}
