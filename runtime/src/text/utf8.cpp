#include "text/utf8.h"

namespace encrt::text {

Status decode_utf8(std::string_view text, std::vector<char32_t>* out) {
  out->clear();
  out->reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char b = s[i];
    int len;
    char32_t c, min;
    if (b < 0x80) {
      out->push_back(b);
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2, c = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3, c = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4, c = b & 0x07, min = 0x10000;
    } else {
      return Status(StatusCode::kInvalidArgument, "text is not valid UTF-8: byte " + std::to_string(b) +
                                                      " at offset " + std::to_string(i) + " cannot start a character");
    }
    if (i + len > n)
      return Status(StatusCode::kInvalidArgument,
                    "text is not valid UTF-8: the character at offset " + std::to_string(i) + " is cut off");
    for (int k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80)
        return Status(StatusCode::kInvalidArgument, "text is not valid UTF-8: byte " + std::to_string(s[i + k]) +
                                                        " at offset " + std::to_string(i + k) +
                                                        " should continue the character at " + std::to_string(i));
      c = (c << 6) | (s[i + k] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      return Status(StatusCode::kInvalidArgument, "text is not valid UTF-8: the character at offset " +
                                                      std::to_string(i) +
                                                      " is an overlong form, a surrogate or beyond U+10FFFF");
    out->push_back(c);
    i += static_cast<size_t>(len);
  }
  return Status::ok();
}

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace encrt::text
