#include "cli/heatmap/display_text.h"

namespace encrt::heatmap {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Length of the sequence a lead byte starts (0: not a lead byte), and the smallest code point a
// sequence of that length may encode (longer forms are overlong, hence malformed).
int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

}  // namespace

std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char lead = static_cast<unsigned char>(s[i]);
    const int n = sequence_length(lead);
    if (n == 1) {
      out.push_back(lead);
      ++i;
      continue;
    }
    bool ok = n > 0 && i + static_cast<size_t>(n) <= s.size();
    char32_t cp = n == 2 ? (lead & 0x1Fu) : n == 3 ? (lead & 0x0Fu) : (lead & 0x07u);
    for (int k = 1; ok && k < n; ++k) {
      const unsigned char c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((c & 0xC0u) != 0x80u) ok = false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if (ok && n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;  // overlong, surrogate
    if (ok && n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ok = false;
    if (ok) {
      out.push_back(cp);
      i += static_cast<size_t>(n);
    } else {  // one replacement per bad byte, then resynchronize on the next byte
      out.push_back(kReplacement);
      ++i;
    }
  }
  return out;
}

std::string to_utf8(const std::vector<char32_t>& text) {
  std::string out;
  for (char32_t c : text) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::string shorten(std::string_view utf8, size_t max_chars) {
  std::vector<char32_t> cps = code_points(utf8);
  if (cps.size() > max_chars && max_chars >= 3) {
    cps.resize(max_chars - 2);
    cps.push_back('.');
    cps.push_back('.');
  } else if (cps.size() > max_chars) {
    cps.resize(max_chars);
  }
  return to_utf8(cps);
}

}  // namespace encrt::heatmap
