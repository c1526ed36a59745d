// BERT's WordPiece tokenizer, producing the ids Hugging Face's BertTokenizerFast produces:
//   1. special tokens ([CLS], [SEP], [PAD], [UNK], [MASK]) written in the text are matched first,
//      on the raw text, leftmost-longest, and become their ids;
//   2. the text between them is normalized: clean_text (control characters dropped, whitespace to
//      ' '), CJK ideographs padded with spaces, accents stripped (NFD, non-spacing marks removed),
//      lowercased: in that order, per the file's Vocabulary settings;
//   3. pre-tokenized: split at whitespace, every punctuation character a word of its own;
//   4. each word split greedily, longest match first, into vocabulary pieces ("##" marks a piece
//      that continues a word); a word with no such split, or over 100 characters, is [UNK].
// The per-character behaviour of steps 2 and 3 is read off Hugging Face's implementation by
// make_unicode_tables.py (unicode_tables.inc), so the two agree character for character.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "encrt/status.hpp"
#include "model/model_impl.h"

namespace encrt::text {

class BertTokenizer {
 public:
  // `vocabulary`: token text by id; `info`: the normalization settings and special ids.
  BertTokenizer(const std::vector<std::string>& vocabulary, const detail::TokenizerInfo& info);

  // The word-piece ids of `text` (UTF-8), without [CLS] / [SEP], appended to `ids`.
  Status tokenize(std::string_view text, std::vector<int32_t>* ids) const;

  // [CLS] pieces [SEP], the pieces cut so that the whole is at most `max_length` ids (>= 2 when
  // the vocabulary has [CLS] and [SEP]), as the model's inputs.
  Status encode(std::string_view text, int max_length, std::vector<int32_t>* ids) const;

  // The normalized, pre-tokenized words of `text` (steps 2 and 3), for tests and tools.
  Status words(std::string_view text, std::vector<std::string>* out) const;

 private:
  Status normalized_words(const std::u32string& segment, std::vector<std::u32string>* words) const;
  Status word_pieces(const std::u32string& word, std::vector<int32_t>* ids) const;

  std::unordered_map<std::string, int32_t> ids_;            // token text → id (later duplicates win)
  detail::TokenizerInfo info_;
  std::vector<std::pair<std::u32string, int32_t>> specials_;  // matched in the raw text
};

}  // namespace encrt::text
