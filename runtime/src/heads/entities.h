// The pieces of Hugging Face's token-classification aggregation that encrt::aggregate_entities
// (entities.cpp) is built from, exposed for tests and for heads that group tokens themselves.
#pragma once

#include <string>
#include <string_view>

namespace encrt::heads {

// The number of Unicode code points of valid UTF-8 `s` (Python's len of the str).
size_t code_points(std::string_view s);

// The pipeline's subword test for WordPiece tokenizers: `token` (the vocabulary's text, "##ing")
// continues a word when it is not as long as `covered`, the text its offsets cover; an unknown
// token never does.
bool continues_word_by_length(std::string_view token, std::string_view covered, bool unknown);

// A label's BIO parts: "B-PER" → ('B', "PER"), "I-PER" → ('I', "PER"), anything else → ('I', label)
// (a label without a prefix continues an entity of its own name).
struct BioTag {
  char position;
  std::string tag;
};
BioTag bio_tag(const std::string& label);

// The name a group of tokens starting with `label` gets: what follows its first '-', or the whole
// label when it has none ("B-PER" → "PER", "O" → "O").
std::string group_name(const std::string& label);

}  // namespace encrt::heads
