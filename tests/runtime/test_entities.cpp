// encrt::aggregate_entities against Hugging Face's token-classification pipeline: the fixture
// (tests/fixtures/entities/pipeline_entities.json, from make_entity_fixture.py) holds, for 24
// sentences, the tokenizer's output, the pipeline's label probabilities of a random-weight
// BertForTokenClassification and the entities the pipeline returns for each aggregation strategy.
// Labels, byte spans and token indices must be equal and scores within 1e-5. Then hand-made cases
// for what the fixture cannot show (the word-id rule, plain labels) and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "heads/entities.h"

using namespace encrt;

namespace {

struct Case {
  std::string text;
  Encoding encoding;
  std::vector<float> scores;
  nlohmann::json expected;
};

nlohmann::json load_fixture() {
  std::ifstream in(std::string(ENCRT_FIXTURES_DIR) + "/entities/pipeline_entities.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

Case make_case(const nlohmann::json& c) {
  Case out;
  out.text = c.at("text").get<std::string>();
  Encoding& e = out.encoding;
  e.ids = c.at("ids").get<std::vector<int32_t>>();
  e.tokens = c.at("tokens").get<std::vector<std::string>>();
  e.word_ids = c.at("word_ids").get<std::vector<int32_t>>();
  e.special_tokens_mask = c.at("special_tokens_mask").get<std::vector<int32_t>>();
  for (const auto& o : c.at("offsets")) e.offsets.push_back(TextSpan{o.at(0).get<size_t>(), o.at(1).get<size_t>()});
  e.token_type_ids.assign(e.ids.size(), 0);
  e.attention_mask.assign(e.ids.size(), 1);
  for (int32_t special : e.special_tokens_mask) e.sequence_ids.push_back(special ? -1 : 0);
  for (const auto& r : c.at("scores"))
    for (const auto& v : r) out.scores.push_back(static_cast<float>(v.get<double>()));
  out.expected = c.at("expected");
  return out;
}

}  // namespace

TEST_CASE("entities: Hugging Face's pipeline, every aggregation strategy", "[entities]") {
  const nlohmann::json fixture = load_fixture();
  const std::vector<std::string> labels = fixture.at("labels").get<std::vector<std::string>>();
  const int unk = fixture.at("unk_id").get<int>();
  struct Run {
    const char* name;
    EntityAggregation aggregation;
    std::vector<std::string> ignore;
  };
  const std::vector<Run> runs = {{"none", EntityAggregation::kNone, {"O"}},
                                 {"simple", EntityAggregation::kSimple, {"O"}},
                                 {"first", EntityAggregation::kFirst, {"O"}},
                                 {"average", EntityAggregation::kAverage, {"O"}},
                                 {"max", EntityAggregation::kMax, {"O"}},
                                 {"simple_keep_o", EntityAggregation::kSimple, {}}};
  size_t compared = 0;
  for (const auto& c : fixture.at("cases")) {
    const Case k = make_case(c);
    for (const Run& run : runs) {
      EntityOptions opt;
      opt.aggregation = run.aggregation;
      opt.ignore_labels = run.ignore;
      opt.unk_id = unk;
      std::vector<Entity> got;
      const Status s = aggregate_entities(k.text, k.encoding, k.scores.data(), static_cast<int>(labels.size()), labels,
                                          opt, &got);
      INFO(run.name << ": " << k.text << ": " << s.to_string());
      REQUIRE(s.is_ok());
      const nlohmann::json& want = k.expected.at(run.name);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("entity " << i << ": " << got[i].label << " '" << got[i].word << "' vs " << want[i].dump());
        CHECK(got[i].label == want[i].at("label").get<std::string>());
        CHECK(got[i].start == want[i].at("start").get<size_t>());
        CHECK(got[i].end == want[i].at("end").get<size_t>());
        CHECK(std::fabs(got[i].score - want[i].at("score").get<double>()) <= 1e-5);
        CHECK(got[i].word == k.text.substr(got[i].start, got[i].end - got[i].start));
        if (want[i].contains("index")) {
          CHECK(got[i].first_token == want[i].at("index").get<int>());
          CHECK(got[i].last_token == got[i].first_token);
        }
        ++compared;
      }
    }
  }
  INFO(compared << " entities compared");
  CHECK(compared > 800);
}

TEST_CASE("entities: the strategies differ on one word, and the word-id rule", "[entities]") {
  // "Microsoft Ltd" as micro ##soft ltd, labels O B-ORG I-ORG NUM.
  const std::string text = "Microsoft Ltd";
  Encoding e;
  e.ids = {101, 7, 8, 9, 102};
  e.tokens = {"[CLS]", "micro", "##soft", "ltd", "[SEP]"};
  e.offsets = {{0, 0}, {0, 5}, {5, 9}, {10, 13}, {0, 0}};
  e.word_ids = {-1, 0, 0, 1, -1};
  e.special_tokens_mask = {1, 0, 0, 0, 1};
  e.sequence_ids = {-1, 0, 0, 0, -1};
  e.token_type_ids = e.attention_mask = {0, 0, 0, 0, 0};
  const std::vector<std::string> labels = {"O", "B-ORG", "I-ORG", "NUM"};
  const std::vector<float> scores = {
      1.0f, 0.0f, 0.0f, 0.0f,   // [CLS]
      0.1f, 0.6f, 0.2f, 0.1f,   // micro: B-ORG
      0.05f, 0.0f, 0.05f, 0.9f, // ##soft: NUM, the most confident
      0.0f, 0.1f, 0.8f, 0.1f,   // ltd: I-ORG
      1.0f, 0.0f, 0.0f, 0.0f};  // [SEP]
  auto run = [&](EntityAggregation a, SubwordRule rule = SubwordRule::kPipeline) {
    EntityOptions opt;
    opt.aggregation = a;
    opt.subwords = rule;
    std::vector<Entity> out;
    REQUIRE(aggregate_entities(text, e, scores.data(), 4, labels, opt, &out).is_ok());
    return out;
  };
  // simple: B-ORG, then NUM (another tag), then I-ORG (another tag again: a new group).
  std::vector<Entity> simple = run(EntityAggregation::kSimple);
  REQUIRE(simple.size() == 3);
  CHECK(simple[0].label == "ORG");
  CHECK(simple[0].word == "Micro");
  CHECK(simple[1].label == "NUM");
  CHECK(simple[1].word == "soft");
  CHECK(simple[2].word == "Ltd");
  // first: the word takes micro's B-ORG, and ltd's I-ORG joins it.
  std::vector<Entity> first = run(EntityAggregation::kFirst);
  REQUIRE(first.size() == 1);
  CHECK(first[0].label == "ORG");
  CHECK(first[0].word == "Microsoft Ltd");
  CHECK(first[0].first_token == 1);
  CHECK(first[0].last_token == 3);
  CHECK(first[0].score == Approx((0.6 + 0.8) / 2));
  // max: ##soft is the most confident token, so the word is NUM.
  std::vector<Entity> max = run(EntityAggregation::kMax);
  REQUIRE(max.size() == 2);
  CHECK(max[0].label == "NUM");
  CHECK(max[0].word == "Microsoft");
  CHECK(max[0].score == Approx(0.9));
  // average: mean (O .075, B .3, I .125, NUM .5): NUM.
  std::vector<Entity> average = run(EntityAggregation::kAverage);
  REQUIRE(average.size() == 2);
  CHECK(average[0].label == "NUM");
  CHECK(average[0].score == Approx(0.5));
  // none: each token with its own label; O tokens dropped.
  std::vector<Entity> none = run(EntityAggregation::kNone);
  REQUIRE(none.size() == 3);
  CHECK(none[0].label == "B-ORG");
  CHECK(none[2].label == "I-ORG");
  CHECK(none[2].first_token == 3);

  // The word-id rule and the length rule agree here; they differ when a token is not as long as
  // the text it covers: "Ann ǅ" is ann dz, and "dz" (two code points) covers "ǅ" (one), so the
  // pipeline's rule takes it for a piece of "Ann".
  CHECK(run(EntityAggregation::kFirst, SubwordRule::kWordIds).size() == 1);
  const std::string dz_text = "Ann \xC7\x85";  // ǅ is two bytes
  Encoding dz;
  dz.ids = {101, 7, 8, 102};
  dz.tokens = {"[CLS]", "ann", "dz", "[SEP]"};
  dz.offsets = {{0, 0}, {0, 3}, {4, 6}, {0, 0}};
  dz.word_ids = {-1, 0, 1, -1};
  dz.special_tokens_mask = {1, 0, 0, 1};
  dz.sequence_ids = {-1, 0, 0, -1};
  dz.token_type_ids = dz.attention_mask = {0, 0, 0, 0};
  const std::vector<float> dz_scores = {1, 0, 0, 0, 0.9f, 0.1f, 0, 0, 0.1f, 0.9f, 0, 0, 1, 0, 0, 0};
  EntityOptions opt;
  opt.aggregation = EntityAggregation::kFirst;
  std::vector<Entity> out;
  REQUIRE(aggregate_entities(dz_text, dz, dz_scores.data(), 4, labels, opt, &out).is_ok());
  CHECK(out.empty());  // one word "Ann ǅ" with ann's label, O
  opt.subwords = SubwordRule::kWordIds;
  REQUIRE(aggregate_entities(dz_text, dz, dz_scores.data(), 4, labels, opt, &out).is_ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].label == "ORG");
  CHECK(out[0].word == "\xC7\x85");
  // An unknown token never continues a word under the pipeline's rule.
  opt.subwords = SubwordRule::kPipeline;
  opt.unk_id = 8;
  REQUIRE(aggregate_entities(dz_text, dz, dz_scores.data(), 4, labels, opt, &out).is_ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].word == "\xC7\x85");
}

TEST_CASE("entities: the pieces of the rules", "[entities]") {
  CHECK(heads::code_points("naïve") == 5);
  CHECK(heads::code_points("東京") == 2);
  CHECK(heads::continues_word_by_length("##ing", "ing", false));
  CHECK(!heads::continues_word_by_length("ing", "ing", false));
  CHECK(!heads::continues_word_by_length("[UNK]", "ǅ", true));
  CHECK(heads::bio_tag("B-PER").position == 'B');
  CHECK(heads::bio_tag("B-PER").tag == "PER");
  CHECK(heads::bio_tag("I-LOC").tag == "LOC");
  CHECK(heads::bio_tag("NUM").position == 'I');
  CHECK(heads::bio_tag("NUM").tag == "NUM");
  CHECK(heads::bio_tag("E-PER").tag == "E-PER");
  CHECK(heads::group_name("E-PER") == "PER");
  CHECK(heads::group_name("O") == "O");
  EntityAggregation a = EntityAggregation::kNone;
  for (EntityAggregation want : {EntityAggregation::kNone, EntityAggregation::kSimple, EntityAggregation::kFirst,
                                 EntityAggregation::kAverage, EntityAggregation::kMax}) {
    REQUIRE(parse_entity_aggregation(entity_aggregation_name(want), &a).is_ok());
    CHECK(a == want);
  }
  CHECK(parse_entity_aggregation("mean", &a).code() == StatusCode::kInvalidArgument);
  CHECK(parse_entity_aggregation("max", nullptr).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("entities: bad input is a clear error", "[entities][bad_input]") {
  const std::string text = "Ann";
  Encoding e;
  e.ids = {101, 5, 102};
  e.tokens = {"[CLS]", "ann", "[SEP]"};
  e.offsets = {{0, 0}, {0, 3}, {0, 0}};
  e.word_ids = {-1, 0, -1};
  e.special_tokens_mask = {1, 0, 1};
  e.sequence_ids = {-1, 0, -1};
  e.token_type_ids = e.attention_mask = {0, 0, 0};
  const std::vector<std::string> labels = {"O", "B-PER"};
  std::vector<float> scores = {1, 0, 0.2f, 0.8f, 1, 0};
  std::vector<Entity> out;
  const EntityOptions opt;
  REQUIRE(aggregate_entities(text, e, scores.data(), 2, labels, opt, &out).is_ok());
  REQUIRE(out.size() == 1);
  CHECK(out[0].label == "PER");
  auto error = [&](const Status& s, const char* says) {
    INFO(s.to_string());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find(says) != std::string::npos);
  };
  error(aggregate_entities(text, e, scores.data(), 2, labels, opt, nullptr), "out is null");
  error(aggregate_entities(text, e, nullptr, 2, labels, opt, &out), "scores is null");
  error(aggregate_entities(text, e, scores.data(), 3, labels, opt, &out), "2 label names for 3 labels");
  error(aggregate_entities(text, e, scores.data(), 0, {}, opt, &out), "num_labels");
  error(aggregate_entities("An", e, scores.data(), 2, labels, opt, &out), "outside the text");
  std::vector<float> nan = scores;
  nan[3] = std::numeric_limits<float>::quiet_NaN();
  error(aggregate_entities(text, e, nan.data(), 2, labels, opt, &out), "not finite");
  Encoding pair = e;
  pair.sequence_ids = {-1, 1, -1};
  error(aggregate_entities(text, pair, scores.data(), 2, labels, opt, &out), "second text of a pair");
  Encoding ragged = e;
  ragged.tokens.pop_back();
  error(aggregate_entities(text, ragged, scores.data(), 2, labels, opt, &out), "differ in length");
  EntityOptions bad = opt;
  bad.aggregation = static_cast<EntityAggregation>(9);
  error(aggregate_entities(text, e, scores.data(), 2, labels, bad, &out), "unknown aggregation");
  // An empty text: no entities, no error.
  Encoding empty;
  empty.ids = {101, 102};
  empty.tokens = {"[CLS]", "[SEP]"};
  empty.offsets = {{0, 0}, {0, 0}};
  empty.word_ids = {-1, -1};
  empty.special_tokens_mask = {1, 1};
  REQUIRE(aggregate_entities("", empty, scores.data(), 2, labels, opt, &out).is_ok());
  CHECK(out.empty());
}
