// TextEmbedder: chunks of up to max_batch texts, one session run each, the pooled rows scaled to
// unit length.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "encrt/tasks.hpp"
#include "tasks/text_batch.h"

namespace encrt {

struct TextEmbedder::Impl {
  const Model* model = nullptr;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Session> session;
  TaskOptions options;
  int max_seq = 0;
  int dimension = 0;
  EncodeOptions encode;  // max_length = max_seq, truncation as asked
  tasks::TextBatch batch;
  TaskTimings timings;
};

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Status TextEmbedder::create(const Model& model, const TaskOptions& options, std::unique_ptr<TextEmbedder>* out) {
  if (!out) return invalid_argument("TextEmbedder::create: out is null");
  out->reset();
  if (options.max_batch < 1) return invalid_argument("TextEmbedder: max_batch must be >= 1");
  const int model_max = model.config().max_seq_len;
  if (options.max_seq < 0 || options.max_seq > model_max) {
    return invalid_argument("TextEmbedder: max_seq " + std::to_string(options.max_seq) + " outside 0.." +
                            std::to_string(model_max) + " (the model's max_seq_len; 0 = that)");
  }
  auto impl = std::make_unique<Impl>();
  impl->model = &model;
  impl->options = options;
  impl->max_seq = options.max_seq > 0 ? options.max_seq : model_max;
  impl->dimension = model.config().hidden_size;
  impl->encode.max_length = impl->max_seq;
  impl->encode.truncate = options.truncate;
  impl->encode.truncation = options.truncation;
  if (Status s = Tokenizer::create(model, &impl->tokenizer); !s) return s;
  SessionOptions so;
  so.max_batch = options.max_batch;
  so.max_seq = impl->max_seq;
  so.threads = options.threads;
  so.backend = options.backend;
  so.backend_options = options.backend_options;
  if (Status s = Session::create(model, so, &impl->session); !s) return s;
  out->reset(new TextEmbedder(std::move(impl)));
  return Status::ok();
}

TextEmbedder::TextEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TextEmbedder::~TextEmbedder() = default;

int TextEmbedder::dimension() const { return impl_->dimension; }
const TaskTimings& TextEmbedder::last_timings() const { return impl_->timings; }

Status TextEmbedder::embed(const std::vector<std::string>& texts, std::vector<float>* embeddings) {
  if (!embeddings) return invalid_argument("TextEmbedder::embed: embeddings is null");
  Impl& m = *impl_;
  m.timings = TaskTimings{};
  const size_t dim = static_cast<size_t>(m.dimension);
  embeddings->assign(texts.size() * dim, 0.0f);
  for (size_t first = 0; first < texts.size(); first += static_cast<size_t>(m.options.max_batch)) {
    const size_t count = std::min(texts.size() - first, static_cast<size_t>(m.options.max_batch));
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = m.batch.fill(*m.tokenizer, texts, first, count, m.encode); !s) return s;
    m.timings.tokenize_ms += ms_since(t0);
    m.timings.tokens += m.batch.real_tokens();
    t0 = std::chrono::steady_clock::now();
    if (Status s = m.session->run(m.batch.inputs()); !s) return s;
    OutputInfo pooled;
    if (Status s = m.session->output("pooled", &pooled); !s) return s;
    float* dst = embeddings->data() + first * dim;
    if (pooled.device == "host") {
      std::copy_n(static_cast<const float*>(pooled.data), count * dim, dst);
    } else if (Status s = m.session->copy_output("pooled", dst, count * dim * sizeof(float)); !s) {
      return s;
    }
    for (size_t r = 0; r < count; ++r) {
      float* v = dst + r * dim;
      double norm = 0.0;
      for (size_t d = 0; d < dim; ++d) norm += static_cast<double>(v[d]) * v[d];
      // A zero vector stays zero (as sentence-transformers' Normalize leaves it, up to its eps).
      if (norm > 0.0) {
        const float inv = static_cast<float>(1.0 / std::sqrt(norm));
        for (size_t d = 0; d < dim; ++d) v[d] *= inv;
      }
    }
    m.timings.run_ms += ms_since(t0);
    ++m.timings.runs;
  }
  return Status::ok();
}

}  // namespace encrt
