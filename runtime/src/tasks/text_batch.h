// Texts to a padded [batch, seq] batch of ids and masks, as encrt::Inputs takes it: each text
// tokenized as [CLS] pieces [SEP] and, when longer than max_seq, cut there or refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/status.hpp"

namespace encrt::tasks {

class TextBatch {
 public:
  // Tokenizes texts[first, first + count) and pads them to the longest with [PAD] (0 when the
  // vocabulary has none; masked out either way). Reuses its buffers from call to call.
  Status fill(const Tokenizer& tokenizer, const std::vector<std::string>& texts, size_t first, size_t count, int max_seq,
              bool truncate);

  Inputs inputs() const;  // valid until the next fill()
  int batch() const { return batch_; }
  int seq() const { return seq_; }
  int real_tokens() const { return real_tokens_; }
  int length(int row) const { return static_cast<int>(rows_[static_cast<size_t>(row)].size()); }
  const std::vector<int32_t>& row_ids(int row) const { return rows_[static_cast<size_t>(row)]; }

 private:
  std::vector<std::vector<int32_t>> rows_;
  std::vector<int32_t> ids_, mask_;
  int batch_ = 0, seq_ = 0, real_tokens_ = 0;
};

}  // namespace encrt::tasks
