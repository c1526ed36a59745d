// Threads: one model shared by sessions that run at the same time on several threads, one session
// handed from thread to thread, and the CPU backend's own thread pool. Every result must be bit
// for bit the single-threaded run's. scripts/test_sanitizers.sh runs this suite under
// ThreadSanitizer, where a data race fails the run even when the bits happen to agree.
// (Catch2's assertions are not thread-safe: the threads only record, the test thread checks.)
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/fixtures.h"

namespace {

using namespace encrt;

// The hidden states and pooled outputs of one run, as bytes.
struct Outputs {
  std::string status;
  std::vector<float> hidden, pooled;
  bool operator==(const Outputs& o) const {
    return status == o.status && hidden.size() == o.hidden.size() && pooled.size() == o.pooled.size() &&
           std::memcmp(hidden.data(), o.hidden.data(), hidden.size() * sizeof(float)) == 0 &&
           std::memcmp(pooled.data(), o.pooled.data(), pooled.size() * sizeof(float)) == 0;
  }
};

// One run of `session` on the fixture's inputs; no Catch2 here (called from other threads).
Outputs run_once(Session& session, const test::Fixture& f) {
  Outputs o;
  const Status s = session.run(test::fixture_inputs(f));
  o.status = s.to_string();
  if (!s) return o;
  const size_t hidden = static_cast<size_t>(f.batch) * f.seq * f.hidden;
  o.hidden.assign(session.last_hidden_state(), session.last_hidden_state() + hidden);
  o.pooled.assign(session.pooled(), session.pooled() + static_cast<size_t>(f.batch) * f.hidden);
  return o;
}

SessionOptions options_for(const test::Fixture& f, int threads) {
  SessionOptions o;
  o.max_batch = f.batch;
  o.max_seq = f.seq;
  o.threads = threads;
  o.backend = "cpu";
  return o;
}

}  // namespace

TEST_CASE("sessions of one model on several threads at once give the single-threaded bits", "[threads]") {
  constexpr int kThreads = 4, kRuns = 3;
  for (const char* fixture : {"bert_plain", "torch_pre_gelu_final_norm"})
    for (converter::WeightType type : {converter::WeightType::kF32, converter::WeightType::kI8}) {
      const test::Fixture f = test::load_fixture(fixture);
      std::unique_ptr<Model> model;
      REQUIRE(Model::load(test::convert_fixture(f, type), &model).is_ok());
      for (int pool : {1, 2}) {  // each session's own thread pool too (threads = 2)
        INFO(fixture << (type == converter::WeightType::kI8 ? " int8" : " fp32") << ", threads per session " << pool);
        std::unique_ptr<Session> single;
        REQUIRE(Session::create(*model, options_for(f, 1), &single).is_ok());
        const Outputs want = run_once(*single, f);
        REQUIRE(want.status == "ok");

        // Each thread creates its session (concurrently with the others) and runs it kRuns times.
        std::vector<std::vector<Outputs>> got(kThreads);
        std::vector<std::string> created(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
          threads.emplace_back([&, t] {
            std::unique_ptr<Session> session;
            const Status s = Session::create(*model, options_for(f, pool), &session);
            created[t] = s.to_string();
            if (!s) return;
            for (int r = 0; r < kRuns; ++r) got[t].push_back(run_once(*session, f));
          });
        for (std::thread& t : threads) t.join();
        for (int t = 0; t < kThreads; ++t) {
          INFO("thread " << t);
          CHECK(created[t] == "ok");
          REQUIRE(got[t].size() == static_cast<size_t>(kRuns));
          for (const Outputs& o : got[t]) CHECK(o == want);
        }
      }
    }
}

TEST_CASE("one session used by different threads in turn gives the same bits", "[threads]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
  for (int pool : {1, 2}) {
    INFO("threads per session " << pool);
    std::unique_ptr<Session> session;
    REQUIRE(Session::create(*model, options_for(f, pool), &session).is_ok());
    const Outputs want = run_once(*session, f);
    REQUIRE(want.status == "ok");
    // Thread t runs after thread t - 1 has finished (join): the session moves between threads,
    // never used by two at once, as the API allows.
    std::vector<Outputs> got(4);
    for (Outputs& o : got) std::thread([&] { o = run_once(*session, f); }).join();
    for (const Outputs& o : got) CHECK(o == want);
    CHECK(run_once(*session, f) == want);  // and back on the first thread
  }
}

// An int8 model's linears as fp16 (option int8_linears=f16): the model's fp16 views and their
// panels are made on first use (model/dequantized_linears.h), here by sessions created on several
// threads at once on a model that has none yet; every session must get the same panels and bits.
TEST_CASE("sessions on several threads make an int8 model's fp16 linears once", "[threads][int8_linears]") {
  constexpr int kThreads = 4;
  const test::Fixture f = test::load_fixture("torch_post_gelu_3layer");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
  SessionOptions o = options_for(f, 1);
  o.backend_options["int8_linears"] = "f16";
  std::vector<Outputs> got(kThreads);
  std::vector<std::string> created(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<Session> session;
      const Status s = Session::create(*model, o, &session);
      created[t] = s.to_string();
      if (s) got[t] = run_once(*session, f);
    });
  for (std::thread& t : threads) t.join();
  std::unique_ptr<Session> single;
  REQUIRE(Session::create(*model, o, &single).is_ok());
  CHECK(single->kernel_summary().find("int8 linears run as fp16") != std::string::npos);
  const Outputs want = run_once(*single, f);
  REQUIRE(want.status == "ok");
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(created[t] == "ok");
    CHECK(got[t] == want);
  }
}
