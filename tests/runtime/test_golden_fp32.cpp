// End-to-end: every PyTorch fixture converted to fp32 and run by encrt matches PyTorch's output
// with max abs error <= 1e-4 x the output's RMS on every real token, for every named kernel level
// (preset) this CPU runs and with 1 and 2 threads.
#include <catch2/catch.hpp>

#include "kernels/isa.h"
#include "support/fixtures.h"

using namespace encrt;
using encrt::test::Fixture;

namespace {

std::vector<std::string> levels_to_test() {
  std::vector<std::string> levels;
  for (const kernels::IsaLevel& l : kernels::kIsaLevels)
    if (kernels::isa_supported(l.features)) levels.push_back(l.name);
  return levels;
}

}  // namespace

TEST_CASE("fp32 models match PyTorch on every fixture", "[golden]") {
  for (const std::string& name : test::fixture_names()) {
    const Fixture f = test::load_fixture(name);
    const std::string path = test::convert_fixture(f, converter::WeightType::kF32);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(path, &model).is_ok());
    for (const std::string& isa : levels_to_test()) {
      for (int threads : {1, 2}) {
        INFO("fixture " << name << ", isa " << isa << ", threads " << threads);
        SessionOptions opt;
        opt.max_batch = f.batch;
        opt.max_seq = f.seq;
        opt.threads = threads;
        opt.backend_options["isa"] = isa;
        opt.attention_layer = f.has_probs ? 1 : -1;
        auto session = test::run_fixture(*model, f, opt);

        const double rms = test::rms_on_real_tokens(f.hidden_state.data.data(), f, f.hidden);
        const double err = test::max_abs_diff_on_real_tokens(session->last_hidden_state(), f.hidden_state.data.data(), f, f.hidden);
        INFO("hidden: max abs error " << err << ", rms " << rms);
        CHECK(err <= 1e-4 * rms);

        double pooled_err = 0;
        for (size_t i = 0; i < f.pooled.data.size(); ++i)
          pooled_err = std::max(pooled_err, static_cast<double>(std::fabs(session->pooled()[i] - f.pooled.data[i])));
        INFO("pooled (mean): max abs error " << pooled_err);
        CHECK(pooled_err <= 1e-4 * rms);

        if (f.has_probs) {
          // Probabilities of layer 1 on real query rows (padded keys included: they must be 0).
          double probs_err = 0;
          const int S = f.seq, heads = f.heads;
          for (int b = 0; b < f.batch; ++b)
            for (int h = 0; h < heads; ++h)
              for (int i = 0; i < S; ++i) {
                if (f.mask.data[static_cast<size_t>(b) * S + i] == 0) continue;
                for (int j = 0; j < S; ++j) {
                  const size_t k = ((static_cast<size_t>(b) * heads + h) * S + i) * S + j;
                  probs_err = std::max(probs_err, static_cast<double>(std::fabs(session->attention_probs()[k] - f.probs_layer1.data[k])));
                }
              }
          INFO("attention probabilities of layer 1: max abs error " << probs_err);
          CHECK(probs_err <= 1e-5);
        }
      }
    }
  }
}

TEST_CASE("BERT pooler output matches PyTorch", "[golden]") {
  for (const std::string& name : test::fixture_names()) {
    const Fixture f = test::load_fixture(name);
    if (!f.has_pooler) continue;
    INFO("fixture " << name);
    const std::string path = test::convert_fixture(f, converter::WeightType::kF32, "pooler");
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(path, &model).is_ok());
    REQUIRE(model->config().pooling == "pooler");
    SessionOptions opt;
    opt.max_batch = f.batch;
    opt.max_seq = f.seq;
    auto session = test::run_fixture(*model, f, opt);
    double err = 0;
    for (size_t i = 0; i < f.pooler.data.size(); ++i)
      err = std::max(err, static_cast<double>(std::fabs(session->pooled()[i] - f.pooler.data[i])));
    INFO("pooler: max abs error " << err);
    CHECK(err <= 1e-5);
  }
}
