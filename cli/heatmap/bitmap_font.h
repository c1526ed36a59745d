// A small bitmap font for the labels of the PNG heat maps, defined in bitmap_font.cpp: printable
// ASCII in 5 x 9 pixel glyphs (7 rows above the baseline, 2 below for descenders). Any other code
// point (accented letters, CJK, U+FFFD) draws as a replacement glyph, a hollow box, so a label
// keeps one glyph per character and its width stays predictable.
#pragma once

namespace encrt::heatmap::font {

constexpr int kGlyphWidth = 5;
constexpr int kAscent = 7;    // rows from the glyph's top to the baseline
constexpr int kDescent = 2;   // rows below the baseline (g, j, p, q, y, comma, underscore)
constexpr int kGlyphHeight = kAscent + kDescent;
constexpr int kAdvance = kGlyphWidth + 1;  // one column of space between glyphs

// Whether pixel (col, row) of code point `c`'s glyph is ink; col in [0, 5), row in [0, 9).
bool ink(char32_t c, int col, int row);
// Whether `c` has a glyph of its own (printable ASCII) rather than the replacement box.
bool has_glyph(char32_t c);

}  // namespace encrt::heatmap::font
