#include "cli/heatmap/scene.h"

#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/display_text.h"

namespace encrt::heatmap {

int text_length_px(const std::string& utf8, int scale) {
  const int n = static_cast<int>(code_points(utf8).size());
  // The last glyph needs no space after it.
  return n == 0 ? 0 : (n * font::kAdvance - 1) * scale;
}

Extent text_extent(const Text& t) {
  const int along = text_length_px(t.text, t.scale), across = font::kGlyphHeight * t.scale;
  return t.vertical ? Extent{t.x, t.y, across, along} : Extent{t.x, t.y, along, across};
}

}  // namespace encrt::heatmap
