// encrt/tasks.h over encrt/tasks.hpp.
#include <cstring>
#include <string>
#include <vector>

#include "api/c_api_common.h"
#include "encrt/tasks.h"
#include "encrt/tasks.hpp"

struct encrt_classifier {
  std::unique_ptr<encrt::TextClassifier> classifier;
  std::vector<encrt::Classification> results;
};
struct encrt_reranker {
  std::unique_ptr<encrt::Reranker> reranker;
  std::vector<encrt::RankedPassage> ranked;
};
struct encrt_tagger {
  std::unique_ptr<encrt::EntityTagger> tagger;
  std::vector<std::vector<encrt::Entity>> entities;  // the last call's, for the labels handed out
};
struct encrt_embedder {
  std::unique_ptr<encrt::TextEmbedder> embedder;
  std::vector<std::string> texts;  // reused between calls
  std::vector<float> out;
};

using encrt::capi::null_argument;
using encrt::capi::to_c;

namespace {

encrt_status to_task_options(const encrt_model* model, const encrt_task_options* options, encrt::TaskOptions* o) {
  if (!model) return null_argument("model");
  if (!options) return null_argument("options");
  if (options->struct_size < sizeof(encrt_task_options))
    return to_c(encrt::invalid_argument("encrt_task_options.struct_size is too small (call encrt_task_options_init)"));
  o->max_batch = options->max_batch;
  o->max_seq = options->max_seq;
  o->truncate = options->truncate != 0;
  o->threads = options->threads;
  if (options->backend && *options->backend) o->backend = options->backend;
  if (options->backend_options)
    if (encrt::Status s = encrt::capi::parse_backend_options(options->backend_options, &o->backend_options); !s)
      return to_c(s);
  return ENCRT_OK;
}

// texts[0..count) as strings; NULL entries are refused by name.
encrt_status read_texts(const char* const* texts, size_t count, const char* what, std::vector<std::string>* out) {
  out->clear();
  if (count > 0 && !texts) return null_argument(what);
  for (size_t i = 0; i < count; ++i) {
    if (!texts[i]) return null_argument((std::string(what) + "[" + std::to_string(i) + "]").c_str());
    out->emplace_back(texts[i]);
  }
  return ENCRT_OK;
}

// Creates a task handle: `member` of a new Handle made by Task::create, released into *out.
template <typename Handle, typename Task>
encrt_status create_task(const encrt_model* model, const encrt_task_options* options, Handle** out, const char* what,
                         std::unique_ptr<Task> Handle::*member) {
  if (!out) return null_argument(what);
  *out = nullptr;
  encrt::TaskOptions o;
  if (encrt_status st = to_task_options(model, options, &o); st != ENCRT_OK) return st;
  auto handle = std::make_unique<Handle>();
  if (encrt::Status s = Task::create(*model->model, o, &((*handle).*member)); !s) return to_c(s);
  *out = handle.release();
  return ENCRT_OK;
}

}  // namespace

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
  return create_task(model, options, out_embedder, "out_embedder", &encrt_embedder::embedder);
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
  if (encrt_status st = read_texts(texts, count, "texts", &embedder->texts); st != ENCRT_OK) return st;
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

encrt_status encrt_classifier_create(const encrt_model* model, const encrt_task_options* options,
                                     encrt_classifier** out_classifier) {
  return create_task(model, options, out_classifier, "out_classifier", &encrt_classifier::classifier);
}

void encrt_classifier_free(encrt_classifier* classifier) { delete classifier; }

encrt_status encrt_classifier_num_labels(const encrt_classifier* classifier, int* num_labels) {
  if (!classifier) return null_argument("classifier");
  if (!num_labels) return null_argument("num_labels");
  *num_labels = classifier->classifier->head().num_labels();
  return ENCRT_OK;
}

encrt_status encrt_classifier_classify(encrt_classifier* classifier, const char* const* texts,
                                       const char* const* second_texts, size_t count, int* label_ids, float* scores,
                                       size_t scores_capacity) {
  if (!classifier) return null_argument("classifier");
  if (count > 0 && !label_ids) return null_argument("label_ids");
  const size_t labels = static_cast<size_t>(classifier->classifier->head().num_labels());
  if (scores && scores_capacity < count * labels)
    return to_c(encrt::invalid_argument("encrt_classifier_classify: scores_capacity " +
                                        std::to_string(scores_capacity) + ", " + std::to_string(count * labels) +
                                        " needed"));
  std::vector<std::string> first, second;
  if (encrt_status st = read_texts(texts, count, "texts", &first); st != ENCRT_OK) return st;
  encrt::Status s;
  if (second_texts) {
    if (encrt_status st = read_texts(second_texts, count, "second_texts", &second); st != ENCRT_OK) return st;
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i < count; ++i) pairs.emplace_back(first[i], second[i]);
    s = classifier->classifier->classify_pairs(pairs, &classifier->results);
  } else {
    s = classifier->classifier->classify(first, &classifier->results);
  }
  if (!s) return to_c(s);
  for (size_t i = 0; i < count; ++i) {
    label_ids[i] = classifier->results[i].label_id;
    if (scores) std::memcpy(scores + i * labels, classifier->results[i].scores.data(), labels * sizeof(float));
  }
  return ENCRT_OK;
}

encrt_status encrt_reranker_create(const encrt_model* model, const encrt_task_options* options,
                                   encrt_reranker** out_reranker) {
  return create_task(model, options, out_reranker, "out_reranker", &encrt_reranker::reranker);
}

void encrt_reranker_free(encrt_reranker* reranker) { delete reranker; }

encrt_status encrt_reranker_rank(encrt_reranker* reranker, const char* query, const char* const* passages, size_t count,
                                 size_t* order, float* scores) {
  if (!reranker) return null_argument("reranker");
  if (!query) return null_argument("query");
  if (count > 0 && !order) return null_argument("order");
  std::vector<std::string> list;
  if (encrt_status st = read_texts(passages, count, "passages", &list); st != ENCRT_OK) return st;
  if (encrt::Status s = reranker->reranker->rank(query, list, &reranker->ranked); !s) return to_c(s);
  for (size_t i = 0; i < count; ++i) {
    order[i] = reranker->ranked[i].index;
    if (scores) scores[i] = reranker->ranked[i].score;
  }
  return ENCRT_OK;
}

encrt_status encrt_tagger_create(const encrt_model* model, const encrt_task_options* options,
                                 encrt_tagger** out_tagger) {
  return create_task(model, options, out_tagger, "out_tagger", &encrt_tagger::tagger);
}

void encrt_tagger_free(encrt_tagger* tagger) { delete tagger; }

encrt_status encrt_tagger_tag(encrt_tagger* tagger, const char* text, const char* aggregation, encrt_entity* entities,
                              size_t capacity, size_t* count) {
  if (!count) return null_argument("count");
  *count = 0;
  if (!tagger) return null_argument("tagger");
  if (!text) return null_argument("text");
  if (capacity > 0 && !entities) return null_argument("entities");
  encrt::EntityOptions eo;
  if (aggregation)
    if (encrt::Status s = encrt::parse_entity_aggregation(aggregation, &eo.aggregation); !s) return to_c(s);
  if (encrt::Status s = tagger->tagger->tag({text}, eo, &tagger->entities); !s) return to_c(s);
  const std::vector<encrt::Entity>& found = tagger->entities[0];
  *count = found.size();
  for (size_t i = 0; i < found.size() && i < capacity; ++i)
    entities[i] = encrt_entity{found[i].label.c_str(), found[i].score, found[i].start, found[i].end};
  if (capacity < found.size())
    return to_c(encrt::invalid_argument("encrt_tagger_tag: " + std::to_string(found.size()) + " entities, capacity " +
                                        std::to_string(capacity)));
  return ENCRT_OK;
}

}  // extern "C"
