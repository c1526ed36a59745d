// encrt tasks (tasks.hpp) on the bert_plain fixture with a small vocabulary: TextEmbedder equals a
// hand-made session run per text (so chunking and padding change nothing), truncation is cut or
// refused as asked, nearest() ranks exactly, and SemanticIndex finds a corpus sentence itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "encrt/encrt.h"
#include "encrt/encrt.hpp"
#include "encrt/tasks.h"
#include "encrt/tasks.hpp"
#include "support/fixtures.h"

using namespace encrt;

namespace {

const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",  "cat",   "sat",  "on",    "mat",   "a",    "dog",
    "ran",   "in",    "park",  "stocks", "fell", "today", "sun",   "is",   "warm",  "kitten", "rests", "rug",
    ".",     ",",     "big",   "small", "red",  "blue",  "##s",   "##ed", "walk",  "city",  "river", "tree"};

const std::string& model_path() {
  static const std::string path = test::bert_plain_with_vocab("tasks_vocab", kVocab, R"({"do_lower_case": true})");
  return path;
}

const Model& model() {
  static const std::unique_ptr<Model> m = [] {
    std::unique_ptr<Model> x;
    REQUIRE(Model::load(model_path(), &x).is_ok());
    return x;
  }();
  return *m;
}

const std::vector<std::string> kTexts = {"The cat sat on the mat.", "A dog ran in the park", "stocks fell today",
                                         "the sun is warm",         "",                       "a small red kitten rests on a blue rug",
                                         "walked cats"};

// The pooled vector of one text alone (batch 1, no padding), scaled to unit length.
std::vector<float> alone(const std::string& text, int max_seq) {
  std::unique_ptr<Tokenizer> tok;
  REQUIRE(Tokenizer::create(model(), &tok).is_ok());
  std::vector<int32_t> ids;
  REQUIRE(tok->encode(text, max_seq, &ids).is_ok());
  SessionOptions so;
  so.max_batch = 1;
  so.max_seq = max_seq;
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(model(), so, &session).is_ok());
  Inputs in;
  in.batch = 1;
  in.seq = static_cast<int>(ids.size());
  in.input_ids = ids.data();
  REQUIRE(session->run(in).is_ok());
  const int dim = model().config().hidden_size;
  std::vector<float> v(session->pooled(), session->pooled() + dim);
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  return v;
}

}  // namespace

TEST_CASE("TextEmbedder: chunks of padded texts give each text's own embedding", "[tasks]") {
  const int dim = model().config().hidden_size;
  const int max_seq = model().config().max_seq_len;
  for (int max_batch : {1, 3, 16}) {
    TaskOptions o;
    o.max_batch = max_batch;
    std::unique_ptr<TextEmbedder> e;
    REQUIRE(TextEmbedder::create(model(), o, &e).is_ok());
    REQUIRE(e->dimension() == dim);
    std::vector<float> emb;
    REQUIRE(e->embed(kTexts, &emb).is_ok());
    REQUIRE(emb.size() == kTexts.size() * static_cast<size_t>(dim));
    CHECK(e->last_timings().runs == static_cast<int>((kTexts.size() + max_batch - 1) / max_batch));
    for (size_t t = 0; t < kTexts.size(); ++t) {
      INFO("max_batch " << max_batch << ", text " << t << ": '" << kTexts[t] << "'");
      const std::vector<float> want = alone(kTexts[t], max_seq);
      double norm = 0, max_diff = 0;
      for (int d = 0; d < dim; ++d) {
        const float got = emb[t * dim + d];
        norm += static_cast<double>(got) * got;
        max_diff = std::max(max_diff, static_cast<double>(std::fabs(got - want[static_cast<size_t>(d)])));
      }
      CHECK(std::fabs(norm - 1.0) < 1e-5);
      CHECK(max_diff < 1e-5);
    }
  }
  // No texts: nothing to run, an empty result.
  TaskOptions o;
  std::unique_ptr<TextEmbedder> e;
  REQUIRE(TextEmbedder::create(model(), o, &e).is_ok());
  std::vector<float> emb(3, 1.0f);
  REQUIRE(e->embed({}, &emb).is_ok());
  CHECK(emb.empty());
  CHECK_FALSE(e->embed(kTexts, nullptr).is_ok());
}

TEST_CASE("TextEmbedder: a text longer than max_seq is cut, or refused without truncation", "[tasks][bad-input]") {
  const std::string long_text = "the big cat sat on the small red mat in the park today";  // 15 tokens with specials
  const int max_seq = 8;
  TaskOptions o;
  o.max_seq = max_seq;
  std::unique_ptr<TextEmbedder> cut;
  REQUIRE(TextEmbedder::create(model(), o, &cut).is_ok());
  std::vector<float> emb;
  REQUIRE(cut->embed({long_text}, &emb).is_ok());
  const std::vector<float> want = alone(long_text, max_seq);  // the tokenizer's own cut at 8
  for (size_t d = 0; d < want.size(); ++d) CHECK(std::fabs(emb[d] - want[d]) < 1e-5);

  o.truncate = false;
  std::unique_ptr<TextEmbedder> strict;
  REQUIRE(TextEmbedder::create(model(), o, &strict).is_ok());
  const Status s = strict->embed({"the cat", long_text}, &emb);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("text 1:") && Catch::Contains("over max_length 8"));
  CHECK(strict->embed({"the cat sat"}, &emb).is_ok());

  // Options the model cannot plan for.
  o = TaskOptions{};
  o.max_seq = model().config().max_seq_len + 1;
  std::unique_ptr<TextEmbedder> bad;
  CHECK(TextEmbedder::create(model(), o, &bad).code() == StatusCode::kInvalidArgument);
  CHECK(bad == nullptr);
  o = TaskOptions{};
  o.max_batch = 0;
  CHECK(TextEmbedder::create(model(), o, &bad).code() == StatusCode::kInvalidArgument);
  CHECK(TextEmbedder::create(model(), TaskOptions{}, nullptr).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("nearest: exact top-k, best first, ties to the lower index", "[tasks]") {
  // Four unit rows in 2-D and a query along x.
  const float corpus[] = {0.0f, 1.0f, 1.0f, 0.0f, 0.6f, 0.8f, 1.0f, 0.0f, -1.0f, 0.0f};
  const float query[] = {1.0f, 0.0f};
  std::vector<SearchHit> hits;
  REQUIRE(nearest(corpus, 5, 2, query, 3, &hits).is_ok());
  REQUIRE(hits.size() == 3);
  CHECK(hits[0].index == 1);  // score 1, tied with row 3: the lower index first
  CHECK(hits[1].index == 3);
  CHECK(hits[2].index == 2);
  CHECK(hits[2].score == Approx(0.6f));
  REQUIRE(nearest(corpus, 5, 2, query, 50, &hits).is_ok());
  REQUIRE(hits.size() == 5);
  CHECK(hits.back().index == 4);
  CHECK(hits.back().score == Approx(-1.0f));
  REQUIRE(nearest(corpus, 0, 2, query, 3, &hits).is_ok());
  CHECK(hits.empty());
  CHECK_FALSE(nearest(nullptr, 5, 2, query, 3, &hits).is_ok());
  CHECK_FALSE(nearest(corpus, 5, 0, query, 3, &hits).is_ok());
  CHECK_FALSE(nearest(corpus, 5, 2, query, 3, nullptr).is_ok());
}

TEST_CASE("SemanticIndex: a corpus sentence finds itself; cached embeddings are checked", "[tasks]") {
  TaskOptions o;
  o.max_batch = 4;
  std::unique_ptr<TextEmbedder> e;
  REQUIRE(TextEmbedder::create(model(), o, &e).is_ok());
  std::unique_ptr<SemanticIndex> index;
  REQUIRE(SemanticIndex::create(e.get(), kTexts, &index).is_ok());
  REQUIRE(index->size() == kTexts.size());
  for (size_t t = 0; t < kTexts.size(); ++t) {
    std::vector<SearchHit> hits;
    REQUIRE(index->search(kTexts[t], 2, &hits).is_ok());
    REQUIRE(hits.size() == 2);
    INFO("text " << t);
    CHECK(hits[0].index == t);
    CHECK(hits[0].score == Approx(1.0f).margin(1e-5));
    CHECK(hits[1].score <= hits[0].score);
    CHECK(index->sentence(hits[0].index) == kTexts[t]);
  }
  CHECK(index->sentence(kTexts.size()).empty());

  // Embeddings from before give the same answers; a wrong count is refused.
  std::unique_ptr<SemanticIndex> again;
  REQUIRE(SemanticIndex::from_embeddings(e.get(), kTexts, index->embeddings(), &again).is_ok());
  std::vector<SearchHit> a, b;
  REQUIRE(index->search("a cat on a rug", 3, &a).is_ok());
  REQUIRE(again->search("a cat on a rug", 3, &b).is_ok());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK((a[i].index == b[i].index && a[i].score == b[i].score));
  std::vector<float> short_emb(index->embeddings().begin(), index->embeddings().end() - 1);
  CHECK(SemanticIndex::from_embeddings(e.get(), kTexts, short_emb, &again).code() == StatusCode::kInvalidArgument);
  CHECK(again == nullptr);
  CHECK_FALSE(SemanticIndex::create(nullptr, kTexts, &again).is_ok());
}

TEST_CASE("tasks C API: embeddings equal the C++ API's; NULLs and small buffers are refused", "[tasks][c-api]") {
  encrt_model* m = nullptr;
  REQUIRE(encrt_model_load(model_path().c_str(), &m) == ENCRT_OK);
  encrt_task_options o;
  encrt_task_options_init(&o);
  o.max_batch = 3;
  encrt_embedder* e = nullptr;
  REQUIRE(encrt_embedder_create(m, &o, &e) == ENCRT_OK);
  int dim = 0;
  REQUIRE(encrt_embedder_dimension(e, &dim) == ENCRT_OK);
  REQUIRE(dim == model().config().hidden_size);
  std::vector<const char*> texts;
  for (const std::string& t : kTexts) texts.push_back(t.c_str());
  std::vector<float> got(texts.size() * static_cast<size_t>(dim));
  REQUIRE(encrt_embedder_embed(e, texts.data(), texts.size(), got.data(), got.size()) == ENCRT_OK);
  TaskOptions co;
  co.max_batch = 3;
  std::unique_ptr<TextEmbedder> ce;
  REQUIRE(TextEmbedder::create(model(), co, &ce).is_ok());
  std::vector<float> want;
  REQUIRE(ce->embed(kTexts, &want).is_ok());
  CHECK(got == want);

  std::vector<size_t> idx(2);
  std::vector<float> scores(2);
  size_t found = 9;
  REQUIRE(encrt_nearest(got.data(), texts.size(), dim, got.data() + 2 * dim, 2, idx.data(), scores.data(), &found) ==
          ENCRT_OK);
  CHECK(found == 2);
  CHECK(idx[0] == 2);
  CHECK(scores[0] == Approx(1.0f).margin(1e-5));

  CHECK(encrt_embedder_embed(e, texts.data(), texts.size(), got.data(), got.size() - 1) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::string(encrt_last_error()).find("capacity") != std::string::npos);
  CHECK(encrt_embedder_embed(e, nullptr, 2, got.data(), got.size()) == ENCRT_INVALID_ARGUMENT);
  const char* with_null[] = {"the cat", nullptr};
  CHECK(encrt_embedder_embed(e, with_null, 2, got.data(), got.size()) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_embedder_embed(nullptr, texts.data(), 1, got.data(), got.size()) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_embedder_embed(e, nullptr, 0, nullptr, 0) == ENCRT_OK);
  CHECK(encrt_embedder_dimension(e, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_nearest(got.data(), 2, dim, got.data(), 1, idx.data(), nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_nearest(got.data(), 2, dim, got.data(), 1, nullptr, nullptr, &found) == ENCRT_INVALID_ARGUMENT);
  encrt_embedder* none = reinterpret_cast<encrt_embedder*>(&found);
  CHECK(encrt_embedder_create(nullptr, &o, &none) == ENCRT_INVALID_ARGUMENT);
  CHECK(none == nullptr);
  CHECK(encrt_embedder_create(m, nullptr, &none) == ENCRT_INVALID_ARGUMENT);
  encrt_task_options small = o;
  small.struct_size = 8;
  CHECK(encrt_embedder_create(m, &small, &none) == ENCRT_INVALID_ARGUMENT);
  encrt_task_options bad = o;
  bad.backend_options = "isa";
  CHECK(encrt_embedder_create(m, &bad, &none) == ENCRT_INVALID_ARGUMENT);
  encrt_task_options_init(nullptr);
  encrt_embedder_free(nullptr);
  encrt_embedder_free(e);
  encrt_model_free(m);
}

namespace {

std::unique_ptr<Model> head_model(const std::string& fixture) {
  const std::string path =
      test::checkpoint_with_vocab("heads/" + fixture, "tasks_" + fixture, kVocab, R"({"do_lower_case": true})");
  std::unique_ptr<Model> m;
  REQUIRE(Model::load(path, &m).is_ok());
  return m;
}

}  // namespace

TEST_CASE("head tasks: each needs its own kind of head, and says so", "[tasks][heads][bad-input]") {
  std::unique_ptr<TextClassifier> classifier;
  Status s = TextClassifier::create(model(), TaskOptions{}, &classifier);  // bert_plain: no head
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("head"));
  CHECK(classifier == nullptr);
  const std::unique_ptr<Model> token = head_model("bert_token");
  const std::unique_ptr<Model> multi = head_model("bert_seq_multi");
  s = TextClassifier::create(*token, TaskOptions{}, &classifier);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("sequence_classification") && Catch::Contains("token_classification"));
  std::unique_ptr<EntityTagger> tagger;
  CHECK(EntityTagger::create(*multi, TaskOptions{}, &tagger).code() == StatusCode::kUnsupported);
  std::unique_ptr<Reranker> reranker;
  s = Reranker::create(*multi, TaskOptions{}, &reranker);  // 4 labels, not a cross-encoder
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("4 labels"));
  CHECK(TextClassifier::create(*multi, TaskOptions{}, nullptr).code() == StatusCode::kInvalidArgument);
  TaskOptions too_long;
  too_long.max_seq = multi->config().max_seq_len + 1;
  CHECK(TextClassifier::create(*multi, too_long, &classifier).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("TextClassifier: labels are the best scores, and chunking changes nothing", "[tasks][heads]") {
  for (const char* fixture : {"bert_seq_single", "bert_seq_multi"}) {
    INFO(fixture);
    const std::unique_ptr<Model> m = head_model(fixture);
    HeadInfo head;
    REQUIRE(m->head(&head).is_ok());
    std::vector<std::vector<Classification>> runs;
    for (int max_batch : {1, 3, 16}) {
      TaskOptions o;
      o.max_batch = max_batch;
      std::unique_ptr<TextClassifier> c;
      REQUIRE(TextClassifier::create(*m, o, &c).is_ok());
      CHECK(c->head().labels == head.labels);
      runs.emplace_back();
      REQUIRE(c->classify(kTexts, &runs.back()).is_ok());
      REQUIRE(runs.back().size() == kTexts.size());
      std::vector<Classification> pairs;
      REQUIRE(c->classify_pairs({{"the cat", "sat on the mat"}, {"", "a dog"}}, &pairs).is_ok());
      CHECK(pairs.size() == 2);
    }
    for (const std::vector<Classification>& run : runs)
      for (size_t t = 0; t < kTexts.size(); ++t) {
        const Classification& c = run[t];
        REQUIRE(c.scores.size() == static_cast<size_t>(head.num_labels()));
        CHECK(c.label == head.labels[static_cast<size_t>(c.label_id)]);
        CHECK(c.score == *std::max_element(c.scores.begin(), c.scores.end()));
        double sum = 0;
        for (size_t k = 0; k < c.scores.size(); ++k) {
          sum += c.scores[k];
          const double want = head.score_function == "softmax" ? 0.0 : 1.0 / (1.0 + std::exp(-c.logits[k]));
          if (head.score_function == "sigmoid") CHECK(c.scores[k] == Approx(want).margin(1e-6));
        }
        if (head.score_function == "softmax") CHECK(sum == Approx(1.0).margin(1e-5));
        for (size_t k = 0; k < c.logits.size(); ++k) CHECK(c.logits[k] == Approx(runs[0][t].logits[k]).margin(1e-5));
      }
  }
}

TEST_CASE("Reranker and EntityTagger: orders, spans and texts that are too long", "[tasks][heads]") {
  const std::unique_ptr<Model> cross = head_model("bert_cross_encoder");
  std::unique_ptr<Reranker> r;
  REQUIRE(Reranker::create(*cross, TaskOptions{}, &r).is_ok());
  std::vector<RankedPassage> ranked;
  REQUIRE(r->rank("the cat", kTexts, &ranked).is_ok());
  REQUIRE(ranked.size() == kTexts.size());
  std::vector<bool> seen(kTexts.size(), false);
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (i) CHECK(ranked[i - 1].score >= ranked[i].score);
    CHECK(ranked[i].score == Approx(1.0 / (1.0 + std::exp(-ranked[i].logit))).margin(1e-6));
    seen.at(ranked[i].index) = true;
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
  REQUIRE(r->rank("the cat", {}, &ranked).is_ok());
  CHECK(ranked.empty());

  const std::unique_ptr<Model> token = head_model("bert_token");
  TaskOptions o;
  o.max_batch = 2;
  std::unique_ptr<EntityTagger> tagger;
  REQUIRE(EntityTagger::create(*token, o, &tagger).is_ok());
  std::vector<std::vector<Entity>> entities;
  for (EntityAggregation a : {EntityAggregation::kNone, EntityAggregation::kSimple, EntityAggregation::kFirst,
                              EntityAggregation::kAverage, EntityAggregation::kMax}) {
    EntityOptions eo;
    eo.aggregation = a;
    eo.ignore_labels.clear();  // every token's group, so that each text has some
    REQUIRE(tagger->tag(kTexts, eo, &entities).is_ok());
    REQUIRE(entities.size() == kTexts.size());
    for (size_t t = 0; t < kTexts.size(); ++t) {
      if (!kTexts[t].empty()) CHECK_FALSE(entities[t].empty());
      for (const Entity& e : entities[t]) {
        CHECK(e.start < e.end);
        CHECK(e.end <= kTexts[t].size());
        CHECK(e.word == kTexts[t].substr(e.start, e.end - e.start));
        CHECK((e.score > 0.0f && e.score <= 1.0f));
      }
    }
  }
  o.max_seq = 6;
  o.truncate = false;
  REQUIRE(EntityTagger::create(*token, o, &tagger).is_ok());
  const Status s = tagger->tag({"the cat", "the big cat sat on the small red mat"}, EntityOptions{}, &entities);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("text 1:"));
  CHECK_FALSE(tagger->tag(kTexts, EntityOptions{}, nullptr).is_ok());
}

TEST_CASE("head tasks C API: the C++ answers through plain arrays; NULLs and small buffers refused",
          "[tasks][heads][c-api]") {
  encrt_task_options o;
  encrt_task_options_init(&o);
  std::vector<const char*> texts;
  for (const std::string& t : kTexts) texts.push_back(t.c_str());

  const std::string single =
      test::checkpoint_with_vocab("heads/bert_seq_single", "tasks_c_single", kVocab, R"({"do_lower_case": true})");
  encrt_model* m = nullptr;
  REQUIRE(encrt_model_load(single.c_str(), &m) == ENCRT_OK);
  encrt_classifier* c = nullptr;
  REQUIRE(encrt_classifier_create(m, &o, &c) == ENCRT_OK);
  int labels = 0;
  REQUIRE(encrt_classifier_num_labels(c, &labels) == ENCRT_OK);
  std::vector<int> ids(texts.size());
  std::vector<float> scores(texts.size() * static_cast<size_t>(labels));
  REQUIRE(encrt_classifier_classify(c, texts.data(), nullptr, texts.size(), ids.data(), scores.data(), scores.size()) ==
          ENCRT_OK);
  std::unique_ptr<Model> cm;
  REQUIRE(Model::load(single, &cm).is_ok());
  std::unique_ptr<TextClassifier> cc;
  REQUIRE(TextClassifier::create(*cm, TaskOptions{}, &cc).is_ok());
  std::vector<Classification> want;
  REQUIRE(cc->classify(kTexts, &want).is_ok());
  for (size_t i = 0; i < texts.size(); ++i) {
    CHECK(ids[i] == want[i].label_id);
    for (int k = 0; k < labels; ++k) CHECK(scores[i * labels + k] == want[i].scores[static_cast<size_t>(k)]);
  }
  REQUIRE(encrt_classifier_classify(c, texts.data(), texts.data(), texts.size(), ids.data(), nullptr, 0) == ENCRT_OK);
  CHECK(encrt_classifier_classify(c, texts.data(), nullptr, texts.size(), ids.data(), scores.data(), 2) ==
        ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_classifier_classify(c, texts.data(), nullptr, texts.size(), nullptr, nullptr, 0) == ENCRT_INVALID_ARGUMENT);
  const char* with_null[] = {"the cat", nullptr};
  CHECK(encrt_classifier_classify(c, texts.data(), with_null, 2, ids.data(), nullptr, 0) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::string(encrt_last_error()).find("second_texts[1]") != std::string::npos);
  encrt_reranker* r = nullptr;
  CHECK(encrt_reranker_create(m, &o, &r) == ENCRT_UNSUPPORTED);  // 3 labels
  CHECK(r == nullptr);
  encrt_tagger* t = nullptr;
  CHECK(encrt_tagger_create(m, &o, &t) == ENCRT_UNSUPPORTED);
  encrt_classifier_free(c);
  encrt_model_free(m);

  const std::string cross =
      test::checkpoint_with_vocab("heads/bert_cross_encoder", "tasks_c_cross", kVocab, R"({"do_lower_case": true})");
  REQUIRE(encrt_model_load(cross.c_str(), &m) == ENCRT_OK);
  REQUIRE(encrt_reranker_create(m, &o, &r) == ENCRT_OK);
  std::vector<size_t> order(texts.size());
  std::vector<float> rs(texts.size());
  REQUIRE(encrt_reranker_rank(r, "the cat", texts.data(), texts.size(), order.data(), rs.data()) == ENCRT_OK);
  for (size_t i = 1; i < rs.size(); ++i) CHECK(rs[i - 1] >= rs[i]);
  CHECK(encrt_reranker_rank(r, nullptr, texts.data(), texts.size(), order.data(), rs.data()) == ENCRT_INVALID_ARGUMENT);
  encrt_reranker_free(r);
  encrt_model_free(m);

  const std::string token =
      test::checkpoint_with_vocab("heads/bert_token", "tasks_c_token", kVocab, R"({"do_lower_case": true})");
  REQUIRE(encrt_model_load(token.c_str(), &m) == ENCRT_OK);
  REQUIRE(encrt_tagger_create(m, &o, &t) == ENCRT_OK);
  std::vector<encrt_entity> ents(64);
  size_t count = 0;
  const std::string text = "the big cat sat on the small red mat";
  REQUIRE(encrt_tagger_tag(t, text.c_str(), "none", ents.data(), ents.size(), &count) == ENCRT_OK);
  std::unique_ptr<Model> tm;
  REQUIRE(Model::load(token, &tm).is_ok());
  std::unique_ptr<EntityTagger> ct;
  REQUIRE(EntityTagger::create(*tm, TaskOptions{}, &ct).is_ok());
  EntityOptions eo;
  eo.aggregation = EntityAggregation::kNone;
  std::vector<std::vector<Entity>> want_entities;
  REQUIRE(ct->tag({text}, eo, &want_entities).is_ok());
  REQUIRE(count == want_entities[0].size());
  for (size_t i = 0; i < count; ++i) {
    CHECK(std::string(ents[i].label) == want_entities[0][i].label);
    CHECK((ents[i].start == want_entities[0][i].start && ents[i].end == want_entities[0][i].end));
  }
  if (count > 0) {
    size_t again = 0;
    CHECK(encrt_tagger_tag(t, text.c_str(), "none", ents.data(), count - 1, &again) == ENCRT_INVALID_ARGUMENT);
    CHECK(again == count);
  }
  CHECK(encrt_tagger_tag(t, text.c_str(), "loudest", ents.data(), ents.size(), &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tagger_tag(t, nullptr, nullptr, ents.data(), ents.size(), &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tagger_tag(t, text.c_str(), nullptr, ents.data(), ents.size(), nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_tagger_free(t);
  encrt_classifier_free(nullptr);
  encrt_reranker_free(nullptr);
  encrt_tagger_free(nullptr);
  encrt_model_free(m);
}
