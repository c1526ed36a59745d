#include "text/bert_tokenizer.h"

#include <algorithm>

#include "text/utf8.h"

namespace encrt::text {

namespace tables {
struct CharRange {
  uint32_t first, last;
  uint8_t flags;
};
struct CharMapping {
  uint32_t from;
  uint32_t offset, length;  // into the matching k*Data array
};
constexpr uint8_t kRemove = 1, kToSpace = 2, kChinese = 4, kSplit = 8, kPunct = 16;
#include "text/unicode_tables.inc"
}  // namespace tables

namespace {

constexpr size_t kMaxCharsPerWord = 100;  // BertTokenizerFast's max_input_chars_per_word
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;

uint8_t flags_of(char32_t c) {
  const auto* end = std::end(tables::kRanges);
  const auto* it = std::upper_bound(std::begin(tables::kRanges), end, static_cast<uint32_t>(c),
                                    [](uint32_t v, const tables::CharRange& r) { return v < r.first; });
  if (it == std::begin(tables::kRanges)) return 0;
  --it;
  return c <= it->last ? it->flags : 0;
}

// The mapping of c in `table`, or null when the table leaves c unchanged.
template <size_t N>
const tables::CharMapping* find_mapping(const tables::CharMapping (&table)[N], char32_t c) {
  const auto* it = std::lower_bound(std::begin(table), std::end(table), static_cast<uint32_t>(c),
                                    [](const tables::CharMapping& m, uint32_t v) { return m.from < v; });
  return it != std::end(table) && it->from == c ? it : nullptr;
}

}  // namespace

BertTokenizer::BertTokenizer(const std::vector<std::string>& vocabulary, const detail::TokenizerInfo& info)
    : info_(info) {
  ids_.reserve(vocabulary.size());
  for (size_t i = 0; i < vocabulary.size(); ++i) ids_[vocabulary[i]] = static_cast<int32_t>(i);
  for (int32_t id : {info.cls_id, info.sep_id, info.pad_id, info.unk_id, info.mask_id}) {
    if (id < 0) continue;
    std::vector<char32_t> chars;
    if (!decode_utf8(vocabulary[static_cast<size_t>(id)], &chars) || chars.empty()) continue;
    specials_.emplace_back(std::u32string(chars.begin(), chars.end()), id);
  }
  // Longest first, so that at one position the longest special token wins.
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

void BertTokenizer::normalized_words(const std::vector<char32_t>& chars, size_t begin, size_t end,
                                     std::vector<Word>* words) const {
  // Normalization (clean_text, CJK padding, accent stripping, lowercasing), per character: every
  // character written for chars[i] points back to i.
  std::u32string norm;
  std::vector<uint32_t> origin;
  norm.reserve(end - begin);
  origin.reserve(end - begin);
  uint32_t from = 0;
  auto put = [&](char32_t c) {
    norm.push_back(c);
    origin.push_back(from);
  };
  auto push_lower = [&](char32_t c) {
    const tables::CharMapping* m = info_.lowercase ? find_mapping(tables::kLower, c) : nullptr;
    if (!m) return put(c);
    for (uint32_t i = 0; i < m->length; ++i) put(tables::kLowerData[m->offset + i]);
  };
  auto push = [&](char32_t c) {
    if (!info_.strip_accents) return push_lower(c);
    if (c >= kHangulFirst && c <= kHangulLast) {  // canonical decomposition by formula
      const char32_t s = c - kHangulFirst;
      push_lower(0x1100 + s / 588);
      push_lower(0x1161 + (s % 588) / 28);
      if (s % 28 != 0) push_lower(0x11A7 + s % 28);
      return;
    }
    const tables::CharMapping* m = find_mapping(tables::kStrip, c);
    if (!m) return push_lower(c);
    for (uint32_t i = 0; i < m->length; ++i) push_lower(tables::kStripData[m->offset + i]);
  };
  for (size_t i = begin; i < end; ++i) {
    char32_t c = chars[i];
    from = static_cast<uint32_t>(i);
    const uint8_t f = flags_of(c);
    // clean_text (BertTokenizerFast always cleans): NUL, U+FFFD and "other" characters go.
    if (c == 0 || c == 0xFFFD || (f & tables::kRemove)) continue;
    if (f & tables::kToSpace) c = U' ';
    if (info_.chinese_chars && (f & tables::kChinese)) {
      put(U' ');
      push(c);
      put(U' ');
    } else {
      push(c);
    }
  }
  // Pre-tokenization: whitespace separates words, punctuation is a word of its own.
  Word word;
  auto flush = [&]() {
    if (word.chars.empty()) return;
    words->push_back(std::move(word));
    word = Word();
  };
  for (size_t i = 0; i < norm.size(); ++i) {
    const char32_t c = norm[i];
    const uint8_t f = flags_of(c);
    if (f & (tables::kSplit | tables::kPunct)) {
      flush();
      if (f & tables::kPunct) words->push_back(Word{std::u32string(1, c), {origin[i]}});
    } else {
      word.chars.push_back(c);
      word.origin.push_back(origin[i]);
    }
  }
  flush();
}

Status BertTokenizer::word_pieces(const Word& word, const std::vector<uint32_t>& byte_at, int32_t word_index,
                                  std::vector<Piece>* out) const {
  // Piece chars[s, e) covers the original characters from origin[s] to origin[e - 1].
  auto piece = [&](int32_t id, size_t s, size_t e) {
    out->push_back(Piece{id, byte_at[word.origin[s]], byte_at[word.origin[e - 1] + 1], word_index});
  };
  auto unknown = [&]() -> Status {
    if (info_.unk_id < 0) {
      std::string utf8;
      for (char32_t c : word.chars) append_utf8(c, &utf8);
      return Status(StatusCode::kInvalidArgument,
                    "the word '" + utf8 + "' has no word pieces in the vocabulary, which has no unknown token");
    }
    piece(info_.unk_id, 0, word.chars.size());
    return Status::ok();
  };
  const std::u32string& chars = word.chars;
  if (chars.size() > kMaxCharsPerWord) return unknown();
  const size_t first_piece = out->size();
  std::string candidate;
  size_t start = 0;
  while (start < chars.size()) {
    // Longest match first: the piece [start, end) shrinks one character at a time.
    int32_t found = -1;
    size_t end = chars.size();
    for (; end > start; --end) {
      candidate.assign(start > 0 ? "##" : "");
      for (size_t i = start; i < end; ++i) append_utf8(chars[i], &candidate);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {  // no piece fits: the whole word is unknown
      out->resize(first_piece);
      return unknown();
    }
    piece(found, start, end);
    start = end;
  }
  return Status::ok();
}

Status BertTokenizer::tokenize(std::string_view text, std::vector<int32_t>* ids) const {
  if (ids == nullptr) return Status(StatusCode::kInvalidArgument, "tokenize: ids is null");
  std::vector<Piece> found;
  if (Status st = pieces(text, &found); !st) return st;
  for (const Piece& p : found) ids->push_back(p.id);
  return Status::ok();
}

Status BertTokenizer::pieces(std::string_view text, std::vector<Piece>* out) const {
  if (out == nullptr) return Status(StatusCode::kInvalidArgument, "pieces: out is null");
  out->clear();
  std::vector<char32_t> chars;
  if (Status st = decode_utf8(text, &chars); !st) return st;
  // Valid UTF-8 writes every character in its one shortest form, so the offsets follow from the
  // characters' lengths.
  std::vector<uint32_t> byte_at(chars.size() + 1, 0);
  for (size_t i = 0; i < chars.size(); ++i) {
    const char32_t c = chars[i];
    byte_at[i + 1] = byte_at[i] + (c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4);
  }
  std::vector<Word> words;
  int32_t word_index = 0;
  auto flush = [&](size_t begin, size_t end) -> Status {
    words.clear();
    normalized_words(chars, begin, end, &words);
    for (const Word& w : words)
      if (Status st = word_pieces(w, byte_at, word_index++, out); !st) return st;
    return Status::ok();
  };
  size_t segment = 0, i = 0;
  while (i < chars.size()) {
    const std::pair<std::u32string, int32_t>* hit = nullptr;
    for (const auto& special : specials_) {
      const std::u32string& s = special.first;
      if (s.size() <= chars.size() - i && std::equal(s.begin(), s.end(), chars.begin() + static_cast<ptrdiff_t>(i))) {
        hit = &special;
        break;
      }
    }
    if (hit) {
      if (Status st = flush(segment, i); !st) return st;
      out->push_back(Piece{hit->second, byte_at[i], byte_at[i + hit->first.size()], word_index++});
      i += hit->first.size();
      segment = i;
    } else {
      ++i;
    }
  }
  return flush(segment, chars.size());
}

Status BertTokenizer::encode(std::string_view text, int max_length, std::vector<int32_t>* ids) const {
  if (ids == nullptr) return Status(StatusCode::kInvalidArgument, "encode: ids is null");
  const int specials = (info_.cls_id >= 0) + (info_.sep_id >= 0);
  if (max_length < specials + 1)
    return Status(StatusCode::kInvalidArgument, "encode: max_length " + std::to_string(max_length) +
                                                    " leaves no room for a token (it must be at least " +
                                                    std::to_string(specials + 1) + ")");
  ids->clear();
  if (info_.cls_id >= 0) ids->push_back(info_.cls_id);
  if (Status st = tokenize(text, ids); !st) return st;
  if (static_cast<int>(ids->size()) > max_length - (info_.sep_id >= 0))
    ids->resize(static_cast<size_t>(max_length - (info_.sep_id >= 0)));
  if (info_.sep_id >= 0) ids->push_back(info_.sep_id);
  return Status::ok();
}

Status BertTokenizer::words(std::string_view text, std::vector<std::string>* out) const {
  if (out == nullptr) return Status(StatusCode::kInvalidArgument, "words: out is null");
  std::vector<char32_t> chars;
  if (Status st = decode_utf8(text, &chars); !st) return st;
  std::vector<Word> words;
  normalized_words(chars, 0, chars.size(), &words);
  out->clear();
  for (const Word& w : words) {
    out->emplace_back();
    for (char32_t c : w.chars) append_utf8(c, &out->back());
  }
  return Status::ok();
}

}  // namespace encrt::text
