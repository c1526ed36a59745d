// An RGB raster image in memory, 8 bits per channel, rows top to bottom: what the PNG writer
// stores. It draws the scenes' boxes, frames and bitmap-font text.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/heatmap/rgb.h"
#include "cli/heatmap/scene.h"

namespace encrt::heatmap {

class Canvas {
 public:
  Canvas(int width, int height, Rgb background);

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb at(int x, int y) const;                  // (x, y) must lie inside
  const uint8_t* rgb() const { return px_.data(); }  // width * height * 3 bytes

  // Each clips to the canvas.
  void set(int x, int y, Rgb c);
  void fill(int x, int y, int w, int h, Rgb c);
  void outline(const Frame& f);
  void draw(const Text& t);

 private:
  int width_, height_;
  std::vector<uint8_t> px_;
};

// The whole scene drawn on a canvas of its size: boxes, then frames, then text.
Canvas rasterize(const Scene& scene);

}  // namespace encrt::heatmap
