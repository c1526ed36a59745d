// tune_backend_options (encrt.hpp; runtime/src/tuning/backend_tuner.cpp): the greedy search over
// a backend's tunable options. In the mock_device entry of the suite, the search itself against
// the mock's tuning table (a fast candidate with wrong answers, a faster default, a refused value);
// in every other entry, the backend's own table on a fixture model: each value is either refused
// with a message or runs and agrees with the defaults (on a GPU: every kernel variant an option
// selects gives the defaults' answers), and the result creates a session.
#include <catch2/catch.hpp>

#include <string>

#include "backend/backend_under_test.h"
#include "backend/mock_device_backend.h"
#include "support/fixtures.h"

namespace {

using namespace encrt;

std::unique_ptr<Model> fixture_model(const test::Fixture& f, converter::WeightType weights) {
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, weights), &model).is_ok());
  return model;
}

const TuneTrial* trial(const TuneResult& r, const std::string& option) {
  for (const TuneTrial& t : r.trials)
    if (t.option == option) return &t;
  return nullptr;
}

// The search's own cases: the mock_device backend's table on the bert_plain fixture, at batch 1,
// seq 8, from a base with the given delay a run. False in every other entry of the suite.
struct MockSearch {
  std::unique_ptr<Model> model;
  SessionOptions base;
  TuneOptions t;
};
bool mock_search(const char* delay_us, MockSearch* s) {
  if (conformance::backend_under_test().backend != "mock_device") {
    SUCCEED("the search's own cases run in the mock_device entry of the suite");
    return false;
  }
  s->model = fixture_model(test::load_fixture("bert_plain"), converter::WeightType::kF32);
  s->base.backend = "mock_device";
  s->base.backend_options["delay_us"] = delay_us;
  s->t.batch = 1;
  s->t.seq = 8;
  return true;
}

}  // namespace

TEST_CASE("tuning: the search rejects wrong answers, takes what is faster, records refusals", "[conformance][tuning]") {
  MockSearch s;
  if (!mock_search("20000", &s)) return;  // 20 ms a run: far above the run itself
  const std::unique_ptr<Model>& model = s.model;
  const SessionOptions& base = s.base;
  TuneOptions& t = s.t;
  t.iters = 3;
  t.rounds = 3;
  size_t progressed = 0;
  t.progress = [&](const TuneTrial&) { ++progressed; };
  TuneResult r;
  const Status tuned_status = tune_backend_options(*model, base, t, &r);
  INFO(tuned_status.to_string());
  REQUIRE(tuned_status.is_ok());
  INFO("options: " << r.options.size());
  CHECK(r.backend == "mock_device");
  CHECK_FALSE(r.device_time);  // the mock has no clock of its own: wall time
  // corrupt=on skips the delay (the fastest of all) but negates a token's hidden state.
  const TuneTrial* corrupt = trial(r, "corrupt=on");
  REQUIRE(corrupt);
  CHECK(corrupt->outcome == "differs");
  CHECK(corrupt->min_cosine < t.min_cosine);
  CHECK(corrupt->ms < 0.0);  // never timed
  // A session that fails in a run after its creation: recorded, and the search goes on.
  const TuneTrial* failing = trial(r, "fail_run_after=2");
  REQUIRE(failing);
  CHECK(failing->outcome == "failed");
  CHECK_THAT(failing->detail, Catch::Contains("simulated device failure"));
  CHECK(progressed == r.trials.size());
  // delay_us=0 (the default) is faster than the base's 20 ms: taken; 2000 then is not faster.
  const TuneTrial* none = trial(r, "delay_us=0");
  REQUIRE(none);
  CHECK(none->outcome == "taken");
  CHECK(none->min_cosine > 0.999999);
  CHECK(none->ms < none->best_ms);
  const TuneTrial* some = trial(r, "delay_us=2000");
  REQUIRE(some);
  CHECK(some->outcome == "not faster");
  const TuneTrial* refused = trial(r, "delay_us=-1");
  REQUIRE(refused);
  CHECK(refused->outcome == "refused");
  CHECK_THAT(refused->detail, Catch::Contains("delay_us"));
  CHECK(r.options.at("delay_us") == "0");
  // path=b is slower alone (31 ms against 20) but faster with path_boost=on (6 ms), an option that
  // does something only with it: the pair is tried and taken; path_boost is not tried alone
  // before path=b is in the best options, and after, its other value is.
  const TuneTrial* alone = trial(r, "path=b");
  REQUIRE(alone);
  CHECK(alone->outcome == "not faster");
  const TuneTrial* pair = trial(r, "path=b,path_boost=on");
  REQUIRE(pair);
  CHECK(pair->outcome == "taken");
  CHECK(trial(r, "path_boost=on") == nullptr);
  const TuneTrial* off = trial(r, "path_boost=off");
  REQUIRE(off);
  CHECK(off->outcome == "not faster");
  CHECK(r.options.at("path") == "b");
  CHECK(r.options.at("path_boost") == "on");
  CHECK(r.options.count("corrupt") == 0);
  CHECK(r.options.count("fail_run_after") == 0);
  CHECK(r.tuned_ms < r.default_ms);
  CHECK(r.default_ms > 15.0);

  SECTION("bad arguments are errors, not crashes") {
    TuneOptions bad = t;
    bad.iters = 0;
    CHECK(tune_backend_options(*model, base, bad, &r).code() == StatusCode::kInvalidArgument);
    bad = t;
    bad.min_cosine = 2.0;
    CHECK(tune_backend_options(*model, base, bad, &r).code() == StatusCode::kInvalidArgument);
    bad = t;
    bad.max_seconds = -1.0;
    CHECK(tune_backend_options(*model, base, bad, &r).code() == StatusCode::kInvalidArgument);
    bad = t;
    bad.seq = 0;
    CHECK(tune_backend_options(*model, base, bad, &r).code() == StatusCode::kInvalidArgument);
    CHECK(tune_backend_options(*model, base, t, nullptr).code() == StatusCode::kInvalidArgument);
    SessionOptions unknown = base;
    unknown.backend_options["no_such_option"] = "1";
    CHECK(tune_backend_options(*model, unknown, t, &r).code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("tuning: a time budget stops the search before its next candidate", "[conformance][tuning]") {
  MockSearch s;
  if (!mock_search("20000", &s)) return;  // 20 ms a run: a trial takes a few hundred ms
  s.t.iters = 2;
  s.t.rounds = 2;
  TuneResult r;
  SECTION("spent before the first candidate: the defaults, timed, and where it stopped") {
    s.t.max_seconds = 1e-9;
    REQUIRE(tune_backend_options(*s.model, s.base, s.t, &r).is_ok());
    CHECK(r.trials.empty());
    CHECK(r.stopped_before == "path=b");  // the mock table's first candidate
    CHECK(r.options == s.base.backend_options);
    CHECK(r.default_ms > 15.0);
    CHECK(r.tuned_ms == r.default_ms);
  }
  SECTION("spent after a few: those trials, nothing after") {
    s.t.max_seconds = 0.2;  // a trial here takes at least 0.3 s (its warm-up and 8 timed runs of 20-31 ms)
    REQUIRE(tune_backend_options(*s.model, s.base, s.t, &r).is_ok());
    REQUIRE_FALSE(r.trials.empty());
    CHECK(r.trials.front().option == "path=b");
    CHECK_FALSE(r.stopped_before.empty());
    CHECK(trial(r, r.stopped_before) == nullptr);  // not tried
    CHECK(r.trials.size() < 4);                    // the whole search: 8 (below)
    CHECK(r.default_ms > 0.0);
  }
  SECTION("no budget: every candidate") {
    REQUIRE(tune_backend_options(*s.model, s.base, s.t, &r).is_ok());
    CHECK(r.stopped_before.empty());
    CHECK(trial(r, "path=b,path_boost=on"));
    CHECK(r.trials.size() == 8);
  }
}

TEST_CASE("tuning: where nothing is faster, the result is the defaults, timed once", "[conformance][tuning]") {
  MockSearch s;
  if (!mock_search("0", &s)) return;  // already the fastest correct value
  s.t.iters = 2;
  s.t.rounds = 2;
  TuneResult r;
  const Status tuned_status = tune_backend_options(*s.model, s.base, s.t, &r);
  INFO(tuned_status.to_string());
  REQUIRE(tuned_status.is_ok());
  CHECK(r.options == s.base.backend_options);
  for (const TuneTrial& x : r.trials) CHECK(x.outcome != "taken");
  CHECK(trial(r, "delay_us=2000"));
  CHECK(trial(r, "path=b,path_boost=on"));    // tried with its parent's value,
  CHECK(trial(r, "path_boost=on") == nullptr);  // never where it changes nothing (path=a)
  // Not the defaults' session against itself (which would report noise as a gain or a loss).
  CHECK(r.default_ms > 0.0);
  CHECK(r.tuned_ms == r.default_ms);
  CHECK_FALSE(r.backend_summary.empty());
}

TEST_CASE("tuning: every value of the backend's table runs and agrees with the defaults, or is refused",
          "[conformance][tuning]") {
  const conformance::BackendUnderTest& b = conformance::backend_under_test();
  if (b.backend == "mock_device" || !b.table->tuning) {
    SUCCEED("no tuning table of its own");
    return;
  }
  // An fp16 model: what the GPU's kernel variants (fp16 GEMMs, fused kernels, attention builds)
  // run; they differ from each other by fp16 rounding only.
  const test::Fixture f = test::load_fixture("torch_post_gelu_3layer");
  auto model = fixture_model(f, converter::WeightType::kF16);
  SessionOptions base;
  base.backend = b.backend;
  base.backend_options = b.options;
  TuneOptions t;
  t.batch = f.batch;
  t.seq = f.seq;
  t.iters = 2;
  t.rounds = 1;
  t.min_cosine = 0.999;
  TuneResult r;
  const Status tuned_status = tune_backend_options(*model, base, t, &r);
  INFO(tuned_status.to_string());
  REQUIRE(tuned_status.is_ok());
  CHECK(r.backend == b.backend);
  // Every value of each option without a parent but the current one (the options with one are
  // tried where their parent's value runs what they choose among).
  for (const backend::TuningChoice* c = b.table->tuning; c->key; ++c) {
    if (c->parent || b.options.count(c->key)) continue;
    for (const char* const* v = c->values + 1; *v; ++v) {
      INFO(c->key << "=" << *v);
      CHECK(trial(r, std::string(c->key) + "=" + *v));
    }
  }
  for (const TuneTrial& x : r.trials) {
    INFO(x.option << ": " << x.outcome << " " << x.detail);
    CHECK((x.outcome == "taken" || x.outcome == "not faster" || x.outcome == "refused"));
    if (x.outcome == "refused") CHECK_FALSE(x.detail.empty());
    if (x.outcome != "refused") CHECK(x.min_cosine >= 0.999);
  }
  SessionOptions tuned = base;
  tuned.backend_options = r.options;
  tuned.max_batch = f.batch;
  tuned.max_seq = f.seq;
  std::unique_ptr<Session> s;
  CHECK(Session::create(*model, tuned, &s).is_ok());
}
