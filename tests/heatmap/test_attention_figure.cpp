// The attention figure's layout and its raster image: cells coloured by value, the legend's
// ends, labels drawn in the margins glyph by glyph, nothing overlapping, sizes that stay
// readable, PNG files that decode back to the same pixels, and bad figures refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cli/heatmap/attention_figure.h"
#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/canvas.h"
#include "cli/heatmap/colormap.h"
#include "cli/heatmap/figure_file.h"
#include "cli/heatmap/png_writer.h"
#include "heatmap/heatmap_test_util.h"
#include "support/fixtures.h"

using namespace encrt;
using namespace encrt::heatmap;

namespace {

Scene laid_out(const AttentionFigure& f) {
  Scene s;
  const Status st = layout_attention(f, &s);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  return s;
}

std::vector<const Box*> boxes_of(const Scene& s, BoxRole role) {
  std::vector<const Box*> out;
  for (const Box& b : s.boxes)
    if (b.role == role) out.push_back(&b);
  return out;
}

bool overlap(const Extent& a, const Extent& b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

// Every text inside the image, no two texts touching, no text over a cell or the legend.
void check_no_collisions(const Scene& s) {
  std::vector<Extent> texts;
  for (const Text& t : s.texts) texts.push_back(text_extent(t));
  for (size_t i = 0; i < texts.size(); ++i) {
    const Extent& a = texts[i];
    INFO("text '" << s.texts[i].text << "' at " << a.x << "," << a.y << " size " << a.w << "x" << a.h << " in "
                  << s.width << "x" << s.height);
    CHECK(a.x >= 0);
    CHECK(a.y >= 0);
    CHECK(a.x + a.w <= s.width);
    CHECK(a.y + a.h <= s.height);
    for (size_t j = i + 1; j < texts.size(); ++j) {
      INFO("and text '" << s.texts[j].text << "'");
      CHECK_FALSE(overlap(a, texts[j]));
    }
    // Each map and the legend have a frame around all their cells.
    for (const Frame& f : s.frames) CHECK_FALSE(overlap(a, {f.x - 1, f.y - 1, f.w + 2, f.h + 2}));
  }
}

const Text* find_text(const Scene& s, const std::string& text, bool vertical) {
  for (const Text& t : s.texts)
    if (t.text == text && t.vertical == vertical) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("figure: cells of probability 1 and 0, and the legend's ends, in the image", "[heatmap][figure]") {
  AttentionFigure f = heatmap_test::shifted_identity(4, {0});
  f.maps[0][1] = 0.5f;  // query 0 -> key 1
  const Scene s = laid_out(f);
  const std::vector<const Box*> cells = boxes_of(s, BoxRole::kCell);
  REQUIRE(cells.size() == 16);
  const Canvas c = rasterize(s);
  REQUIRE(c.width() == s.width);
  REQUIRE(c.height() == s.height);
  auto centre = [&](const Box& b) { return c.at(b.x + b.w / 2, b.y + b.h / 2); };
  // Cells are row-major by query: cell (q, k) is boxes[q * 4 + k].
  CHECK(centre(*cells[0]) == colormap(1.0));   // (0, 0): probability 1
  CHECK(centre(*cells[5]) == colormap(1.0));   // (1, 1)
  CHECK(centre(*cells[4]) == colormap(0.0));   // (1, 0): probability 0
  CHECK(centre(*cells[1]) == colormap(0.5));   // (0, 1): the middle of the scale [0, 1]
  CHECK(cells[1]->x == cells[0]->x + cells[0]->w);  // keys run right, queries down
  CHECK(cells[4]->y == cells[0]->y + cells[0]->h);
  CHECK(cells[0]->tooltip == "t0 -> t0: 1");
  CHECK(cells[1]->tooltip == "t0 -> t1: 0.5");

  const std::vector<const Box*> legend = boxes_of(s, BoxRole::kLegend);
  REQUIRE(legend.size() >= 72);
  CHECK(legend.front()->y < legend.back()->y);  // the maximum on top
  CHECK(c.at(legend.front()->x + 2, legend.front()->y) == colormap(1.0));
  CHECK(c.at(legend.back()->x + 2, legend.back()->y) == colormap(0.0));
  CHECK(legend.front()->x > cells[3]->x + cells[3]->w);  // right of the map
  REQUIRE(find_text(s, "1", false) != nullptr);  // its max and min values
  REQUIRE(find_text(s, "0", false) != nullptr);
  CHECK(find_text(s, "1", false)->y < find_text(s, "0", false)->y);
  CHECK(find_text(s, "0.5", false) != nullptr);

  // Label pixels in the margins: the left margin beside row 0 holds ink, the strip under the map
  // too; the margin between the title and the map holds none.
  const Box& first = *cells[0];
  int left_ink = 0, bottom_ink = 0, gap_ink = 0;
  const Rgb background = s.background;
  for (int y = first.y; y < first.y + first.h; ++y)
    for (int x = 0; x < first.x - 1; ++x) left_ink += c.at(x, y) != background;
  const int map_bottom = cells[15]->y + cells[15]->h;
  for (int y = map_bottom + 2; y < s.height; ++y)
    for (int x = first.x; x < first.x + first.w; ++x) bottom_ink += c.at(x, y) != background;
  CHECK(find_text(s, "t0", false) != nullptr);
  for (int y = first.y - 6; y < first.y - 1; ++y)
    for (int x = first.x; x < cells[3]->x + cells[3]->w; ++x) gap_ink += c.at(x, y) != background;
  CHECK(left_ink > 10);
  CHECK(bottom_ink > 10);
  CHECK(gap_ink == 0);
}

TEST_CASE("figure: labels are drawn glyph by glyph, horizontal and turned", "[heatmap][figure][font]") {
  AttentionFigure f = heatmap_test::shifted_identity(3, {0});
  f.tokens = {"[CLS]", "gj", "[SEP]"};
  const Scene s = laid_out(f);
  const Canvas c = rasterize(s);
  const Text* y_label = find_text(s, "gj", false);
  const Text* x_label = find_text(s, "gj", true);
  REQUIRE(y_label != nullptr);
  REQUIRE(x_label != nullptr);
  for (const Text* t : {y_label, x_label}) {
    const int k = t->scale;
    const Extent e = text_extent(*t);
    for (int i = 0; i < 2; ++i)
      for (int row = 0; row < font::kGlyphHeight; ++row)
        for (int col = 0; col < font::kGlyphWidth; ++col) {
          const int u = (i * font::kAdvance + col) * k;  // along the text
          // Horizontal: u runs right; turned: u runs up from the box's bottom and rows run right.
          const int x = t->vertical ? e.x + row * k : e.x + u;
          const int y = t->vertical ? e.y + e.h - 1 - u : e.y + row * k;
          INFO("glyph " << i << " col " << col << " row " << row << (t->vertical ? " (turned)" : ""));
          CHECK((c.at(x, y) == t->color) == font::ink(static_cast<char32_t>("gj"[i]), col, row));
        }
  }
}

TEST_CASE("figure: nothing collides, for 1 to 200 tokens and grids of heads", "[heatmap][figure]") {
  for (int n : {1, 2, 3, 12, 40, 64, 65, 128, 200}) {
    for (int maps : {1, 2, 4, 7, 8, 12}) {
      INFO(n << " tokens, " << maps << " maps");
      std::vector<int> diagonals;
      for (int m = 0; m < maps; ++m) diagonals.push_back(m % 3 - 1);
      AttentionFigure f = heatmap_test::shifted_identity(n, diagonals);
      f.tokens[0] = "[CLS]";
      f.tokens[static_cast<size_t>(n - 1)] = "##internationalization";  // cut to 12 characters
      f.title = "a model  layer 5  head 11";
      const Scene s = laid_out(f);
      CHECK(boxes_of(s, BoxRole::kCell).size() == static_cast<size_t>(maps * n * n));
      check_no_collisions(s);
      for (const Text& t : s.texts) CHECK(t.text.size() <= 30);
    }
  }
}

TEST_CASE("figure: cell sizes and label density for short and long texts", "[heatmap][figure]") {
  auto cell_of = [](const Scene& s) { return s.boxes.front().w; };
  auto ticks = [](const Scene& s) {
    size_t n = 0;
    for (const Text& t : s.texts) n += t.role == TextRole::kTick;
    return n;
  };
  const Scene short_map = laid_out(heatmap_test::shifted_identity(12, {0}));
  CHECK(cell_of(short_map) == 28);
  for (const Text& t : short_map.texts)
    if (t.role == TextRole::kTick) CHECK(t.scale == 2);
  CHECK(ticks(short_map) == 24);  // every token on both axes

  const Scene long_map = laid_out(heatmap_test::shifted_identity(64, {0}));
  CHECK(cell_of(long_map) == 10);  // still one label line per cell
  CHECK(ticks(long_map) == 128);
  CHECK(long_map.width < 900);

  const Scene longer = laid_out(heatmap_test::shifted_identity(200, {0}));
  CHECK(cell_of(longer) == 3);
  CHECK(ticks(longer) == 2 * 50);  // every 4th token: 4 cells of 3 pixels hold a 10-pixel label line
  CHECK(longer.width < 900);

  const Scene grid = laid_out(heatmap_test::shifted_identity(12, std::vector<int>(12, 0)));
  CHECK(cell_of(grid) == 16);
  size_t panel_titles = 0;
  for (const Text& t : grid.texts) panel_titles += t.role == TextRole::kPanelTitle;
  CHECK(panel_titles == 12);
  CHECK(find_text(grid, "head 11", false) != nullptr);
  // 4 columns x 3 rows: y labels beside the 3 rows, x labels under the 4 columns.
  CHECK(ticks(grid) == 12 * 3 + 12 * 4);
  CHECK(grid.width > grid.height);
}

TEST_CASE("figure: the colour scale's range", "[heatmap][figure]") {
  AttentionFigure f = heatmap_test::shifted_identity(3, {0});
  f.maps[0][1] = -0.5f;
  ColourRange r;
  REQUIRE(colour_range(f, &r).is_ok());
  CHECK(r.lo == -0.5f);
  CHECK(r.hi == 1.0f);
  f.vmin = 0.0f;
  f.vmax = 2.0f;
  REQUIRE(colour_range(f, &r).is_ok());
  CHECK(r.lo == 0.0f);
  CHECK(r.hi == 2.0f);
  const Scene s = laid_out(f);
  const Canvas c = rasterize(s);
  const Box& one = s.boxes[0];  // value 1 on [0, 2]: the middle; -0.5 clamps to the bottom
  CHECK(c.at(one.x + 1, one.y + 1) == colormap(0.5));
  CHECK(c.at(s.boxes[1].x + 1, s.boxes[1].y + 1) == colormap(0.0));

  AttentionFigure flat;
  flat.tokens = {"a", "b"};
  flat.maps = {std::vector<float>(4, 0.25f)};
  REQUIRE(colour_range(flat, &r).is_ok());  // a constant map: [0, v]
  CHECK(r.lo == 0.0f);
  CHECK(r.hi == 0.25f);
  flat.maps = {std::vector<float>(4, 0.0f)};
  REQUIRE(colour_range(flat, &r).is_ok());
  CHECK(r.lo == 0.0f);
  CHECK(r.hi == 1.0f);
}

TEST_CASE("figure: bad figures are errors that say what is wrong", "[heatmap][figure][bad_input]") {
  Scene s;
  AttentionFigure none;
  CHECK(layout_attention(none, &s).code() == StatusCode::kInvalidArgument);
  AttentionFigure f = heatmap_test::shifted_identity(3, {0});
  f.maps[0].pop_back();
  Status st = layout_attention(f, &s);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("8 values") != std::string::npos);
  f = heatmap_test::shifted_identity(3, {0});
  f.maps[0][4] = std::nanf("");
  st = layout_attention(f, &s);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("query 1, key 1") != std::string::npos);
  f = heatmap_test::shifted_identity(3, {0});
  f.vmin = 1.0f;
  f.vmax = 1.0f;
  CHECK(layout_attention(f, &s).code() == StatusCode::kInvalidArgument);
  f = heatmap_test::shifted_identity(3, {0, 1});
  f.panel_titles.pop_back();
  CHECK(layout_attention(f, &s).code() == StatusCode::kInvalidArgument);
  f = heatmap_test::shifted_identity(16, std::vector<int>(4096, 0));  // 64 columns of maps
  st = layout_attention(f, &s);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("16384") != std::string::npos);
}

TEST_CASE("png: written with libpng and decoded back to the same pixels", "[heatmap][png]") {
  if (!png_available()) {
    WARN("SKIPPED: this build has no libpng");
    return;
  }
  AttentionFigure f = heatmap_test::shifted_identity(5, {0, 1, -1, 2});
  f.title = "png round trip";
  const Scene s = laid_out(f);
  const Canvas c = rasterize(s);
  const std::string path = encrt::test::tmp_path("heatmap_round_trip.png");
  const Status st = write_image(s, path);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  heatmap_test::DecodedPng png;
  REQUIRE(heatmap_test::decode_png(path, &png) == "");
  CHECK(png.width == s.width);
  CHECK(png.height == s.height);
  REQUIRE(png.rgb.size() == static_cast<size_t>(c.width()) * c.height() * 3);
  CHECK(std::equal(png.rgb.begin(), png.rgb.end(), c.rgb()));
  const Box& cell = s.boxes[0];
  CHECK(png.at(cell.x, cell.y) == colormap(1.0));
}

TEST_CASE("image files: the extension chooses the type; unknown types and bad paths are errors",
          "[heatmap][bad_input]") {
  ImageFormat format;
  REQUIRE(image_format_of("map.svg", &format).is_ok());
  CHECK(format == ImageFormat::kSvg);
  REQUIRE(image_format_of("dir.v2/MAP.SVG", &format).is_ok());
  Status st = image_format_of("map.jpg", &format);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("'.jpg'") != std::string::npos);
  CHECK(image_format_of("dir.png/map", &format).code() == StatusCode::kInvalidArgument);
  if (png_available()) {
    REQUIRE(image_format_of("map.Png", &format).is_ok());
    CHECK(format == ImageFormat::kPng);
  } else {
    CHECK(image_format_of("map.png", &format).code() == StatusCode::kUnsupported);
  }
  const Scene s = laid_out(heatmap_test::shifted_identity(2, {0}));
  for (const char* path : {"/nonexistent-encrt-dir/map.svg", "/nonexistent-encrt-dir/map.png"}) {
    if (!png_available() && std::string(path).find(".png") != std::string::npos) continue;
    st = write_image(s, path);
    CHECK(st.code() == StatusCode::kIoError);
    CHECK(st.message().find(path) != std::string::npos);
  }
}
