// Packed batches (SessionOptions::padding, RunArgs::packed) through the backend under test: a
// backend whose supports_packed() takes the session's ops must give, packed, the real-token rows
// of its own padded run (bit for bit on host backends: their kernels are row-independent; within
// the backend's model tolerance on a device) and zero rows at padding, with sentence-level
// outputs alike; a backend without it must make auto run padded and refuse packed with a clear
// error. A backend that runs no op of a model leaves it to the CPU backend, which packs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "backend/backend_under_test.h"
#include "backend/compare.h"
#include "model/model_impl.h"
#include "support/fixtures.h"

namespace {

using namespace encrt;
using namespace encrt::conformance;

struct Run {
  Status status;
  bool packed = false;
  std::map<std::string, std::vector<float>> outputs;
};

// Runs `in` on a session made already; the fp32 outputs copied to the host.
Run run_on(Session& session, const Inputs& in) {
  Run r;
  r.status = session.run(in);
  if (!r.status) return r;
  r.packed = session.last_run_packed();
  for (const std::string& name : session.output_names()) {
    OutputInfo info;
    REQUIRE(session.output(name, &info).is_ok());
    if (info.dtype != DType::kF32) continue;
    std::vector<float>& v = r.outputs[name];
    v.resize(info.bytes / sizeof(float));
    REQUIRE(session.copy_output(name, v.data(), info.bytes).is_ok());
  }
  return r;
}

Run run(const Model& model, SessionOptions o, Padding padding, const Inputs& in) {
  o.padding = padding;
  std::unique_ptr<Session> session;
  Run r;
  r.status = Session::create(model, o, &session);
  if (!r.status) return r;
  return run_on(*session, in);
}

DType weights_of(converter::WeightType type) {
  return type == converter::WeightType::kF32 ? DType::kF32 : type == converter::WeightType::kF16 ? DType::kF16 : DType::kI8;
}

// A packed run's outputs against the padded run's of the same inputs: the hidden state zero at
// every padding position of `mask` and the padded run's elsewhere, every other output the padded
// run's (bit for bit on host backends, within the backend's model tolerance on a device). On a host
// backend a sequence whose mask has holes (not right padding) is held to 1e-5 x the output's RMS
// instead: packed, its keys move to other SIMD lanes, and the NEON fp32 attention's 4-lane softmax
// sum then rounds differently (a few ulps; tests/runtime/test_packed_batches.cpp, same rule). In
// an fp16 or int8 model the later layers' fp16 arithmetic or requantization can turn those ulps
// into a step of their own (measured under qemu, fp16 arithmetic: 3.6e-3 x RMS), so there such a
// sequence is held to the backend's model tolerance (backend_under_test.cpp), 1e-5 at least.
void check_packed_equals_padded(const Run& padded, const Run& packed, const std::vector<int32_t>& mask, size_t H,
                                DType weights, int seq) {
  const BackendUnderTest& b = backend_under_test();
  const bool host = b.table->memory == backend::MemoryKind::kHost;
  const size_t batch = mask.size() / static_cast<size_t>(seq);
  std::vector<bool> right_padded(batch, true);
  for (size_t s = 0; s < batch; ++s)
    for (size_t t = 1; t < static_cast<size_t>(seq); ++t)
      if (mask[s * seq + t] && !mask[s * seq + t - 1]) right_padded[s] = false;
  for (const auto& [name, want] : padded.outputs) {
    INFO("output " << name);
    std::vector<float> got = packed.outputs.at(name);
    std::vector<float> ref = want;
    if (name == "hidden") {
      size_t nonzero_at_padding = 0;
      for (size_t t = 0; t < mask.size(); ++t) {
        if (mask[t]) continue;
        for (size_t i = 0; i < H; ++i) nonzero_at_padding += got[t * H + i] != 0.0f;
        std::fill(ref.begin() + static_cast<std::ptrdiff_t>(t * H), ref.begin() + static_cast<std::ptrdiff_t>((t + 1) * H), 0.0f);
      }
      CHECK(nonzero_at_padding == 0);
    }
    if (host) {
      // Each output holds its sequences one after another, whatever its rows (tokens or sequences).
      const size_t per_sequence = ref.size() / batch;
      double sum2 = 0, holes_error = 0;
      size_t differ = 0;
      for (float v : ref) sum2 += static_cast<double>(v) * v;
      const double rms = ref.empty() ? 0.0 : std::sqrt(sum2 / static_cast<double>(ref.size()));
      for (size_t i = 0; i < ref.size(); ++i) {
        if (right_padded[i / per_sequence])
          differ += std::memcmp(&got[i], &ref[i], sizeof(float)) != 0;
        else
          holes_error = std::max(holes_error, static_cast<double>(std::fabs(got[i] - ref[i])));
      }
      const double holes_tolerance = weights == DType::kF32 ? 1e-5 : std::max(1e-5, model_tolerance(b, weights));
      INFO("sequences with holes: max |packed - padded| " << holes_error << ", RMS " << rms << ", tolerance "
                                                          << holes_tolerance << " x RMS");
      CHECK(differ == 0);
      CHECK(holes_error <= holes_tolerance * rms);
    } else {
      const Comparison c = compare_f32(got.data(), ref.data(), ref.size());
      CHECK(c.nonfinite_mismatches == 0);
      CHECK(c.normalized_error <= model_tolerance(b, weights));
    }
  }
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
  check_packed_equals_padded(padded, packed, f.mask.data, static_cast<size_t>(f.hidden), weights_of(type), f.seq);
}

// A batch over the fixture's ids, `batch` sequences of f.seq, with the given mask.
struct Batch {
  int batch = 0, seq = 0;
  std::vector<int32_t> ids, mask, types;
  bool types_given = false;
  Inputs inputs() const { return Inputs{batch, seq, ids.data(), mask.data(), types_given ? types.data() : nullptr}; }
};

Batch batch_of(const test::Fixture& f, int batch, const std::function<bool(int b, int t)>& real) {
  Batch x;
  x.batch = batch;
  x.seq = f.seq;
  x.types_given = f.has_token_types;
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < f.seq; ++t) {
      const size_t from = static_cast<size_t>(b % f.batch) * static_cast<size_t>(f.seq) + static_cast<size_t>(t);
      x.ids.push_back(f.ids.data[from]);
      x.types.push_back(f.has_token_types ? f.token_types.data[from] : 0);
      x.mask.push_back(real(b, t) ? 1 : 0);
    }
  return x;
}

// Many sequences of many lengths through two sessions kept alive (one packed, one padded), so
// that a device backend meets more packed rows than one bucket of its captured graphs holds,
// the same token count in another layout (a replayed graph must read the run's own offsets and
// sources), a batch without padding, holes in every sequence, a smaller batch, and the first
// layout again after the others. Every sequence starts with a real token (a model that pools
// first tokens packs only then).
void check_many_lengths(const test::Fixture& f, converter::WeightType type) {
  const BackendUnderTest& b = backend_under_test();
  const std::string path = test::convert_fixture(f, type, "", ".conformance_packed");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(path, &model).is_ok());
  INFO("backend " << b.label << ", fixture " << f.name << " " << converter::weight_type_name(type));
  const int batch = 16, S = f.seq;
  SessionOptions o;
  o.max_batch = batch;
  o.max_seq = S;
  o.backend = b.backend;
  o.backend_options = b.options;
  if (runs_any_op(*model, o) && !b.table->supports_packed) return;  // refusing packed: check_fixture
  std::unique_ptr<Session> packed, padded;
  o.padding = Padding::kPacked;
  REQUIRE(Session::create(*model, o, &packed).is_ok());
  o.padding = Padding::kPadded;
  REQUIRE(Session::create(*model, o, &padded).is_ok());
  auto length = [S](int b) { return 1 + (b * 7) % S; };
  const Batch lengths = batch_of(f, batch, [&](int s, int t) { return t < length(s); });
  const Batch reversed = batch_of(f, batch, [&](int s, int t) { return t < length(batch - 1 - s); });
  const Batch full = batch_of(f, batch, [](int, int) { return true; });
  const Batch holes = batch_of(f, batch, [](int s, int t) { return t == 0 || (t + s) % 3 != 1; });
  const Batch few = batch_of(f, 5, [&](int s, int t) { return t < length(s + 3); });
  const Batch* order[] = {&lengths, &reversed, &full, &holes, &few, &lengths, &reversed};
  for (size_t k = 0; k < sizeof order / sizeof order[0]; ++k) {
    INFO("batch " << k);
    const Run want = run_on(*padded, order[k]->inputs());
    REQUIRE(want.status.is_ok());
    const Run got = run_on(*packed, order[k]->inputs());
    INFO(got.status.to_string());
    REQUIRE(got.status.is_ok());
    CHECK(got.packed);
    check_packed_equals_padded(want, got, order[k]->mask, static_cast<size_t>(f.hidden), weights_of(type), order[k]->seq);
  }
}

}  // namespace

TEST_CASE("conformance: packed batches", "[conformance][packed]") {
  for (const std::string& name : test::fixture_names()) {
    // (Every fixture has probabilities to compare with, but these sessions do not ask for them
    // (SessionOptions::attention_layer -1): that output keeps a session padded, test_packed_batches.cpp.)
    const test::Fixture f = test::load_fixture(name);
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) check_fixture(f, type);
  }
}

TEST_CASE("conformance: packed batches of many lengths, layouts and buckets", "[conformance][packed][sweep]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) check_many_lengths(f, type);
  }
}

// A real model (MiniLM, as test_models.cpp's case) at a serving batch: 32 sequences of lengths 1
// to 64, so a device backend's packed runs span many row buckets; then the same lengths in
// reverse order (the same bucket, another layout: a replayed graph) and the first batch again.
TEST_CASE("conformance: packed batches of MiniLM (ENCRT_CONFORMANCE_MODEL)", "[conformance][packed][models]") {
  const char* path = std::getenv("ENCRT_CONFORMANCE_MODEL");
  if (!path || !*path) {
    WARN("ENCRT_CONFORMANCE_MODEL is not set: no real model checked packed");
    return;
  }
  const BackendUnderTest& b = backend_under_test();
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(path, &model).is_ok());
  const int batch = 32, seq = 64, vocab = model->config().vocab_size;
  SessionOptions o;
  o.max_batch = batch;
  o.max_seq = seq;
  o.backend = b.backend;
  o.backend_options = b.options;
  if (runs_any_op(*model, o) && !b.table->supports_packed) return;  // refusing packed: check_fixture
  std::unique_ptr<Session> packed, padded;
  o.padding = Padding::kPacked;
  REQUIRE(Session::create(*model, o, &packed).is_ok());
  o.padding = Padding::kPadded;
  REQUIRE(Session::create(*model, o, &padded).is_ok());
  std::vector<int32_t> ids(static_cast<size_t>(batch) * seq);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(1000 + (i * 7919) % static_cast<size_t>(vocab - 1000));
  auto mask_of = [&](bool reversed) {
    std::vector<int32_t> mask(ids.size());
    for (int s = 0; s < batch; ++s) {
      const int length = 1 + ((reversed ? batch - 1 - s : s) * 13) % seq;
      for (int t = 0; t < seq; ++t) mask[static_cast<size_t>(s) * seq + t] = t < length;
    }
    return mask;
  };
  const std::vector<int32_t> forward = mask_of(false), backward = mask_of(true);
  const std::vector<int32_t>* masks[] = {&forward, &backward, &forward};
  // The weights' type (for the tolerance), from the file's own view of its first layer.
  Model::Impl impl;
  impl.file = std::make_unique<MappedFile>();
  REQUIRE(impl.file->open(path).is_ok());
  REQUIRE(detail::load_model_buffer(impl.file->data(), impl.file->size(), path, &impl).is_ok());
  const DType weights = impl.layers[0].qkv.dtype;
  for (const std::vector<int32_t>* mask : masks) {
    const Inputs in{batch, seq, ids.data(), mask->data(), nullptr};
    const Run want = run_on(*padded, in);
    REQUIRE(want.status.is_ok());
    const Run got = run_on(*packed, in);
    INFO(got.status.to_string());
    REQUIRE(got.status.is_ok());
    CHECK(got.packed);
    check_packed_equals_padded(want, got, *mask, static_cast<size_t>(model->config().hidden_size), weights, seq);
  }
}
