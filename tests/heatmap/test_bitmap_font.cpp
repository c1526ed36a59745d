// The embedded font and the label text: every printable ASCII character has its own glyph, other
// code points the replacement box, and labels are measured and cut in code points.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cli/heatmap/bitmap_font.h"
#include "cli/heatmap/display_text.h"
#include "cli/heatmap/scene.h"

using namespace encrt::heatmap;

namespace {

std::string glyph_bits(char32_t c) {
  std::string bits;
  for (int row = 0; row < font::kGlyphHeight; ++row)
    for (int col = 0; col < font::kGlyphWidth; ++col) bits += font::ink(c, col, row) ? '#' : '.';
  return bits;
}

}  // namespace

TEST_CASE("font: printable ASCII glyphs are distinct and inked, space is blank", "[heatmap][font]") {
  std::set<std::string> seen;
  for (char32_t c = 33; c <= 126; ++c) {
    INFO("character " << static_cast<char>(c));
    CHECK(font::has_glyph(c));
    const std::string bits = glyph_bits(c);
    CHECK(bits.find('#') != std::string::npos);
    CHECK(seen.insert(bits).second);  // no two characters look the same
    CHECK(bits != glyph_bits(0x4E2D));  // nor like the replacement box
  }
  CHECK(glyph_bits(' ').find('#') == std::string::npos);
  // Descenders reach below the baseline; capitals do not.
  auto below_baseline = [](char32_t c) {
    for (int col = 0; col < font::kGlyphWidth; ++col)
      if (font::ink(c, col, font::kAscent)) return true;
    return false;
  };
  for (char c : std::string("gjpqy,")) CHECK(below_baseline(static_cast<char32_t>(c)));
  for (char c : std::string("ABCXYZ019")) CHECK_FALSE(below_baseline(static_cast<char32_t>(c)));
  CHECK_FALSE(font::ink('A', -1, 0));
  CHECK_FALSE(font::ink('A', 0, font::kGlyphHeight));
}

TEST_CASE("font: code points outside ASCII draw as the replacement box", "[heatmap][font]") {
  CHECK_FALSE(font::has_glyph(0xE9));
  CHECK_FALSE(font::has_glyph(0x4E2D));
  CHECK_FALSE(font::has_glyph(0x7F));
  CHECK(glyph_bits(0xE9) == glyph_bits(0x4E2D));
  CHECK(glyph_bits(0xE9) == glyph_bits(0xFFFD));
}

TEST_CASE("display text: UTF-8 decoded leniently, lengths and cuts in code points", "[heatmap][font]") {
  CHECK(code_points("caf\xC3\xA9") == std::vector<char32_t>{'c', 'a', 'f', 0xE9});
  CHECK(code_points("\xE4\xB8\xAD") == std::vector<char32_t>{0x4E2D});
  // A stray continuation byte, a truncated sequence, an overlong form, a surrogate: one U+FFFD per bad byte.
  CHECK(code_points("a\x80" "b") == std::vector<char32_t>{'a', 0xFFFD, 'b'});
  CHECK(code_points("\xE4\xB8") == std::vector<char32_t>{0xFFFD, 0xFFFD});
  CHECK(code_points("\xC0\xAF") == std::vector<char32_t>{0xFFFD, 0xFFFD});
  CHECK(code_points("\xED\xA0\x80") == std::vector<char32_t>{0xFFFD, 0xFFFD, 0xFFFD});
  CHECK(to_utf8(code_points("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80")) == "caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80");

  CHECK(shorten("##ing", 12) == "##ing");
  CHECK(shorten("internationalization", 12) == "internatio..");
  CHECK(shorten("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9..");
  CHECK(text_length_px("abc", 1) == 3 * font::kAdvance - 1);
  CHECK(text_length_px("\xC3\xA9t\xC3\xA9", 2) == (3 * font::kAdvance - 1) * 2);  // 3 code points, 5 bytes
  CHECK(text_length_px("", 1) == 0);
}
