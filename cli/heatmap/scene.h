// A heat-map figure as a list of things to draw, in pixels: what the layout decides once and the
// PNG and SVG writers both draw, so the two images have the same geometry.
#pragma once

#include <string>
#include <vector>

#include "cli/heatmap/rgb.h"

namespace encrt::heatmap {

enum class BoxRole {
  kCell,    // one (query, key) cell of a map
  kLegend,  // one row of the colour scale's bar
};

// A filled rectangle [x, x + w) x [y, y + h).
struct Box {
  int x = 0, y = 0, w = 0, h = 0;
  Rgb fill;
  BoxRole role = BoxRole::kCell;
  std::string tooltip;  // SVG shows it on hover (<title>); the PNG has no use for it
};

// A one-pixel outline drawn just outside the rectangle [x, x + w) x [y, y + h).
struct Frame {
  int x = 0, y = 0, w = 0, h = 0;
  Rgb color;
};

enum class TextRole { kTitle, kPanelTitle, kTick, kCaption, kLegendValue };

// A line of text in the bitmap font's metrics (bitmap_font.h) enlarged `scale` times. (x, y) is
// the top-left corner of its box: horizontal text is chars x kAdvance wide and kGlyphHeight tall;
// vertical text is that box turned a quarter counter-clockwise, read from bottom to top.
struct Text {
  int x = 0, y = 0;
  std::string text;  // UTF-8
  int scale = 1;
  bool vertical = false;
  Rgb color;
  TextRole role = TextRole::kTick;
};

struct Scene {
  int width = 0, height = 0;
  Rgb background{255, 255, 255};
  std::vector<Box> boxes;
  std::vector<Frame> frames;
  std::vector<Text> texts;
};

// The box a text occupies, as the layout reserves it.
int text_length_px(const std::string& utf8, int scale);  // along the reading direction
struct Extent {
  int x = 0, y = 0, w = 0, h = 0;
};
Extent text_extent(const Text& t);

}  // namespace encrt::heatmap
