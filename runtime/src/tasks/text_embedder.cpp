// TextEmbedder: chunks of up to max_batch texts, one session run each, the pooled rows scaled to
// unit length.
#include <cmath>

#include "encrt/tasks.hpp"
#include "tasks/task_runner.h"

namespace encrt {

struct TextEmbedder::Impl {
  tasks::TaskRunner runner;
};

Status TextEmbedder::create(const Model& model, const TaskOptions& options, std::unique_ptr<TextEmbedder>* out) {
  if (!out) return invalid_argument("TextEmbedder::create: out is null");
  out->reset();
  auto impl = std::make_unique<Impl>();
  if (Status s = impl->runner.init(model, options, "TextEmbedder", "", {"pooled"}); !s) return s;
  out->reset(new TextEmbedder(std::move(impl)));
  return Status::ok();
}

TextEmbedder::TextEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TextEmbedder::~TextEmbedder() = default;

int TextEmbedder::dimension() const { return impl_->runner.hidden_size(); }
const TaskTimings& TextEmbedder::last_timings() const { return impl_->runner.timings(); }

Status TextEmbedder::embed(const std::vector<std::string>& texts, std::vector<float>* embeddings) {
  if (!embeddings) return invalid_argument("TextEmbedder::embed: embeddings is null");
  tasks::TaskRunner& runner = impl_->runner;
  const size_t dim = static_cast<size_t>(runner.hidden_size());
  embeddings->assign(texts.size() * dim, 0.0f);
  return runner.run_texts(texts, [&](size_t first) {
    const std::vector<float>& pooled = runner.output(0);
    for (int r = 0; r < runner.batch().batch(); ++r) {
      const float* v = pooled.data() + static_cast<size_t>(r) * dim;
      float* dst = embeddings->data() + (first + static_cast<size_t>(r)) * dim;
      double norm = 0.0;
      for (size_t d = 0; d < dim; ++d) norm += static_cast<double>(v[d]) * v[d];
      // A zero vector stays zero (as sentence-transformers' Normalize leaves it, up to its eps).
      const float inv = norm > 0.0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.0f;
      for (size_t d = 0; d < dim; ++d) dst[d] = v[d] * inv;
    }
    return Status::ok();
  });
}

}  // namespace encrt
