// Scenes to SVG: cells and the legend as <rect>s (class "cell" / "legend"; each cell's <title> is
// its query, key and value, shown on hover), frames as stroked rects, and labels as real <text>
// in a monospace font sized to the bitmap font's metrics, so the SVG's geometry is the PNG's
// while its text stays crisp at any zoom. Tokens are XML-escaped and kept in UTF-8.
#pragma once

#include <string>
#include <string_view>

#include "cli/heatmap/scene.h"
#include "encrt/status.hpp"

namespace encrt::heatmap {

std::string xml_escape(std::string_view utf8);  // & < > " ' as entities, malformed bytes as U+FFFD
std::string to_svg(const Scene& scene);
Status write_svg(const Scene& scene, const std::string& path);

}  // namespace encrt::heatmap
