#include "cli/heatmap/canvas.h"

#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/display_text.h"

namespace encrt::heatmap {

Canvas::Canvas(int width, int height, Rgb background)
    : width_(width), height_(height), px_(static_cast<size_t>(width) * static_cast<size_t>(height) * 3) {
  fill(0, 0, width, height, background);
}

Rgb Canvas::at(int x, int y) const {
  const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3;
  return {px_[i], px_[i + 1], px_[i + 2]};
}

void Canvas::set(int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)) * 3;
  px_[i] = c.r;
  px_[i + 1] = c.g;
  px_[i + 2] = c.b;
}

void Canvas::fill(int x, int y, int w, int h, Rgb c) {
  for (int yy = y < 0 ? 0 : y; yy < y + h && yy < height_; ++yy)
    for (int xx = x < 0 ? 0 : x; xx < x + w && xx < width_; ++xx) set(xx, yy, c);
}

void Canvas::outline(const Frame& f) {
  fill(f.x - 1, f.y - 1, f.w + 2, 1, f.color);
  fill(f.x - 1, f.y + f.h, f.w + 2, 1, f.color);
  fill(f.x - 1, f.y, 1, f.h, f.color);
  fill(f.x + f.w, f.y, 1, f.h, f.color);
}

void Canvas::draw(const Text& t) {
  const std::vector<char32_t> text = code_points(t.text);
  const int s = t.scale;
  const int along = text_length_px(t.text, s);  // the vertical box's height
  for (size_t i = 0; i < text.size(); ++i) {
    for (int row = 0; row < font::kGlyphHeight; ++row) {
      for (int col = 0; col < font::kGlyphWidth; ++col) {
        if (!font::ink(text[i], col, row)) continue;
        // (u, v): the pixel in the horizontal text's own box, u along the text, v down.
        const int u = static_cast<int>(i) * font::kAdvance * s + col * s, v = row * s;
        if (t.vertical)  // a quarter turn counter-clockwise: v runs right, u runs up from the bottom
          fill(t.x + v, t.y + along - u - s, s, s, t.color);
        else
          fill(t.x + u, t.y + v, s, s, t.color);
      }
    }
  }
}

Canvas rasterize(const Scene& scene) {
  Canvas c(scene.width, scene.height, scene.background);
  for (const Box& b : scene.boxes) c.fill(b.x, b.y, b.w, b.h, b.fill);
  for (const Frame& f : scene.frames) c.outline(f);
  for (const Text& t : scene.texts) c.draw(t);
  return c;
}

}  // namespace encrt::heatmap
