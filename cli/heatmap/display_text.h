// Token text as the images show it. Tokens come from a model file's vocabulary and may be any
// bytes, so decoding here never fails: each malformed UTF-8 byte becomes U+FFFD, which keeps a
// label's length (the bitmap font draws one glyph per code point) and the SVG valid XML.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace encrt::heatmap {

std::vector<char32_t> code_points(std::string_view utf8);
std::string to_utf8(const std::vector<char32_t>& text);
// `text` cut to at most `max_chars` code points; a cut label ends in ".." so it cannot pass for a
// whole token.
std::string shorten(std::string_view utf8, size_t max_chars);

}  // namespace encrt::heatmap
