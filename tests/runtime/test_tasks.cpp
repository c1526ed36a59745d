// encrt tasks (tasks.hpp) on the bert_plain fixture with a small vocabulary: TextEmbedder equals a
// hand-made session run per text (so chunking and padding change nothing), truncation is cut or
// refused as asked, nearest() ranks exactly, and SemanticIndex finds a corpus sentence itself.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"
#include "support/fixtures.h"

using namespace encrt;

namespace {

const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",  "cat",   "sat",  "on",    "mat",   "a",    "dog",
    "ran",   "in",    "park",  "stocks", "fell", "today", "sun",   "is",   "warm",  "kitten", "rests", "rug",
    ".",     ",",     "big",   "small", "red",  "blue",  "##s",   "##ed", "walk",  "city",  "river", "tree"};

struct Loaded {
  std::unique_ptr<Model> model;
};

const Model& model() {
  static Loaded l = [] {
    Loaded x;
    const std::string path = test::bert_plain_with_vocab("tasks_vocab", kVocab, R"({"do_lower_case": true})");
    REQUIRE(Model::load(path, &x.model).is_ok());
    return x;
  }();
  return *l.model;
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
  CHECK_THAT(s.message(), Catch::Contains("text 1") && Catch::Contains("more than the 8 planned"));
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
