// The colour map is a curve in OKLab (Björn Ottosson, "A perceptual color space for image
// processing", 2020), a space where equal distances look about equally different:
//
//   lightness L(t) = 0.28 + 0.64 t          rises linearly, so equal steps of attention read as
//                                           equal steps of brightness, also in grayscale print
//   hue       h(t) = 318° - 216° t          violet -> blue -> teal -> green -> yellow, a path that
//                                           avoids red/green confusion for most colour-blind eyes
//   chroma    C(t) = 0.14 + 0.05 t - 0.3 t (1 - t)
//                                           saturated at both ends, calmer in the middle
//
// These three curves are this file's own choice, tuned to resemble viridis's endpoints (dark
// violet, bright yellow) and its lightness range. Where (L, C, h) falls outside the sRGB gamut the
// chroma is reduced (bisection) until it fits, so the hue and lightness stay as designed. The map
// is sampled once into 1024 entries; colormap(t) returns the nearest sample.
#include "cli/heatmap/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace encrt::heatmap {

namespace {

constexpr int kSamples = 1024;
constexpr double kPi = 3.14159265358979323846;

struct LinearRgb {
  double r, g, b;
  bool in_gamut() const { return r >= 0 && r <= 1 && g >= 0 && g <= 1 && b >= 0 && b <= 1; }
};

// OKLab to linear sRGB: Ottosson's published matrices (the definition of the space).
LinearRgb oklab_to_linear(double L, double a, double b) {
  const double l_ = L + 0.3963377774 * a + 0.2158037573 * b;
  const double m_ = L - 0.1055613458 * a - 0.0638541728 * b;
  const double s_ = L - 0.0894841775 * a - 1.2914855480 * b;
  const double l = l_ * l_ * l_, m = m_ * m_ * m_, s = s_ * s_ * s_;
  return {4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
          -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
          -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s};
}

// The sRGB transfer curve (IEC 61966-2-1) and its inverse.
double encode_srgb(double c) { return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055; }
double decode_srgb(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

uint8_t to_byte(double c) { return static_cast<uint8_t>(std::lround(std::clamp(c, 0.0, 1.0) * 255.0)); }

Rgb curve_colour(double t) {
  const double L = 0.28 + 0.64 * t;
  const double h = (318.0 - 216.0 * t) * kPi / 180.0;
  double C = 0.14 + 0.05 * t - 0.3 * t * (1.0 - t);
  auto at = [&](double chroma) { return oklab_to_linear(L, chroma * std::cos(h), chroma * std::sin(h)); };
  if (!at(C).in_gamut()) {  // the largest in-gamut chroma at this lightness and hue
    double lo = 0.0, hi = C;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (at(mid).in_gamut() ? lo : hi) = mid;
    }
    C = lo;
  }
  const LinearRgb c = at(C);
  return {to_byte(encode_srgb(c.r)), to_byte(encode_srgb(c.g)), to_byte(encode_srgb(c.b))};
}

const std::array<Rgb, kSamples>& table() {
  static const std::array<Rgb, kSamples> samples = [] {
    std::array<Rgb, kSamples> s{};
    for (int i = 0; i < kSamples; ++i) s[static_cast<size_t>(i)] = curve_colour(i / double(kSamples - 1));
    return s;
  }();
  return samples;
}

}  // namespace

Rgb colormap(double t) {
  if (!(t > 0.0)) t = 0.0;  // also NaN
  if (t > 1.0) t = 1.0;
  return table()[static_cast<size_t>(std::lround(t * (kSamples - 1)))];
}

double oklab_lightness(Rgb c) {
  const double r = decode_srgb(c.r / 255.0), g = decode_srgb(c.g / 255.0), b = decode_srgb(c.b / 255.0);
  const double l = std::cbrt(0.4122214708 * r + 0.5363836773 * g + 0.0514459929 * b);
  const double m = std::cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const double s = std::cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return 0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s;
}

}  // namespace encrt::heatmap
