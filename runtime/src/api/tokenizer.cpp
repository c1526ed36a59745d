#include <algorithm>
#include <string>

#include "encrt/encrt.hpp"
#include "model/model_impl.h"
#include "text/bert_tokenizer.h"
#include "text/truncation.h"

namespace encrt {

struct Tokenizer::Impl {
  text::BertTokenizer wordpiece;
  int32_t pad_id;
  std::vector<std::string> vocabulary;  // a copy: the tokenizer may outlive its model
  int max_seq_len;

  // The whole encoding of one text (second == nullptr) or pair.
  Status encode(const std::string& first, const std::string* second, const EncodeOptions& options,
                Encoding* out) const;
  // Rows padded to the longest, and the flat [batch, seq] arrays.
  Status pad(std::vector<Encoding> rows, BatchEncoding* out) const;
};

const char* truncation_name(Truncation truncation) {
  switch (truncation) {
    case Truncation::kLongestFirst: return "longest_first";
    case Truncation::kOnlyFirst: return "only_first";
    case Truncation::kOnlySecond: return "only_second";
  }
  return "unknown";
}

Status parse_truncation(const std::string& name, Truncation* out) {
  if (out == nullptr) return invalid_argument("parse_truncation: out is null");
  for (Truncation t : {Truncation::kLongestFirst, Truncation::kOnlyFirst, Truncation::kOnlySecond}) {
    if (name == truncation_name(t)) {
      *out = t;
      return Status::ok();
    }
  }
  return invalid_argument("unknown truncation '" + name + "' (longest_first, only_first or only_second)");
}

Inputs BatchEncoding::inputs() const {
  Inputs in;
  in.batch = batch;
  in.seq = seq;
  in.input_ids = input_ids.empty() ? nullptr : input_ids.data();
  in.attention_mask = attention_mask.empty() ? nullptr : attention_mask.data();
  in.token_type_ids = token_type_ids.empty() ? nullptr : token_type_ids.data();
  return in;
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Status Tokenizer::create(const Model& model, std::unique_ptr<Tokenizer>* out) {
  if (out == nullptr) return invalid_argument("Tokenizer::create: out is null");
  out->reset();
  const detail::ModelImpl& m = *model.impl_;
  if (m.vocabulary.empty())
    return Status(StatusCode::kUnsupported,
                  "this model file has no vocabulary (convert a checkpoint folder that has vocab.txt)");
  out->reset(new Tokenizer(std::make_unique<Impl>(
      Impl{text::BertTokenizer(m.vocabulary, m.tokenizer), m.tokenizer.pad_id, m.vocabulary, m.config.max_seq_len})));
  return Status::ok();
}

Status Tokenizer::encode(const std::string& text, int max_length, std::vector<int32_t>* ids) const {
  return impl_->wordpiece.encode(text, max_length, ids);
}

Status Tokenizer::tokenize(const std::string& text, std::vector<int32_t>* ids) const {
  return impl_->wordpiece.tokenize(text, ids);
}

int32_t Tokenizer::pad_id() const { return impl_->pad_id; }
int32_t Tokenizer::unk_id() const { return impl_->wordpiece.info().unk_id; }

Status Tokenizer::Impl::encode(const std::string& first, const std::string* second, const EncodeOptions& options,
                               Encoding* out) const {
  const detail::TokenizerInfo& info = wordpiece.info();
  const int specials = (info.cls_id >= 0) + (info.sep_id >= 0) * (second ? 2 : 1);
  const int max_length = options.max_length == 0 ? max_seq_len : options.max_length;
  if (max_length < specials)
    return invalid_argument("max_length " + std::to_string(max_length) + " leaves no room for the " +
                            std::to_string(specials) + " special tokens of " + (second ? "a pair" : "a text"));
  if (static_cast<uint8_t>(options.truncation) > static_cast<uint8_t>(Truncation::kOnlySecond))
    return invalid_argument("unknown truncation strategy " + std::to_string(static_cast<int>(options.truncation)));
  std::vector<text::Piece> a, b;
  if (Status s = wordpiece.pieces(first, &a); !s) return s;
  if (second)
    if (Status s = wordpiece.pieces(*second, &b); !s) return s;
  const size_t budget = static_cast<size_t>(max_length - specials);
  if (!options.truncate && a.size() + b.size() > budget)
    return invalid_argument(std::string(second ? "the pair" : "the text") + " is " +
                            std::to_string(a.size() + b.size() + specials) + " tokens, over max_length " +
                            std::to_string(max_length) + " (truncation is off)");
  size_t keep_a = a.size(), keep_b = b.size();
  if (Status s = text::truncated_lengths(a.size(), b.size(), second != nullptr, budget, options.truncation,
                                         &keep_a, &keep_b);
      !s)
    return s;
  a.resize(keep_a);
  b.resize(keep_b);

  *out = Encoding();
  auto add = [&](int32_t id, int32_t type, bool special, TextSpan span, int32_t word, int32_t sequence) {
    out->ids.push_back(id);
    out->token_type_ids.push_back(type);
    out->attention_mask.push_back(1);
    out->special_tokens_mask.push_back(special ? 1 : 0);
    out->offsets.push_back(span);
    out->word_ids.push_back(word);
    out->sequence_ids.push_back(sequence);
    out->tokens.push_back(vocabulary[static_cast<size_t>(id)]);
  };
  auto add_text = [&](const std::vector<text::Piece>& pieces, int32_t sequence) {
    for (const text::Piece& p : pieces) add(p.id, sequence, false, TextSpan{p.start, p.end}, p.word, sequence);
    if (info.sep_id >= 0) add(info.sep_id, sequence, true, TextSpan{}, -1, -1);
  };
  if (info.cls_id >= 0) add(info.cls_id, 0, true, TextSpan{}, -1, -1);
  add_text(a, 0);
  if (second) add_text(b, 1);
  return Status::ok();
}

Status Tokenizer::encode(const std::string& text, const EncodeOptions& options, Encoding* out) const {
  if (out == nullptr) return invalid_argument("Tokenizer::encode: out is null");
  return impl_->encode(text, nullptr, options, out);
}

Status Tokenizer::encode_pair(const std::string& first, const std::string& second, const EncodeOptions& options,
                              Encoding* out) const {
  if (out == nullptr) return invalid_argument("Tokenizer::encode_pair: out is null");
  return impl_->encode(first, &second, options, out);
}

Status Tokenizer::Impl::pad(std::vector<Encoding> rows, BatchEncoding* out) const {
  size_t seq = 0;
  for (const Encoding& e : rows) seq = std::max(seq, e.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    Encoding& e = rows[r];
    const size_t missing = seq - e.size();
    if (missing == 0) continue;
    if (pad_id < 0)
      return invalid_argument("row " + std::to_string(r) + " needs padding, and the vocabulary has no [PAD] token");
    e.ids.insert(e.ids.end(), missing, pad_id);
    e.token_type_ids.insert(e.token_type_ids.end(), missing, 0);
    e.attention_mask.insert(e.attention_mask.end(), missing, 0);
    e.special_tokens_mask.insert(e.special_tokens_mask.end(), missing, 1);
    e.offsets.insert(e.offsets.end(), missing, TextSpan{});
    e.word_ids.insert(e.word_ids.end(), missing, -1);
    e.sequence_ids.insert(e.sequence_ids.end(), missing, -1);
    e.tokens.insert(e.tokens.end(), missing, vocabulary[static_cast<size_t>(pad_id)]);
  }
  *out = BatchEncoding();
  out->batch = static_cast<int>(rows.size());
  out->seq = static_cast<int>(seq);
  for (const Encoding& e : rows) {
    out->input_ids.insert(out->input_ids.end(), e.ids.begin(), e.ids.end());
    out->attention_mask.insert(out->attention_mask.end(), e.attention_mask.begin(), e.attention_mask.end());
    out->token_type_ids.insert(out->token_type_ids.end(), e.token_type_ids.begin(), e.token_type_ids.end());
  }
  out->rows = std::move(rows);
  return Status::ok();
}

Status Tokenizer::encode_batch(const std::vector<std::string>& texts, const EncodeOptions& options,
                               BatchEncoding* out) const {
  if (out == nullptr) return invalid_argument("Tokenizer::encode_batch: out is null");
  if (texts.empty()) return invalid_argument("Tokenizer::encode_batch: no texts");
  std::vector<Encoding> rows(texts.size());
  for (size_t i = 0; i < texts.size(); ++i)
    if (Status s = impl_->encode(texts[i], nullptr, options, &rows[i]); !s)
      return Status(s.code(), "text " + std::to_string(i) + ": " + s.message());
  return impl_->pad(std::move(rows), out);
}

Status Tokenizer::encode_pair_batch(const std::vector<std::pair<std::string, std::string>>& pairs,
                                    const EncodeOptions& options, BatchEncoding* out) const {
  if (out == nullptr) return invalid_argument("Tokenizer::encode_pair_batch: out is null");
  if (pairs.empty()) return invalid_argument("Tokenizer::encode_pair_batch: no pairs");
  std::vector<Encoding> rows(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i)
    if (Status s = impl_->encode(pairs[i].first, &pairs[i].second, options, &rows[i]); !s)
      return Status(s.code(), "pair " + std::to_string(i) + ": " + s.message());
  return impl_->pad(std::move(rows), out);
}

}  // namespace encrt
