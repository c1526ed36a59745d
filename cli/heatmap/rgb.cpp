#include "cli/heatmap/rgb.h"

namespace encrt::heatmap {

std::string to_hex(Rgb c) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "#";
  for (uint8_t v : {c.r, c.g, c.b}) {
    s += kDigits[v >> 4];
    s += kDigits[v & 15];
  }
  return s;
}

}  // namespace encrt::heatmap
