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
//
// Offsets: every normalized character remembers the original character it came from (all the
// characters one original character expands to, by NFD or lowercasing, point back to it, and
// removed characters leave no trace), which is how Hugging Face's NormalizedString aligns them. A
// piece then spans from the start of its first character's origin to the end of its last one's.
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

// One token of a text: its id, the bytes of the text it covers and the word it belongs to.
struct Piece {
  int32_t id = 0;
  uint32_t start = 0, end = 0;  // [start, end) UTF-8 byte offsets into the text
  // The word's index in the text: words are the pre-tokenized words and the special tokens
  // written in the text, counted from 0 in order (Hugging Face's word_ids()).
  int32_t word = 0;
};

class BertTokenizer {
 public:
  // `vocabulary`: token text by id; `info`: the normalization settings and special ids.
  BertTokenizer(const std::vector<std::string>& vocabulary, const detail::TokenizerInfo& info);

  // The word-piece ids of `text` (UTF-8), without [CLS] / [SEP], appended to `ids`.
  Status tokenize(std::string_view text, std::vector<int32_t>* ids) const;

  // The pieces of `text` with their offsets and words, without [CLS] / [SEP], into `out`.
  Status pieces(std::string_view text, std::vector<Piece>* out) const;

  // [CLS] pieces [SEP], the pieces cut so that the whole is at most `max_length` ids (>= 2 when
  // the vocabulary has [CLS] and [SEP]), as the model's inputs.
  Status encode(std::string_view text, int max_length, std::vector<int32_t>* ids) const;

  // The normalized, pre-tokenized words of `text` (steps 2 and 3), for tests and tools.
  Status words(std::string_view text, std::vector<std::string>* out) const;

  const detail::TokenizerInfo& info() const { return info_; }

 private:
  // A normalized word and, per character, the index of the original character it came from.
  struct Word {
    std::u32string chars;
    std::vector<uint32_t> origin;
  };
  // The words of chars[begin, end).
  void normalized_words(const std::vector<char32_t>& chars, size_t begin, size_t end, std::vector<Word>* words) const;
  // `byte_at[i]`: the byte offset of character i of the text (one entry past the last character).
  Status word_pieces(const Word& word, const std::vector<uint32_t>& byte_at, int32_t word_index,
                     std::vector<Piece>* out) const;

  std::unordered_map<std::string, int32_t> ids_;            // token text → id (later duplicates win)
  detail::TokenizerInfo info_;
  std::vector<std::pair<std::u32string, int32_t>> specials_;  // matched in the raw text
};

}  // namespace encrt::text
