// What every task shares: the model's tokenizer and one session planned for the task's
// max_batch × max_seq, chunked runs over texts or pairs, and the outputs the task reads, copied to
// host memory (wherever the backend keeps them).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"
#include "tasks/text_batch.h"

namespace encrt::tasks {

// The outputs the head tasks read, in this order (TaskRunner::output(kLogits), ...).
enum HeadOutput : size_t { kLogits = 0, kScores = 1 };
inline std::vector<std::string> head_outputs() { return {"logits", "scores"}; }

class TaskRunner {
 public:
  // `head_kind`: the head the task needs ("sequence_classification" or "token_classification"), or
  // "" for none; `outputs`: the session outputs read after each run (f32), by index in output().
  Status init(const Model& model, const TaskOptions& options, const char* task, const std::string& head_kind,
              std::vector<std::string> outputs);

  // Runs each chunk of up to max_batch texts (or pairs); after each run calls `read(first)`, the
  // index of the chunk's first text, with batch() holding the chunk's encodings and output(i) its
  // outputs (a head's: [rows, num_labels], or [rows, seq, num_labels] for a token head).
  template <typename Read>
  Status run_texts(const std::vector<std::string>& texts, Read read);
  template <typename Read>
  Status run_pairs(const std::vector<std::pair<std::string, std::string>>& pairs, Read read);

  const HeadInfo& head() const { return head_; }  // empty for a task without a head
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const std::vector<float>& output(size_t i) const { return values_[i]; }
  int hidden_size() const { return hidden_size_; }
  const TextBatch& batch() const { return batch_; }
  const TaskTimings& timings() const { return timings_; }

 private:
  Status run_chunk();

  HeadInfo head_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Session> session_;
  TaskOptions options_;
  EncodeOptions encode_;
  TextBatch batch_;
  std::vector<std::string> outputs_;
  std::vector<std::vector<float>> values_;
  int hidden_size_ = 0;
  TaskTimings timings_;
};

double ms_since_steady(long long start_ns);
long long steady_now_ns();

template <typename Read>
Status TaskRunner::run_texts(const std::vector<std::string>& texts, Read read) {
  timings_ = TaskTimings{};
  const size_t step = static_cast<size_t>(options_.max_batch);
  for (size_t first = 0; first < texts.size(); first += step) {
    const size_t count = std::min(texts.size() - first, step);
    const long long t0 = steady_now_ns();
    if (Status s = batch_.fill(*tokenizer_, texts, first, count, encode_); !s) return s;
    timings_.tokenize_ms += ms_since_steady(t0);
    if (Status s = run_chunk(); !s) return s;
    if (Status s = read(first); !s) return s;
  }
  return Status::ok();
}

template <typename Read>
Status TaskRunner::run_pairs(const std::vector<std::pair<std::string, std::string>>& pairs, Read read) {
  timings_ = TaskTimings{};
  const size_t step = static_cast<size_t>(options_.max_batch);
  for (size_t first = 0; first < pairs.size(); first += step) {
    const size_t count = std::min(pairs.size() - first, step);
    const long long t0 = steady_now_ns();
    if (Status s = batch_.fill_pairs(*tokenizer_, pairs, first, count, encode_); !s) return s;
    timings_.tokenize_ms += ms_since_steady(t0);
    if (Status s = run_chunk(); !s) return s;
    if (Status s = read(first); !s) return s;
  }
  return Status::ok();
}

}  // namespace encrt::tasks
