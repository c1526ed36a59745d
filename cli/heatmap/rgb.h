// A colour of the heat-map images: 8-bit sRGB, as PNG and SVG store it.
#pragma once

#include <cstdint>
#include <string>

namespace encrt::heatmap {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const { return !(*this == o); }
};

std::string to_hex(Rgb c);  // "#rrggbb"

}  // namespace encrt::heatmap
