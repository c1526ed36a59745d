// UTF-8 to code points and back. Input text is untrusted: a malformed sequence (a stray
// continuation byte, a truncated sequence, an overlong form, a surrogate, a value above U+10FFFF)
// is an error that names its byte offset, never a crash or a silent replacement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "encrt/status.hpp"

namespace encrt::text {

Status decode_utf8(std::string_view text, std::vector<char32_t>* out);
void append_utf8(char32_t c, std::string* out);

}  // namespace encrt::text
