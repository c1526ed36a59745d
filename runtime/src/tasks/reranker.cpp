// Reranker: (query, passage) pairs through a one-logit cross-encoder head, passages sorted by score.
#include <algorithm>

#include "encrt/tasks.hpp"
#include "tasks/task_runner.h"

namespace encrt {

struct Reranker::Impl {
  tasks::TaskRunner runner;
  std::vector<std::pair<std::string, std::string>> pairs;
};

Reranker::Reranker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reranker::~Reranker() = default;

Status Reranker::create(const Model& model, const TaskOptions& options, std::unique_ptr<Reranker>* out) {
  if (!out) return invalid_argument("Reranker::create: out is null");
  out->reset();
  auto impl = std::make_unique<Impl>();
  if (Status s = impl->runner.init(model, options, "Reranker", "sequence_classification", tasks::head_outputs()); !s)
    return s;
  if (impl->runner.head().num_labels() != 1) {
    return Status(StatusCode::kUnsupported, "Reranker needs a one-logit (cross-encoder) head; the model's has " +
                                                std::to_string(impl->runner.head().num_labels()) +
                                                " labels (use TextClassifier::classify_pairs)");
  }
  out->reset(new Reranker(std::move(impl)));
  return Status::ok();
}

const TaskTimings& Reranker::last_timings() const { return impl_->runner.timings(); }

Status Reranker::rank(const std::string& query, const std::vector<std::string>& passages,
                      std::vector<RankedPassage>* out) {
  if (!out) return invalid_argument("Reranker::rank: out is null");
  out->assign(passages.size(), RankedPassage{});
  Impl& m = *impl_;
  m.pairs.clear();
  for (const std::string& p : passages) m.pairs.emplace_back(query, p);
  Status s = m.runner.run_pairs(m.pairs, [&](size_t first) {
    for (int r = 0; r < m.runner.batch().batch(); ++r) {
      RankedPassage& p = (*out)[first + static_cast<size_t>(r)];
      p.index = first + static_cast<size_t>(r);
      p.logit = m.runner.output(tasks::kLogits)[static_cast<size_t>(r)];
      p.score = m.runner.output(tasks::kScores)[static_cast<size_t>(r)];
    }
    return Status::ok();
  });
  if (!s) return s;
  std::stable_sort(out->begin(), out->end(),
                   [](const RankedPassage& a, const RankedPassage& b) { return a.score > b.score; });
  return Status::ok();
}

}  // namespace encrt
