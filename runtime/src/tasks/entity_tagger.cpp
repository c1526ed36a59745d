// EntityTagger: a token classification head's per-token label probabilities, grouped into
// entities with character spans by aggregate_entities().
#include <algorithm>
#include <cmath>

#include "encrt/tasks.hpp"
#include "tasks/task_runner.h"

namespace encrt {

struct EntityTagger::Impl {
  tasks::TaskRunner runner;
  std::vector<float> probs;  // one row's [tokens, labels]
};

EntityTagger::EntityTagger(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EntityTagger::~EntityTagger() = default;

Status EntityTagger::create(const Model& model, const TaskOptions& options, std::unique_ptr<EntityTagger>* out) {
  if (!out) return invalid_argument("EntityTagger::create: out is null");
  out->reset();
  auto impl = std::make_unique<Impl>();
  if (Status s = impl->runner.init(model, options, "EntityTagger", "token_classification", tasks::head_outputs()); !s)
    return s;
  out->reset(new EntityTagger(std::move(impl)));
  return Status::ok();
}

const HeadInfo& EntityTagger::head() const { return impl_->runner.head(); }
const TaskTimings& EntityTagger::last_timings() const { return impl_->runner.timings(); }

Status EntityTagger::tag(const std::vector<std::string>& texts, const EntityOptions& options,
                         std::vector<std::vector<Entity>>* out) {
  if (!out) return invalid_argument("EntityTagger::tag: out is null");
  out->assign(texts.size(), {});
  Impl& m = *impl_;
  const HeadInfo& head = m.runner.head();
  const size_t n = static_cast<size_t>(head.num_labels());
  EntityOptions opt = options;
  if (opt.unk_id < 0) opt.unk_id = m.runner.tokenizer().unk_id();
  return m.runner.run_texts(texts, [&](size_t first) {
    const size_t seq = static_cast<size_t>(m.runner.batch().seq());
    for (int r = 0; r < m.runner.batch().batch(); ++r) {
      const Encoding& e = m.runner.batch().row(r);
      const size_t at = static_cast<size_t>(r) * seq * n;
      m.probs.resize(e.size() * n);
      if (head.score_function == "softmax") {
        std::copy_n(m.runner.output(tasks::kScores).begin() + static_cast<std::ptrdiff_t>(at), e.size() * n,
                    m.probs.begin());
      } else {
        // The pipeline's softmax of the logits, whatever the head's own score function.
        for (size_t t = 0; t < e.size(); ++t) {
          const float* l = m.runner.output(tasks::kLogits).data() + at + t * n;
          float* p = m.probs.data() + t * n;
          const float top = *std::max_element(l, l + n);
          float sum = 0.0f;
          for (size_t k = 0; k < n; ++k) sum += p[k] = std::exp(l[k] - top);
          for (size_t k = 0; k < n; ++k) p[k] /= sum;
        }
      }
      const size_t i = first + static_cast<size_t>(r);
      if (Status s = aggregate_entities(texts[i], e, m.probs.data(), static_cast<int>(n), head.labels, opt, &(*out)[i]);
          !s)
        return Status(s.code(), "text " + std::to_string(i) + ": " + s.message());
    }
    return Status::ok();
  });
}

}  // namespace encrt
