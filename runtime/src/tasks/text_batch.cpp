#include "tasks/text_batch.h"

#include <algorithm>

namespace encrt::tasks {

namespace {
Status named(const Status& s, size_t index) {
  return Status(s.code(), "text " + std::to_string(index) + ": " + s.message());
}
}  // namespace

Status TextBatch::fill(const Tokenizer& tokenizer, const std::vector<std::string>& texts, size_t first, size_t count,
                       const EncodeOptions& options) {
  if (count == 0 || first + count > texts.size()) return invalid_argument("TextBatch: no texts in range");
  rows_.resize(std::max(rows_.size(), count));
  for (size_t i = 0; i < count; ++i)
    if (Status s = tokenizer.encode(texts[first + i], options, &rows_[i]); !s) return named(s, first + i);
  return pad(tokenizer, count);
}

Status TextBatch::fill_pairs(const Tokenizer& tokenizer, const std::vector<std::pair<std::string, std::string>>& pairs,
                             size_t first, size_t count, const EncodeOptions& options) {
  if (count == 0 || first + count > pairs.size()) return invalid_argument("TextBatch: no pairs in range");
  rows_.resize(std::max(rows_.size(), count));
  for (size_t i = 0; i < count; ++i) {
    const auto& [a, b] = pairs[first + i];
    if (Status s = tokenizer.encode_pair(a, b, options, &rows_[i]); !s) return named(s, first + i);
  }
  return pad(tokenizer, count);
}

Status TextBatch::pad(const Tokenizer& tokenizer, size_t count) {
  batch_ = static_cast<int>(count);
  seq_ = 1;
  real_tokens_ = 0;
  for (size_t i = 0; i < count; ++i) {
    if (rows_[i].size() == 0) return invalid_argument("text gives no tokens (a vocabulary without [CLS]/[SEP]?)");
    seq_ = std::max(seq_, static_cast<int>(rows_[i].size()));
    real_tokens_ += static_cast<int>(rows_[i].size());
  }
  const int32_t pad = tokenizer.pad_id() >= 0 ? tokenizer.pad_id() : 0;
  const size_t cells = static_cast<size_t>(batch_) * static_cast<size_t>(seq_);
  ids_.assign(cells, pad);
  mask_.assign(cells, 0);
  types_.assign(cells, 0);
  for (int b = 0; b < batch_; ++b) {
    const Encoding& e = rows_[static_cast<size_t>(b)];
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(b) * seq_;
    std::copy(e.ids.begin(), e.ids.end(), ids_.begin() + at);
    std::copy(e.token_type_ids.begin(), e.token_type_ids.end(), types_.begin() + at);
    std::fill_n(mask_.begin() + at, e.size(), 1);
  }
  return Status::ok();
}

Inputs TextBatch::inputs() const {
  Inputs in;
  in.batch = batch_;
  in.seq = seq_;
  in.input_ids = ids_.data();
  in.attention_mask = mask_.data();
  in.token_type_ids = types_.data();
  return in;
}

}  // namespace encrt::tasks
