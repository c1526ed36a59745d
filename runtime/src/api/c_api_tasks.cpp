// encrt/tasks.h over encrt/tasks.hpp.
#include "encrt/tasks.h"

#include <cstring>
#include <string>
#include <vector>

#include "api/c_api_common.h"
#include "encrt/tasks.hpp"

struct encrt_embedder {
  std::unique_ptr<encrt::TextEmbedder> embedder;
  std::vector<std::string> texts;  // reused between calls
  std::vector<float> out;
};

using encrt::capi::null_argument;
using encrt::capi::to_c;

extern "C" {

void encrt_task_options_init(encrt_task_options* options) {
  if (!options) return;
  std::memset(options, 0, sizeof *options);
  const encrt::TaskOptions defaults;
  options->struct_size = sizeof *options;
  options->max_batch = defaults.max_batch;
  options->max_seq = defaults.max_seq;
  options->truncate = defaults.truncate ? 1 : 0;
  options->threads = defaults.threads;
}

encrt_status encrt_embedder_create(const encrt_model* model, const encrt_task_options* options,
                                   encrt_embedder** out_embedder) {
  if (!out_embedder) return null_argument("out_embedder");
  *out_embedder = nullptr;
  if (!model) return null_argument("model");
  if (!options) return null_argument("options");
  if (options->struct_size < sizeof(encrt_task_options))
    return to_c(encrt::invalid_argument("encrt_task_options.struct_size is too small (call encrt_task_options_init)"));
  encrt::TaskOptions o;
  o.max_batch = options->max_batch;
  o.max_seq = options->max_seq;
  o.truncate = options->truncate != 0;
  o.threads = options->threads;
  if (options->backend && *options->backend) o.backend = options->backend;
  if (options->backend_options)
    if (encrt::Status s = encrt::capi::parse_backend_options(options->backend_options, &o.backend_options); !s)
      return to_c(s);
  auto handle = std::make_unique<encrt_embedder>();
  if (encrt::Status s = encrt::TextEmbedder::create(*model->model, o, &handle->embedder); !s) return to_c(s);
  *out_embedder = handle.release();
  return ENCRT_OK;
}

void encrt_embedder_free(encrt_embedder* embedder) { delete embedder; }

encrt_status encrt_embedder_dimension(const encrt_embedder* embedder, int* dimension) {
  if (!embedder) return null_argument("embedder");
  if (!dimension) return null_argument("dimension");
  *dimension = embedder->embedder->dimension();
  return ENCRT_OK;
}

encrt_status encrt_embedder_embed(encrt_embedder* embedder, const char* const* texts, size_t count, float* embeddings,
                                  size_t capacity) {
  if (!embedder) return null_argument("embedder");
  if (count > 0 && !texts) return null_argument("texts");
  const size_t need = count * static_cast<size_t>(embedder->embedder->dimension());
  if (count > 0 && !embeddings) return null_argument("embeddings");
  if (capacity < need)
    return to_c(encrt::invalid_argument("encrt_embedder_embed: capacity " + std::to_string(capacity) + " floats, " +
                                        std::to_string(need) + " needed"));
  embedder->texts.clear();
  for (size_t i = 0; i < count; ++i) {
    if (!texts[i]) return null_argument(("texts[" + std::to_string(i) + "]").c_str());
    embedder->texts.emplace_back(texts[i]);
  }
  if (encrt::Status s = embedder->embedder->embed(embedder->texts, &embedder->out); !s) return to_c(s);
  if (need) std::memcpy(embeddings, embedder->out.data(), need * sizeof(float));
  return ENCRT_OK;
}

encrt_status encrt_nearest(const float* corpus, size_t count, int dim, const float* query, size_t k, size_t* indices,
                           float* scores, size_t* found) {
  if (!found) return null_argument("found");
  *found = 0;
  if (k > 0 && !indices) return null_argument("indices");
  std::vector<encrt::SearchHit> hits;
  if (encrt::Status s = encrt::nearest(corpus, count, dim, query, k, &hits); !s) return to_c(s);
  for (size_t i = 0; i < hits.size(); ++i) {
    indices[i] = hits[i].index;
    if (scores) scores[i] = hits[i].score;
  }
  *found = hits.size();
  return ENCRT_OK;
}

}  // extern "C"
