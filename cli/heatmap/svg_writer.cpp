#include "cli/heatmap/svg_writer.h"

#include <cstdio>
#include <fstream>

#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/display_text.h"

namespace encrt::heatmap {

namespace {

// A monospace font's advance is about 0.6 em (DejaVu Sans Mono: 0.602), so a font size of
// kAdvance / 0.6 = 10 pixels per scale step gives the bitmap font's 6-pixel advance, and its cap
// height (0.73 em) about the bitmap font's 7-pixel ascent.
constexpr int kFontSizePerScale = 10;

const char* role_class(TextRole r) {
  switch (r) {
    case TextRole::kTitle: return "title";
    case TextRole::kPanelTitle: return "panel-title";
    case TextRole::kTick: return "tick";
    case TextRole::kCaption: return "caption";
    case TextRole::kLegendValue: return "legend-value";
  }
  return "text";
}

bool is_xml_char(char32_t c) {  // XML 1.0's Char production
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

}  // namespace

std::string xml_escape(std::string_view utf8) {
  std::string s;
  for (char32_t c : code_points(utf8)) {
    switch (c) {
      case '&': s += "&amp;"; break;
      case '<': s += "&lt;"; break;
      case '>': s += "&gt;"; break;
      case '"': s += "&quot;"; break;
      case '\'': s += "&apos;"; break;
      default: s += to_utf8({is_xml_char(c) ? c : char32_t{0xFFFD}});  // control characters cannot appear in XML
    }
  }
  return s;
}

std::string to_svg(const Scene& scene) {
  const std::string w = std::to_string(scene.width), h = std::to_string(scene.height);
  std::string s;
  s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w +
       " " + h + "\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\">\n";
  s += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"" +
       to_hex(scene.background) + "\"/>\n";
  // crispEdges: adjacent cells meet without anti-aliased seams.
  s += "<g shape-rendering=\"crispEdges\">\n";
  for (const Box& b : scene.boxes) {
    s += "<rect class=\"";
    s += b.role == BoxRole::kCell ? "cell" : "legend";
    s += "\" x=\"" + std::to_string(b.x) + "\" y=\"" + std::to_string(b.y) + "\" width=\"" + std::to_string(b.w) +
         "\" height=\"" + std::to_string(b.h) + "\" fill=\"" + to_hex(b.fill) + "\"";
    if (b.tooltip.empty()) s += "/>\n";
    else s += "><title>" + xml_escape(b.tooltip) + "</title></rect>\n";
  }
  for (const Frame& f : scene.frames) {
    // The 1-pixel stroke centred on the edges of a rect half a pixel outside the area covers the
    // pixels just outside it, as Canvas::outline draws them.
    char x[32], y[32];
    std::snprintf(x, sizeof x, "%.1f", f.x - 0.5);
    std::snprintf(y, sizeof y, "%.1f", f.y - 0.5);
    s += "<rect class=\"frame\" x=\"" + std::string(x) + "\" y=\"" + y + "\" width=\"" +
         std::to_string(f.w + 1) + "\" height=\"" + std::to_string(f.h + 1) + "\" fill=\"none\" stroke=\"" +
         to_hex(f.color) + "\" stroke-width=\"1\"/>\n";
  }
  s += "</g>\n";
  for (const Text& t : scene.texts) {
    const int size = kFontSizePerScale * t.scale, ascent = font::kAscent * t.scale;
    // The baseline's start: left of the box at the ascent for horizontal text; for vertical text
    // the box's bottom, the ascent in from its left, turned a quarter counter-clockwise.
    const int bx = t.x + (t.vertical ? ascent : 0);
    const int by = t.vertical ? t.y + text_extent(t).h : t.y + ascent;
    s += "<text class=\"" + std::string(role_class(t.role)) + "\" x=\"" + std::to_string(bx) + "\" y=\"" +
         std::to_string(by) + "\" font-size=\"" + std::to_string(size) + "\" fill=\"" + to_hex(t.color) + "\"";
    if (t.vertical) s += " transform=\"rotate(-90 " + std::to_string(bx) + " " + std::to_string(by) + ")\"";
    s += ">" + xml_escape(t.text) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

Status write_svg(const Scene& scene, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error("cannot write '" + path + "'");
  out << to_svg(scene);
  out.close();
  if (!out) return io_error("cannot write '" + path + "'");
  return Status::ok();
}

}  // namespace encrt::heatmap
