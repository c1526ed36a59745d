#include "cli/heatmap/attention_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/colormap.h"
#include "cli/heatmap/display_text.h"

namespace encrt::heatmap {

namespace {

constexpr int kPad = 16;            // around the figure
constexpr int kLabelGap = 4;        // between a map and its tick labels
constexpr int kCaptionGap = 6;      // between tick labels and the axis caption
constexpr int kTitleGap = 10;       // under the title
constexpr int kPanelTitleGap = 4;   // between a panel's title and its map
constexpr int kColumnGap = 14;      // between maps of a grid row
constexpr int kRowGap = 14;         // between grid rows (plus panel titles)
constexpr int kLegendGap = 22;      // between the grid and the legend bar
constexpr int kLegendWidth = 14;
constexpr size_t kMaxLabelChars = 12;
constexpr int kMaxSide = 16384;
constexpr int kMaxTitleWidth = 2048;
// The legend and the y caption need this much height even beside a tiny grid.
constexpr int kMinBodyHeight = 72;
constexpr int kMinPanelSide = 40;

const Rgb kInk{32, 32, 32};
const Rgb kSoftInk{90, 90, 90};
const Rgb kFrameColour{120, 120, 120};

std::string format_value(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(v));
  return buf;
}

// Columns of a grid of `count` maps: the smallest divisor >= sqrt(count) when the grid stays at
// most twice as wide as tall (4 x 3 for 12 heads, 4 x 2 for 8), else a near-square grid whose
// last row is short.
int grid_columns(int count) {
  const int root = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  for (int c = root; c <= count; ++c)
    if (count % c == 0 && c <= 2 * (count / c)) return c;
  return root;
}

}  // namespace

Status colour_range(const AttentionFigure& f, ColourRange* out) {
  float lo = INFINITY, hi = -INFINITY;
  for (const std::vector<float>& m : f.maps)
    for (float v : m) lo = std::min(lo, v), hi = std::max(hi, v);
  if (f.vmin) lo = *f.vmin;
  if (f.vmax) hi = *f.vmax;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return invalid_argument("the colour scale's ends must be finite");
  if (f.vmin && f.vmax && !(lo < hi))
    return invalid_argument("the colour scale needs vmin < vmax (got " + format_value(lo) + " and " +
                            format_value(hi) + ")");
  if (!(lo < hi)) {  // a constant map, or one end given on the wrong side of the data
    if (f.vmin) hi = lo + 1;
    else if (f.vmax) lo = hi - 1;
    else if (hi > 0) lo = 0;
    else hi = lo + 1;
  }
  *out = {lo, hi};
  return Status::ok();
}

Status layout_attention(const AttentionFigure& f, Scene* scene) {
  const int n = static_cast<int>(f.tokens.size());
  const int count = static_cast<int>(f.maps.size());
  if (n == 0) return invalid_argument("a heat map needs at least one token");
  if (count == 0) return invalid_argument("a heat map needs at least one map");
  if (!f.panel_titles.empty() && f.panel_titles.size() != f.maps.size())
    return invalid_argument("one panel title per map: " + std::to_string(f.panel_titles.size()) + " titles, " +
                            std::to_string(count) + " maps");
  for (int p = 0; p < count; ++p) {
    const std::vector<float>& m = f.maps[static_cast<size_t>(p)];
    if (m.size() != static_cast<size_t>(n) * static_cast<size_t>(n))
      return invalid_argument("map " + std::to_string(p) + " has " + std::to_string(m.size()) + " values, " +
                              std::to_string(n) + " tokens need " + std::to_string(n * n));
    for (size_t i = 0; i < m.size(); ++i)
      if (!std::isfinite(m[i]))
        return invalid_argument("map " + std::to_string(p) + " has a non-finite value at query " +
                                std::to_string(i / static_cast<size_t>(n)) + ", key " +
                                std::to_string(i % static_cast<size_t>(n)));
  }
  ColourRange range;
  if (Status s = colour_range(f, &range); !s) return s;

  const bool grid = count > 1;
  const int cols = grid ? grid_columns(count) : 1;
  const int rows = (count + cols - 1) / cols;
  int cell = std::clamp((grid ? 256 : 640) / n, 1, grid ? 16 : 28);
  if (grid && n * cell < kMinPanelSide) cell = (kMinPanelSide + n - 1) / n;  // room for "head 11"
  const int label_scale = cell >= 20 ? 2 : 1;
  const int label_pitch = (font::kGlyphHeight + 1) * label_scale;  // a label line and a blank row
  const int step = (label_pitch + cell - 1) / cell;                 // label every step-th token
  const int side = n * cell;
  const bool panel_titles = grid && !f.panel_titles.empty();
  const int panel_title_h = panel_titles ? font::kGlyphHeight + kPanelTitleGap : 0;

  std::vector<std::string> labels(static_cast<size_t>(n));
  int label_len = 0;
  for (int i = 0; i < n; i += step) {
    labels[static_cast<size_t>(i)] = shorten(f.tokens[static_cast<size_t>(i)], kMaxLabelChars);
    label_len = std::max(label_len, text_length_px(labels[static_cast<size_t>(i)], label_scale));
  }

  const std::string y_caption = "query token", x_caption = "attended token (key)";
  const std::string hi_text = format_value(range.hi), lo_text = format_value(range.lo),
                    mid_text = format_value(0.5f * (range.lo + range.hi));
  const int legend_text_w = std::max({text_length_px(hi_text, 1), text_length_px(lo_text, 1),
                                      text_length_px(mid_text, 1)});

  // Horizontal positions.
  const int grid_x = kPad + font::kGlyphHeight + kCaptionGap + label_len + kLabelGap;
  const int grid_w = cols * side + (cols - 1) * kColumnGap;
  const int legend_x = grid_x + grid_w + kLegendGap;
  int width = legend_x + kLegendWidth + kLabelGap + legend_text_w + kPad;

  // The title at 2x when it fits the figure, else at 1x, widening the figure up to kMaxTitleWidth
  // and cutting the title beyond that.
  std::string title = f.title;
  const int title_scale = text_length_px(title, 2) <= width - 2 * kPad ? 2 : 1;
  title = shorten(title, static_cast<size_t>((std::max(width, kMaxTitleWidth) - 2 * kPad) / font::kAdvance));
  width = std::max(width, 2 * kPad + text_length_px(title, title_scale));
  const int x_caption_x = std::max(kPad, grid_x + (grid_w - text_length_px(x_caption, 1)) / 2);
  width = std::max(width, x_caption_x + text_length_px(x_caption, 1) + kPad);
  const int title_h = title.empty() ? 0 : font::kGlyphHeight * title_scale + kTitleGap;

  // Vertical positions.
  const int grid_y = kPad + title_h + panel_title_h;
  const int row_pitch = side + kRowGap + panel_title_h;
  const int grid_h = rows * side + (rows - 1) * (kRowGap + panel_title_h);
  const int body_h = std::max(grid_h, kMinBodyHeight);  // the legend's and the y caption's span
  const int labels_bottom = grid_y + grid_h + kLabelGap + label_len;
  const int height = std::max(labels_bottom + kCaptionGap + font::kGlyphHeight, grid_y + body_h) + kPad;
  if (width > kMaxSide || height > kMaxSide)
    return invalid_argument("the image would be " + std::to_string(width) + " x " + std::to_string(height) +
                            " pixels (at most " + std::to_string(kMaxSide) + " a side): show fewer tokens");

  Scene s;
  s.width = width;
  s.height = height;
  s.boxes.reserve(static_cast<size_t>(count) * static_cast<size_t>(n) * static_cast<size_t>(n) +
                  static_cast<size_t>(std::max(grid_h, kMinBodyHeight)));
  auto text = [&](int x, int y, const std::string& t, int scale, bool vertical, Rgb c, TextRole role) {
    s.texts.push_back(Text{x, y, t, scale, vertical, c, role});
  };

  if (!title.empty()) text(kPad, kPad, title, title_scale, false, kInk, TextRole::kTitle);
  for (int p = 0; p < count; ++p) {
    const int col = p % cols, row = p / cols;
    const int px = grid_x + col * (side + kColumnGap), py = grid_y + row * row_pitch;
    const std::vector<float>& m = f.maps[static_cast<size_t>(p)];
    const std::string head = f.panel_titles.empty() ? "" : f.panel_titles[static_cast<size_t>(p)] + ": ";
    for (int q = 0; q < n; ++q) {
      for (int k = 0; k < n; ++k) {
        const float v = m[static_cast<size_t>(q) * static_cast<size_t>(n) + static_cast<size_t>(k)];
        s.boxes.push_back(Box{px + k * cell, py + q * cell, cell, cell, colormap(range.position(v)), BoxRole::kCell,
                              head + f.tokens[static_cast<size_t>(q)] + " -> " + f.tokens[static_cast<size_t>(k)] +
                                  ": " + format_value(v)});
      }
    }
    s.frames.push_back({px, py, side, side, kFrameColour});
    if (panel_titles) {  // may reach half-way into the gap to the next map
      const size_t max_chars = static_cast<size_t>((side + kColumnGap / 2) / font::kAdvance);
      text(px, py - panel_title_h, shorten(f.panel_titles[static_cast<size_t>(p)], max_chars), 1, false, kInk,
           TextRole::kPanelTitle);
    }
    const int offset = (cell - font::kGlyphHeight * label_scale) / 2;  // centres a label line on its cell
    if (col == 0) {  // query labels, right-aligned against the map
      for (int q = 0; q < n; q += step) {
        const std::string& l = labels[static_cast<size_t>(q)];
        text(px - kLabelGap - text_length_px(l, label_scale), py + q * cell + offset, l, label_scale, false, kInk,
             TextRole::kTick);
      }
    }
    if (p + cols >= count) {  // the lowest map of its column: key labels, starting at the map's edge
      for (int k = 0; k < n; k += step) {
        const std::string& l = labels[static_cast<size_t>(k)];
        text(px + k * cell + offset, py + side + kLabelGap, l, label_scale, true, kInk, TextRole::kTick);
      }
    }
  }

  // Axis captions, centred on the grid.
  text(kPad, grid_y + (body_h - text_length_px(y_caption, 1)) / 2, y_caption, 1, true, kSoftInk, TextRole::kCaption);
  text(x_caption_x, labels_bottom + kCaptionGap, x_caption, 1, false, kSoftInk, TextRole::kCaption);

  // The legend: one box per pixel row, the maximum on top.
  for (int y = 0; y < body_h; ++y) {
    s.boxes.push_back(Box{legend_x, grid_y + y, kLegendWidth, 1,
                          colormap(1.0 - static_cast<double>(y) / (body_h - 1)), BoxRole::kLegend, ""});
  }
  s.frames.push_back({legend_x, grid_y, kLegendWidth, body_h, kFrameColour});
  const int value_x = legend_x + kLegendWidth + kLabelGap;
  text(value_x, grid_y, hi_text, 1, false, kInk, TextRole::kLegendValue);
  text(value_x, grid_y + (body_h - font::kGlyphHeight) / 2, mid_text, 1, false, kInk, TextRole::kLegendValue);
  text(value_x, grid_y + body_h - font::kGlyphHeight, lo_text, 1, false, kInk, TextRole::kLegendValue);

  *scene = std::move(s);
  return Status::ok();
}

}  // namespace encrt::heatmap
