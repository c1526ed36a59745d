#include "tasks/text_batch.h"

#include <algorithm>
#include <limits>

namespace encrt::tasks {

Status TextBatch::fill(const Tokenizer& tokenizer, const std::vector<std::string>& texts, size_t first, size_t count,
                       int max_seq, bool truncate) {
  if (count == 0 || first + count > texts.size()) return invalid_argument("TextBatch: no texts in range");
  if (max_seq < 1) return invalid_argument("TextBatch: max_seq must be >= 1");
  rows_.resize(count);
  batch_ = static_cast<int>(count);
  seq_ = 1;
  real_tokens_ = 0;
  for (size_t i = 0; i < count; ++i) {
    const std::string& text = texts[first + i];
    std::vector<int32_t>& row = rows_[i];
    // The whole text first, so that a text that does not fit is known as such (not silently cut).
    if (Status s = tokenizer.encode(text, std::numeric_limits<int>::max(), &row); !s) {
      return Status(s.code(), "text " + std::to_string(first + i) + ": " + s.message());
    }
    if (static_cast<int>(row.size()) > max_seq) {
      if (!truncate) {
        return invalid_argument("text " + std::to_string(first + i) + " has " + std::to_string(row.size()) +
                                " tokens, more than the " + std::to_string(max_seq) +
                                " planned (truncation is off)");
      }
      if (Status s = tokenizer.encode(text, max_seq, &row); !s) return s;
    }
    if (row.empty()) return invalid_argument("text " + std::to_string(first + i) + " gives no tokens");
    seq_ = std::max(seq_, static_cast<int>(row.size()));
    real_tokens_ += static_cast<int>(row.size());
  }
  const int32_t pad = tokenizer.pad_id() >= 0 ? tokenizer.pad_id() : 0;
  const size_t cells = static_cast<size_t>(batch_) * static_cast<size_t>(seq_);
  ids_.assign(cells, pad);
  mask_.assign(cells, 0);
  for (int b = 0; b < batch_; ++b) {
    const std::vector<int32_t>& row = rows_[static_cast<size_t>(b)];
    std::copy(row.begin(), row.end(), ids_.begin() + static_cast<std::ptrdiff_t>(b) * seq_);
    std::fill_n(mask_.begin() + static_cast<std::ptrdiff_t>(b) * seq_, row.size(), 1);
  }
  return Status::ok();
}

Inputs TextBatch::inputs() const {
  Inputs in;
  in.batch = batch_;
  in.seq = seq_;
  in.input_ids = ids_.data();
  in.attention_mask = mask_.data();
  return in;
}

}  // namespace encrt::tasks
