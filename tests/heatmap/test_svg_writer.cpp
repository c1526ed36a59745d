// The SVG image: well-formed XML, one rect per cell and per legend row at the scene's places,
// tokens escaped and kept in UTF-8, text placed where the PNG draws it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/heatmap/attention_figure.h"
#include "cli/heatmap/colormap.h"
#include "cli/heatmap/svg_writer.h"
#include "heatmap/heatmap_test_util.h"
#include "support/fixtures.h"

using namespace encrt;
using namespace encrt::heatmap;

namespace {

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("svg: well-formed, a rect per cell and legend row, escaped UTF-8 labels", "[heatmap][svg]") {
  AttentionFigure f = heatmap_test::shifted_identity(4, {0, 1});
  f.tokens = {"[CLS]", "<a&b>", "caf\xC3\xA9", "\"it's\""};
  f.title = "m.encrt  layer 0  all 2 heads";
  Scene scene;
  REQUIRE(layout_attention(f, &scene).is_ok());
  const std::string svg = to_svg(scene);
  INFO(svg.substr(0, 600));
  CHECK(heatmap_test::xml_problem(svg) == "");
  CHECK(count(svg, "<svg ") == 1);
  CHECK(svg.find("width=\"" + std::to_string(scene.width) + "\" height=\"" + std::to_string(scene.height) + "\"") !=
        std::string::npos);
  CHECK(count(svg, "<rect class=\"cell\"") == 2 * 4 * 4);
  size_t legend_rows = 0;
  for (const Box& b : scene.boxes) legend_rows += b.role == BoxRole::kLegend;
  CHECK(count(svg, "<rect class=\"legend\"") == legend_rows);
  CHECK(count(svg, "<rect class=\"frame\"") == 3);  // two maps and the legend
  // The first cell (query 0 -> key 0 of head 0, probability 1) at its place in the scene's colour.
  const Box& first = scene.boxes[0];
  CHECK(svg.find("<rect class=\"cell\" x=\"" + std::to_string(first.x) + "\" y=\"" + std::to_string(first.y) +
                 "\" width=\"" + std::to_string(first.w) + "\" height=\"" + std::to_string(first.h) + "\" fill=\"" +
                 to_hex(colormap(1.0)) + "\"><title>head 0: [CLS] -&gt; [CLS]: 1</title></rect>") != std::string::npos);
  // Labels: escaped, on both axes (a horizontal and a turned one), UTF-8 kept as it is.
  // (one row of two maps: y labels once, x labels under both)
  CHECK(count(svg, ">&lt;a&amp;b&gt;</text>") == 3);
  CHECK(count(svg, ">caf\xC3\xA9</text>") == 3);
  CHECK(count(svg, ">&quot;it&apos;s&quot;</text>") == 3);
  CHECK(svg.find("<a&b>") == std::string::npos);
  CHECK(count(svg, "transform=\"rotate(-90 ") == 2 * 4 + 1);  // the x labels and the y caption
  CHECK(svg.find(">m.encrt  layer 0  all 2 heads</text>") != std::string::npos);
  CHECK(svg.find(">head 1</text>") != std::string::npos);
}

TEST_CASE("svg: text sits where the bitmap font puts it", "[heatmap][svg]") {
  Scene scene;
  scene.width = 100;
  scene.height = 100;
  Text h;
  h.x = 10, h.y = 20, h.text = "abc", h.scale = 2;
  Text v = h;
  v.vertical = true;
  scene.texts = {h, v};
  const std::string svg = to_svg(scene);
  // Horizontal: baseline 7 rows (x2) below the box's top. Turned: the baseline starts at the box's
  // bottom (its height is the text's length, 34 pixels), 14 pixels in from its left.
  CHECK(svg.find("x=\"10\" y=\"34\" font-size=\"20\"") != std::string::npos);
  CHECK(svg.find("x=\"24\" y=\"54\" font-size=\"20\" fill=\"#000000\" transform=\"rotate(-90 24 54)\">abc</text>") !=
        std::string::npos);
}

TEST_CASE("svg: escaping keeps UTF-8, replaces what XML cannot hold", "[heatmap][svg]") {
  CHECK(xml_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;");
  CHECK(xml_escape("\xE4\xB8\xAD\xC3\xA9") == "\xE4\xB8\xAD\xC3\xA9");
  CHECK(xml_escape(std::string("x\x01y", 3)) == "x\xEF\xBF\xBDy");  // a control character
  CHECK(xml_escape("\xFF") == "\xEF\xBF\xBD");                      // a malformed byte
}

TEST_CASE("svg: written to a file, an unwritable path is an error", "[heatmap][svg][bad_input]") {
  Scene scene;
  REQUIRE(layout_attention(heatmap_test::shifted_identity(3, {0}), &scene).is_ok());
  const std::string path = encrt::test::tmp_path("heatmap_file.svg");
  REQUIRE(write_svg(scene, path).is_ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  CHECK(content.str() == to_svg(scene));
  const Status st = write_svg(scene, "/nonexistent-encrt-dir/x.svg");
  CHECK(st.code() == StatusCode::kIoError);
}
