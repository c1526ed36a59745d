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

Status BertTokenizer::normalized_words(const std::u32string& segment, std::vector<std::u32string>* words) const {
  // Normalization (clean_text, CJK padding, accent stripping, lowercasing), per character.
  std::u32string norm;
  norm.reserve(segment.size());
  auto push_lower = [&](char32_t c) {
    const tables::CharMapping* m = info_.lowercase ? find_mapping(tables::kLower, c) : nullptr;
    if (!m) return norm.push_back(c);
    for (uint32_t i = 0; i < m->length; ++i) norm.push_back(tables::kLowerData[m->offset + i]);
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
  for (char32_t c : segment) {
    const uint8_t f = flags_of(c);
    // clean_text (BertTokenizerFast always cleans): NUL, U+FFFD and "other" characters go.
    if (c == 0 || c == 0xFFFD || (f & tables::kRemove)) continue;
    if (f & tables::kToSpace) c = U' ';
    if (info_.chinese_chars && (f & tables::kChinese)) {
      norm.push_back(U' ');
      push(c);
      norm.push_back(U' ');
    } else {
      push(c);
    }
  }
  // Pre-tokenization: whitespace separates words, punctuation is a word of its own.
  std::u32string word;
  for (char32_t c : norm) {
    const uint8_t f = flags_of(c);
    if (f & (tables::kSplit | tables::kPunct)) {
      if (!word.empty()) words->push_back(std::move(word));
      word.clear();
      if (f & tables::kPunct) words->emplace_back(1, c);
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words->push_back(std::move(word));
  return Status::ok();
}

Status BertTokenizer::word_pieces(const std::u32string& word, std::vector<int32_t>* ids) const {
  auto unknown = [&]() -> Status {
    if (info_.unk_id < 0) {
      std::string utf8;
      for (char32_t c : word) append_utf8(c, &utf8);
      return Status(StatusCode::kInvalidArgument,
                    "the word '" + utf8 + "' has no word pieces in the vocabulary, which has no unknown token");
    }
    ids->push_back(info_.unk_id);
    return Status::ok();
  };
  if (word.size() > kMaxCharsPerWord) return unknown();
  const size_t first_piece = ids->size();
  std::string candidate;
  size_t start = 0;
  while (start < word.size()) {
    // Longest match first: the piece [start, end) shrinks one character at a time.
    int32_t found = -1;
    size_t end = word.size();
    for (; end > start; --end) {
      candidate.assign(start > 0 ? "##" : "");
      for (size_t i = start; i < end; ++i) append_utf8(word[i], &candidate);
      auto it = ids_.find(candidate);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {  // no piece fits: the whole word is unknown
      ids->resize(first_piece);
      return unknown();
    }
    ids->push_back(found);
    start = end;
  }
  return Status::ok();
}

Status BertTokenizer::tokenize(std::string_view text, std::vector<int32_t>* ids) const {
  if (ids == nullptr) return Status(StatusCode::kInvalidArgument, "tokenize: ids is null");
  std::vector<char32_t> chars;
  if (Status st = decode_utf8(text, &chars); !st) return st;
  std::vector<std::u32string> words;
  std::u32string segment;
  auto flush = [&]() -> Status {
    words.clear();
    if (Status st = normalized_words(segment, &words); !st) return st;
    for (const std::u32string& w : words)
      if (Status st = word_pieces(w, ids); !st) return st;
    segment.clear();
    return Status::ok();
  };
  size_t i = 0;
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
      if (Status st = flush(); !st) return st;
      ids->push_back(hit->second);
      i += hit->first.size();
    } else {
      segment.push_back(chars[i++]);
    }
  }
  return flush();
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
  std::vector<std::u32string> words;
  if (Status st = normalized_words(std::u32string(chars.begin(), chars.end()), &words); !st) return st;
  out->clear();
  for (const std::u32string& w : words) {
    out->emplace_back();
    for (char32_t c : w) append_utf8(c, &out->back());
  }
  return Status::ok();
}

}  // namespace encrt::text
