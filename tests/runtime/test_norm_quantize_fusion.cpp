// The CPU backend runs a LayerNorm (or the embeddings' LayerNorm) and the quantization of its
// output for the next int8 linear as one pass over each thread's rows (cpu_executor.h:
// execute_norm_then_quantize). A profiled session runs every op on its own, so it is the unfused
// path: both must give the same bits, with one thread and with rows split across two, at the
// reference kernels and the best kernels of this CPU, padded and packed.
#include <catch2/catch.hpp>

#include <cstring>

#include "kernels/isa.h"
#include "support/fixtures.h"

using namespace encrt;

TEST_CASE("an int8 model's LayerNorm + quantize pairs run as one pass with the bits of the ops run apart",
          "[int8][cpu][fusion]") {
  const std::string best = kernels::best_isa_level().name;
  int compared = 0;
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
    for (const std::string& isa : {std::string("scalar"), best}) {
      for (int threads : {1, 2}) {
        SessionOptions fused;
        fused.max_batch = f.batch;
        fused.max_seq = f.seq;
        fused.threads = threads;
        fused.backend_options["isa"] = isa;
        SessionOptions apart = fused;
        apart.profile = true;
        auto a = test::run_fixture(*model, f, fused);
        auto b = test::run_fixture(*model, f, apart);
        const size_t bytes = static_cast<size_t>(f.batch) * f.seq * f.hidden * sizeof(float);
        INFO(name << " on " << isa << ", " << threads << " thread(s)");
        CHECK(std::memcmp(a->last_hidden_state(), b->last_hidden_state(), bytes) == 0);
        ++compared;
      }
    }
  }
  CHECK(compared > 0);
}
