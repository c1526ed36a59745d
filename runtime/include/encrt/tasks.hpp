// encrt tasks: text in, answers out. Each task owns a tokenizer and one session planned once for
// (max_batch, max_seq); calls tokenize, pad each chunk of up to max_batch texts to its longest,
// run, and read the answer. Built on the public API of encrt.hpp only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/export.h"
#include "encrt/status.hpp"

namespace encrt {

// How a task turns texts into runs.
struct TaskOptions {
  int max_batch = 16;  // texts per run (a call with more texts runs several times)
  // Tokens per text, [CLS] and [SEP] included; 0 = the model's max_seq_len. The session's arena is
  // planned for max_batch × max_seq once, at create().
  int max_seq = 0;
  // A text with more tokens than max_seq: cut to max_seq (true, the default, as Hugging Face's and
  // sentence-transformers' truncation=True does) or refused with kInvalidArgument (false).
  bool truncate = true;
  // Which side of a text pair is cut (Hugging Face's strategies; longest_first is its default).
  Truncation truncation = Truncation::kLongestFirst;
  int threads = 1;
  std::string backend = "auto";
  std::map<std::string, std::string> backend_options;
};

// What the last call spent, in milliseconds (for --verbose and benchmarks).
struct TaskTimings {
  double tokenize_ms = 0.0;
  double run_ms = 0.0;  // the session's runs, output reads included
  int runs = 0;         // session runs (chunks of max_batch texts)
  int tokens = 0;       // real tokens, specials included
};

// Sentence embeddings: the model's pooling (mean, CLS or pooler, as its file says), each vector
// scaled to unit length, so that a dot product is the cosine similarity. An empty text is
// [CLS] [SEP], as Hugging Face tokenizes it.
class ENCRT_API TextEmbedder {
 public:
  static Status create(const Model& model, const TaskOptions& options, std::unique_ptr<TextEmbedder>* out);
  ~TextEmbedder();
  TextEmbedder(const TextEmbedder&) = delete;
  TextEmbedder& operator=(const TextEmbedder&) = delete;

  int dimension() const;  // the model's hidden size
  // embeddings: resized to [texts.size(), dimension()], row-major. No texts: an empty result.
  Status embed(const std::vector<std::string>& texts, std::vector<float>* embeddings);
  const TaskTimings& last_timings() const;

  struct Impl;  // the library's own (opaque here)

 private:
  explicit TextEmbedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One nearest neighbour: the row of the corpus and its cosine similarity to the query.
struct SearchHit {
  size_t index = 0;
  float score = 0.0f;
};

// The k rows of `corpus` ([count, dim], unit rows) with the largest dot product with `query`
// (dim, unit length), best first; ties go to the lower index. k larger than count gives count hits.
ENCRT_API Status nearest(const float* corpus, size_t count, int dim, const float* query, size_t k,
                         std::vector<SearchHit>* hits);

// Semantic search over a fixed list of sentences: their embeddings are computed once, at
// create() (or taken from a previous create's `embeddings()`), and every query is one embedding
// plus a scan.
class ENCRT_API SemanticIndex {
 public:
  // Embeds `sentences` with `embedder` (which must outlive the index).
  static Status create(TextEmbedder* embedder, std::vector<std::string> sentences, std::unique_ptr<SemanticIndex>* out);
  // Reuses embeddings computed before ([sentences.size(), embedder->dimension()], as embeddings()
  // gave them), e.g. read back from a cache file.
  static Status from_embeddings(TextEmbedder* embedder, std::vector<std::string> sentences,
                                std::vector<float> embeddings, std::unique_ptr<SemanticIndex>* out);
  ~SemanticIndex();
  SemanticIndex(const SemanticIndex&) = delete;
  SemanticIndex& operator=(const SemanticIndex&) = delete;

  Status search(const std::string& query, size_t k, std::vector<SearchHit>* hits);
  size_t size() const;
  const std::string& sentence(size_t index) const;  // "" for an index >= size()
  const std::vector<float>& embeddings() const;  // [size(), dimension], unit rows

  struct Impl;  // the library's own (opaque here)

 private:
  explicit SemanticIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Task heads (a model converted from a checkpoint with a classifier: Model::head()).

// One text's (or pair's) answer from a sequence classification head.
struct Classification {
  int label_id = -1;          // the label with the highest score
  std::string label;          // its name (id2label)
  float score = 0.0f;         // its score
  std::vector<float> scores;  // every label's score, by id: softmax, sigmoid or the logit, as the head says
  std::vector<float> logits;  // every label's logit, by id
};

// Texts (or pairs of texts, e.g. premise and hypothesis) to labels: sentiment, topics, intents, NLI.
class ENCRT_API TextClassifier {
 public:
  // kUnsupported when the model has no sequence classification head.
  static Status create(const Model& model, const TaskOptions& options, std::unique_ptr<TextClassifier>* out);
  ~TextClassifier();
  TextClassifier(const TextClassifier&) = delete;
  TextClassifier& operator=(const TextClassifier&) = delete;

  const HeadInfo& head() const;
  Status classify(const std::vector<std::string>& texts, std::vector<Classification>* out);
  Status classify_pairs(const std::vector<std::pair<std::string, std::string>>& pairs, std::vector<Classification>* out);
  const TaskTimings& last_timings() const;

  struct Impl;  // the library's own (opaque here)

 private:
  explicit TextClassifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One passage's relevance to a query, from a cross-encoder (a one-logit sequence classifier over
// [CLS] query [SEP] passage [SEP]).
struct RankedPassage {
  size_t index = 0;    // the passage's place in the list given
  float score = 0.0f;  // the head's score (sigmoid of the logit for cross-encoders converted from Hugging Face)
  float logit = 0.0f;
};

class ENCRT_API Reranker {
 public:
  // kUnsupported when the model has no sequence classification head with exactly one label.
  static Status create(const Model& model, const TaskOptions& options, std::unique_ptr<Reranker>* out);
  ~Reranker();
  Reranker(const Reranker&) = delete;
  Reranker& operator=(const Reranker&) = delete;

  // Every passage, most relevant first (ties: the earlier passage first).
  Status rank(const std::string& query, const std::vector<std::string>& passages, std::vector<RankedPassage>* out);
  const TaskTimings& last_timings() const;

  struct Impl;  // the library's own (opaque here)

 private:
  explicit Reranker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Named entities with character spans, from a token classification head (BIO / IOB2 labels),
// grouped as Hugging Face's token-classification pipeline groups them (EntityOptions).
class ENCRT_API EntityTagger {
 public:
  // kUnsupported when the model has no token classification head.
  static Status create(const Model& model, const TaskOptions& options, std::unique_ptr<EntityTagger>* out);
  ~EntityTagger();
  EntityTagger(const EntityTagger&) = delete;
  EntityTagger& operator=(const EntityTagger&) = delete;

  const HeadInfo& head() const;
  // out: one list per text; each entity's start/end are UTF-8 byte offsets into its text. The
  // token scores are the softmax of the logits, as the pipeline computes them.
  Status tag(const std::vector<std::string>& texts, const EntityOptions& options,
             std::vector<std::vector<Entity>>* out);
  const TaskTimings& last_timings() const;

  struct Impl;  // the library's own (opaque here)

 private:
  explicit EntityTagger(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace encrt
