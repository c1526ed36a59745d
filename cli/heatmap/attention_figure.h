// The attention heat-map figure: one map per head of one layer, tokens on both axes, a colour
// scale with its legend, and a title, laid out as a Scene (scene.h) for the PNG and SVG writers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/heatmap/scene.h"
#include "encrt/status.hpp"

namespace encrt::heatmap {

struct AttentionFigure {
  std::string title;                      // e.g. "minilm.encrt  layer 2  head 3"
  std::vector<std::string> tokens;        // the axis labels (UTF-8), n of them, both axes
  std::vector<std::string> panel_titles;  // one per map; with a single map it may be empty
  std::vector<std::vector<float>> maps;   // each n * n, row-major [query][key]
  // The colour scale's ends; each one left out is the smallest / largest value of all maps.
  std::optional<float> vmin, vmax;
};

// The colour scale [lo, hi] a figure uses. A scale of zero width (every value equal) is widened
// to [min(v, 0), v] (or [v, v + 1] when v <= 0), so that a constant map still has a legend.
struct ColourRange {
  float lo = 0, hi = 1;
  double position(float v) const { return (static_cast<double>(v) - lo) / (static_cast<double>(hi) - lo); }
};
Status colour_range(const AttentionFigure& figure, ColourRange* out);

// Lays the figure out. Rules (so that maps of up to 64 tokens stay readable):
//  - one map: cells of clamp(640 / n, 1, 28) pixels; with several maps, a grid of small maps
//    (columns: a divisor of the count near its square root) with cells of clamp(256 / n, 1, 16);
//  - token labels at 2x the font when cells are >= 20 pixels, else 1x; labels longer than 12
//    characters end in ".."; when cells are smaller than a label's line, only every k-th token is
//    labelled (k as small as keeps labels from touching);
//  - y labels (query tokens) left of each grid row, x labels (attended tokens) under the lowest
//    map of each column, turned to read bottom to top;
//  - the legend bar right of the grid, as tall as the grid (at least 72 pixels), with its max,
//    middle and min values.
// scene->boxes holds the cells first, map by map, row (query) by row, then the legend's rows top
// (the maximum) to bottom. Errors: no maps, no tokens, a map of the wrong size, a non-finite value,
// vmin >= vmax, or an image over 16384 pixels on a side.
Status layout_attention(const AttentionFigure& figure, Scene* scene);

}  // namespace encrt::heatmap
