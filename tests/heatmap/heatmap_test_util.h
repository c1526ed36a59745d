// Helpers of the heat-map tests: a PNG decoded back with libpng, and small figures.
#pragma once

#include <string>
#include <vector>

#include "cli/heatmap/attention_figure.h"
#include "cli/heatmap/rgb.h"

namespace encrt::heatmap_test {

using heatmap::AttentionFigure;
using heatmap::Rgb;

struct DecodedPng {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
  Rgb at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// Reads an 8-bit RGB view of any PNG (libpng's simplified API); "" on success, else libpng's
// message. Without libpng in the build: "no libpng".
std::string decode_png(const std::string& path, DecodedPng* out);

// A small XML well-formedness check: tags nest and match, attributes are quoted, text and
// attribute values hold no raw '<' and every '&' starts one of XML's five entities or a
// character reference. Returns "" or what is wrong.
std::string xml_problem(const std::string& xml);

// n tokens "t0".. and one map per entry of `diagonals`: 1 where key == query + diagonal, else 0.
AttentionFigure shifted_identity(int n, const std::vector<int>& diagonals);

}  // namespace encrt::heatmap_test
