// Packed batches (SessionOptions::padding, RunArgs::packed) through the backend under test: a
// backend whose supports_packed() takes the session's ops must give, packed, the real-token rows
// of its own padded run (bit for bit on host backends: their kernels are row-independent; within
// the backend's model tolerance on a device) and zero rows at padding, with sentence-level
// outputs alike; a backend without it must make auto run padded and refuse packed with a clear
// error. A backend that runs no op of a model leaves it to the CPU backend, which packs.
#include <catch2/catch.hpp>

#include <cstring>

#include "backend/backend_under_test.h"
#include "backend/compare.h"
#include "support/fixtures.h"

namespace {

using namespace encrt;
using namespace encrt::conformance;

struct Run {
  Status status;
  bool packed = false;
  std::map<std::string, std::vector<float>> outputs;
};

Run run(const Model& model, SessionOptions o, Padding padding, const Inputs& in) {
  Run r;
  o.padding = padding;
  std::unique_ptr<Session> session;
  r.status = Session::create(model, o, &session);
  if (!r.status) return r;
  r.status = session->run(in);
  if (!r.status) return r;
  r.packed = session->last_run_packed();
  for (const std::string& name : session->output_names()) {
    OutputInfo info;
    REQUIRE(session->output(name, &info).is_ok());
    if (info.dtype != DType::kF32) continue;
    std::vector<float>& v = r.outputs[name];
    v.resize(info.bytes / sizeof(float));
    REQUIRE(session->copy_output(name, v.data(), info.bytes).is_ok());
  }
  return r;
}

// Whether the backend under test runs any op of `model` (else every op is on the CPU backend).
bool runs_any_op(const Model& model, const SessionOptions& o) {
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(model, o, &session).is_ok());
  for (const OpPlacement& p : session->placement())
    if (p.backend == backend_under_test().table->name) return true;
  return false;
}

void check_fixture(const test::Fixture& f, converter::WeightType type) {
  const BackendUnderTest& b = backend_under_test();
  const std::string path = test::convert_fixture(f, type, "", ".conformance_packed");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(path, &model).is_ok());
  INFO("backend " << b.label << ", fixture " << f.name << " " << converter::weight_type_name(type));
  SessionOptions o;
  o.max_batch = f.batch;
  o.max_seq = f.seq;
  o.backend = b.backend;
  o.backend_options = b.options;
  const Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), f.has_token_types ? f.token_types.data.data() : nullptr};
  const Run padded = run(*model, o, Padding::kPadded, in);
  REQUIRE(padded.status.is_ok());
  const bool mine = runs_any_op(*model, o);
  if (mine && !b.table->supports_packed) {
    WARN(b.label << " does not run packed batches: auto runs padded, packed is refused");
    const Run autod = run(*model, o, Padding::kAuto, in);
    REQUIRE(autod.status.is_ok());
    CHECK_FALSE(autod.packed);
    const Run packed = run(*model, o, Padding::kPacked, in);
    CHECK(packed.status.code() == StatusCode::kUnsupported);
    CHECK_THAT(packed.status.message(), Catch::Contains("does not run op"));
    return;
  }
  const Run packed = run(*model, o, Padding::kPacked, in);
  INFO(packed.status.to_string());
  REQUIRE(packed.status.is_ok());
  CHECK(packed.packed);
  const DType weights = type == converter::WeightType::kF32 ? DType::kF32 : type == converter::WeightType::kF16 ? DType::kF16 : DType::kI8;
  const bool host = b.table->memory == backend::MemoryKind::kHost;
  for (const auto& [name, want] : padded.outputs) {
    INFO("output " << name);
    std::vector<float> got = packed.outputs.at(name);
    std::vector<float> ref = want;
    if (name == "hidden") {
      const size_t H = static_cast<size_t>(f.hidden);
      for (size_t t = 0; t < f.mask.data.size(); ++t) {
        if (f.mask.data[t]) continue;
        for (size_t i = 0; i < H; ++i) REQUIRE(got[t * H + i] == 0.0f);
        std::fill(ref.begin() + static_cast<std::ptrdiff_t>(t * H), ref.begin() + static_cast<std::ptrdiff_t>((t + 1) * H), 0.0f);
      }
    }
    if (host) {
      CHECK(std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float)) == 0);
    } else {
      const Comparison c = compare_f32(got.data(), ref.data(), ref.size());
      CHECK(c.nonfinite_mismatches == 0);
      CHECK(c.normalized_error <= model_tolerance(b, weights));
    }
  }
}

}  // namespace

TEST_CASE("conformance: packed batches", "[conformance][packed]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    if (f.has_probs) continue;  // the probabilities output keeps a session padded (test_packed_batches.cpp)
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) check_fixture(f, type);
  }
}
