// TextClassifier: a sequence classification head's logits and scores per text or pair, and the
// best label.
#include <algorithm>

#include "encrt/tasks.hpp"
#include "tasks/task_runner.h"

namespace encrt {

struct TextClassifier::Impl {
  tasks::TaskRunner runner;
};

TextClassifier::TextClassifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TextClassifier::~TextClassifier() = default;

Status TextClassifier::create(const Model& model, const TaskOptions& options, std::unique_ptr<TextClassifier>* out) {
  if (!out) return invalid_argument("TextClassifier::create: out is null");
  out->reset();
  auto impl = std::make_unique<Impl>();
  if (Status s = impl->runner.init(model, options, "TextClassifier", "sequence_classification", tasks::head_outputs());
      !s)
    return s;
  out->reset(new TextClassifier(std::move(impl)));
  return Status::ok();
}

const HeadInfo& TextClassifier::head() const { return impl_->runner.head(); }
const TaskTimings& TextClassifier::last_timings() const { return impl_->runner.timings(); }

namespace {

// Row r of the last run's logits and scores as a Classification.
Classification read_row(const tasks::TaskRunner& runner, int r) {
  const HeadInfo& head = runner.head();
  const size_t n = static_cast<size_t>(head.num_labels());
  Classification c;
  c.logits.assign(runner.output(tasks::kLogits).begin() + static_cast<std::ptrdiff_t>(r * n),
                  runner.output(tasks::kLogits).begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
  c.scores.assign(runner.output(tasks::kScores).begin() + static_cast<std::ptrdiff_t>(r * n),
                  runner.output(tasks::kScores).begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
  // The first of equal best scores, as argmax does.
  c.label_id = static_cast<int>(std::max_element(c.scores.begin(), c.scores.end()) - c.scores.begin());
  c.label = head.labels[static_cast<size_t>(c.label_id)];
  c.score = c.scores[static_cast<size_t>(c.label_id)];
  return c;
}

}  // namespace

Status TextClassifier::classify(const std::vector<std::string>& texts, std::vector<Classification>* out) {
  if (!out) return invalid_argument("TextClassifier::classify: out is null");
  out->assign(texts.size(), Classification{});
  tasks::TaskRunner& runner = impl_->runner;
  return runner.run_texts(texts, [&](size_t first) {
    for (int r = 0; r < runner.batch().batch(); ++r) (*out)[first + static_cast<size_t>(r)] = read_row(runner, r);
    return Status::ok();
  });
}

Status TextClassifier::classify_pairs(const std::vector<std::pair<std::string, std::string>>& pairs,
                                      std::vector<Classification>* out) {
  if (!out) return invalid_argument("TextClassifier::classify_pairs: out is null");
  out->assign(pairs.size(), Classification{});
  tasks::TaskRunner& runner = impl_->runner;
  return runner.run_pairs(pairs, [&](size_t first) {
    for (int r = 0; r < runner.batch().batch(); ++r) (*out)[first + static_cast<size_t>(r)] = read_row(runner, r);
    return Status::ok();
  });
}

}  // namespace encrt
