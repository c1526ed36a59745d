// Texts (or text pairs) to a padded [batch, seq] batch as encrt::Inputs takes it: each encoded by
// the model's tokenizer (offsets and word ids kept, for token-level answers), errors naming the
// text, then padded to the longest with [PAD] (0 when the vocabulary has none; masked out).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/status.hpp"

namespace encrt::tasks {

class TextBatch {
 public:
  // texts[first, first + count), cut or refused by `options` (its max_length is the session's
  // max_seq). Reuses its buffers from call to call.
  Status fill(const Tokenizer& tokenizer, const std::vector<std::string>& texts, size_t first, size_t count,
              const EncodeOptions& options);
  // The same for pairs (a query and a passage, a premise and a hypothesis): token types 0 and 1.
  Status fill_pairs(const Tokenizer& tokenizer, const std::vector<std::pair<std::string, std::string>>& pairs,
                    size_t first, size_t count, const EncodeOptions& options);

  Inputs inputs() const;  // valid until the next fill()
  int batch() const { return batch_; }
  int seq() const { return seq_; }
  int real_tokens() const { return real_tokens_; }
  // Row r's encoding, unpadded (its size() is its real length).
  const Encoding& row(int r) const { return rows_[static_cast<size_t>(r)]; }

 private:
  Status pad(const Tokenizer& tokenizer, size_t count);

  std::vector<Encoding> rows_;
  std::vector<int32_t> ids_, mask_, types_;
  int batch_ = 0, seq_ = 0, real_tokens_ = 0;
};

}  // namespace encrt::tasks
