// The seam itself, through the mock device backend (these cases run in the suite's mock_device
// entry only): placement with fallback and copies, what a session reports of its backends, a
// device failure in run() coming back as a Status, the registry's checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend_under_test.h"
#include "backend/mock_device_backend.h"
#include "backend/registry.h"
#include "model/dequantized_linears.h"
#include "session/session_impl.h"
#include "support/fixtures.h"

namespace {

using namespace encrt;

bool mock_entry() {
  if (conformance::backend_under_test().backend == "mock_device") return true;
  SUCCEED("seam cases run in the mock_device entry of the suite");
  return false;
}

std::unique_ptr<Model> fixture_model(const test::Fixture& f, const std::string& pooling = "") {
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kF32, pooling), &model).is_ok());
  return model;
}

}  // namespace

TEST_CASE("seam: ops the device lacks fall back to the CPU, with copies both ways", "[conformance][seam]") {
  if (!mock_entry()) return;
  const test::Fixture f = test::load_fixture("bert_plain");
  auto model = fixture_model(f, "pooler");
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.backend = "mock_device";
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  int on_mock = 0, on_cpu = 0, copies_in = 0, copies_out = 0;
  for (const OpPlacement& p : session->placement()) {
    if (p.kind == "copy") {
      CHECK(p.backend == "mock_device");
      (p.label.find("to_memory0") != std::string::npos ? copies_out : copies_in)++;
    } else if (p.kind == "linear" || p.kind == "layer_norm" || p.kind == "tanh") {
      CHECK(p.backend == "mock_device");
      ++on_mock;
    } else {
      CHECK(p.backend == "cpu");  // embed, attention, pooling
      ++on_cpu;
    }
  }
  CHECK(on_mock > 0);
  CHECK(on_cpu > 0);
  CHECK(copies_in > 0);
  CHECK(copies_out > 0);
  bool mock_seen = false;
  for (const BackendUsage& u : session->backends()) {
    if (u.name != "mock_device") continue;
    mock_seen = true;
    CHECK(u.memory == "mock_device");
    CHECK(u.arena > 0);
    CHECK(u.arena % 256 == 0);
    CHECK(u.weights_in_place > 0);
  }
  CHECK(mock_seen);
  for (const PlannedBuffer& b : session->planned_buffers())
    if (b.memory == "mock_device") CHECK(b.offset % 256 == 0);
  // The pooler's linear and tanh ran on the device: the pooled output lives there (no host
  // pointer), the hidden state was copied back for the pooling's first step on the CPU.
  Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), f.token_types.data.data()};
  REQUIRE(session->run(in).is_ok());
  OutputInfo info;
  REQUIRE(session->output("hidden", &info).is_ok());
  CHECK(info.device == "host");
  REQUIRE(session->output("pooled", &info).is_ok());
  CHECK(info.device == "mock_device");
  CHECK(session->pooled() == nullptr);
  std::vector<float> pooled(info.bytes / sizeof(float));
  REQUIRE(session->copy_output("pooled", pooled.data(), info.bytes).is_ok());
  double err = 0;
  for (size_t i = 0; i < pooled.size(); ++i) err = std::max(err, static_cast<double>(std::fabs(pooled[i] - f.pooler.data[i])));
  CHECK(err <= 1e-4);
}

TEST_CASE("seam: a device failure in run() is a Status, and the session stays usable", "[conformance][seam]") {
  if (!mock_entry()) return;
  const test::Fixture f = test::load_fixture("torch_post_relu");
  auto model = fixture_model(f);
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.backend = "mock_device";
  opt.backend_options["fail_run_after"] = "2";  // of its 3 segments in this model
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr};
  const Status s = session->run(in);
  CHECK(s.code() == StatusCode::kInternal);
  CHECK(s.message().find("simulated device failure") != std::string::npos);
  OutputInfo info;
  CHECK(session->output("hidden", &info).code() == StatusCode::kInvalidArgument);  // no output of a failed run
  CHECK(session->run(in).code() == StatusCode::kInternal);
  opt.backend_options["fail_run_after"] = "soon";
  CHECK(Session::create(*model, opt, &session).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("seam: the registry refuses incomplete tables and names taken", "[conformance][seam]") {
  if (!mock_entry()) return;
  backend::BackendInterface incomplete = conformance::kMockDeviceBackend;
  incomplete.name = "incomplete";
  incomplete.copy_to_host = nullptr;  // device memory needs its copies
  CHECK(backend::register_backend(&incomplete).code() == StatusCode::kInvalidArgument);
  CHECK(backend::register_backend(&conformance::kMockDeviceBackend).code() == StatusCode::kInvalidArgument);
  backend::BackendInterface cpu_named = conformance::kMockDeviceBackend;
  cpu_named.name = "cpu";
  CHECK(backend::register_backend(&cpu_named).code() == StatusCode::kInvalidArgument);
  CHECK(backend::register_backend(nullptr).code() == StatusCode::kInvalidArgument);
}

// A backend without supports_packed: auto runs padded, packed is refused at Session::create with
// the backend and op named (session_builder.cpp's plan_packing).
TEST_CASE("seam: a backend that does not run packed makes auto pad and packed refuse", "[conformance][seam][packed]") {
  if (!mock_entry()) return;
  static backend::BackendInterface unpacked = [] {
    backend::BackendInterface t = conformance::kMockDeviceBackend;
    t.name = "mock_unpacked";
    t.supports_packed = nullptr;
    t.expand_packed = nullptr;
    return t;
  }();
  static const Status registered = backend::register_backend(&unpacked);
  REQUIRE(registered.is_ok());
  const test::Fixture f = test::load_fixture("bert_plain");
  auto model = fixture_model(f);
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.backend = "mock_unpacked";
  std::unique_ptr<Session> session;
  opt.padding = Padding::kPacked;
  const Status s = Session::create(*model, opt, &session);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("backend 'mock_unpacked' does not run op"));
  opt.padding = Padding::kAuto;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  const Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), f.token_types.data.data()};
  REQUIRE(session->run(in).is_ok());
  CHECK_FALSE(session->last_run_packed());
}

// A device backend that packs and keeps the hidden state in its memory (pooling=on: nothing on the
// CPU reads it) expands it there (expand_packed, once per packed run), so that the output's device
// address holds [batch, seq] rows as a padded run's: the same real rows bit for bit, zeros at
// padding, including after a replay with another layout; sentence-level outputs alike.
TEST_CASE("seam: packed runs expand token-level outputs in device memory", "[conformance][seam][packed]") {
  if (!mock_entry()) return;
  for (const char* pooling : {"", "pooler"}) {
    INFO("pooling '" << pooling << "'");
    const test::Fixture f = test::load_fixture("bert_plain");
    auto model = fixture_model(f, pooling);
    SessionOptions opt;
    opt.max_batch = f.batch;
    opt.max_seq = f.seq;
    opt.backend = "mock_device";
    opt.backend_options["pooling"] = "on";
    std::unique_ptr<Session> packed, padded;
    opt.padding = Padding::kPacked;
    REQUIRE(Session::create(*model, opt, &packed).is_ok());
    opt.padding = Padding::kPadded;
    REQUIRE(Session::create(*model, opt, &padded).is_ok());
    // The fixture's mask (right padding), then one with holes in every sequence but a real first
    // token (first-token pooling packs only then): another layout of the same shape.
    std::vector<int32_t> holes(f.mask.data.size());
    for (size_t i = 0; i < holes.size(); ++i) holes[i] = i % static_cast<size_t>(f.seq) == 0 || i % 3 != 1;
    const std::vector<int32_t>* masks[] = {&f.mask.data, &holes, &f.mask.data};
    for (const std::vector<int32_t>* mask : masks) {
      const Inputs in{f.batch, f.seq, f.ids.data.data(), mask->data(), f.token_types.data.data()};
      const int expansions = conformance::mock_device_counters().expansions;
      REQUIRE(padded->run(in).is_ok());
      CHECK(conformance::mock_device_counters().expansions == expansions);
      REQUIRE(packed->run(in).is_ok());
      CHECK(packed->last_run_packed());
      CHECK(conformance::mock_device_counters().expansions == expansions + 1);
      for (const char* name : {"hidden", "pooled"}) {
        INFO("output " << name);
        OutputInfo a, b;
        REQUIRE(packed->output(name, &a).is_ok());
        REQUIRE(padded->output(name, &b).is_ok());
        CHECK(a.device == "mock_device");
        REQUIRE(a.bytes == b.bytes);
        std::vector<float> got(a.bytes / sizeof(float)), want(got.size());
        REQUIRE(packed->copy_output(name, got.data(), a.bytes).is_ok());
        REQUIRE(padded->copy_output(name, want.data(), b.bytes).is_ok());
        if (std::string(name) == "hidden") {
          const size_t H = static_cast<size_t>(f.hidden);
          for (size_t t = 0; t < mask->size(); ++t) {
            if ((*mask)[t]) continue;
            for (size_t i = 0; i < H; ++i) REQUIRE(got[t * H + i] == 0.0f);
            std::fill(want.begin() + static_cast<std::ptrdiff_t>(t * H), want.begin() + static_cast<std::ptrdiff_t>((t + 1) * H), 0.0f);
          }
        }
        if (mask != &holes) {
          CHECK(std::memcmp(got.data(), want.data(), a.bytes) == 0);
        } else {
          // Packed, the keys of a sequence with holes move to other SIMD lanes: the NEON fp32
          // attention's 4-lane softmax sum rounds differently (a few ulps; the x86 kernels give the
          // same bits), so those runs are held to 1e-5 x the RMS as test_packed.cpp holds them.
          double sum2 = 0, worst = 0;
          for (size_t i = 0; i < want.size(); ++i) {
            sum2 += static_cast<double>(want[i]) * want[i];
            worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
          }
          const double rms = want.empty() ? 0.0 : std::sqrt(sum2 / static_cast<double>(want.size()));
          INFO("mask with holes: max |packed - padded| " << worst << ", RMS " << rms);
          CHECK(worst <= 1e-5 * rms);
        }
      }
    }
  }
}

// dequantizes_int8_linears: a session of an int8 model asks each backend; one yes builds the graph
// from the fp16 views (model/dequantized_linears.h). Their panels are made for the ops of every
// backend that reads them, and not for those of a device backend that asked (it dequantizes from
// the int8 linear on its device): the mock device reads host panels, so the mock that "asks" here
// is only planned (build_session without prepare), never run.
TEST_CASE("seam: int8 linears as fp16: panels for the backends that read them", "[conformance][seam][int8_linears]") {
  if (!mock_entry()) return;
  static backend::BackendInterface asking = [] {
    backend::BackendInterface t = conformance::kMockDeviceBackend;
    t.name = "mock_asking_for_fp16_linears";
    t.dequantizes_int8_linears = [](const void*, backend::Shape) { return true; };
    return t;
  }();
  static const Status registered = backend::register_backend(&asking);
  REQUIRE(registered.is_ok());
  const test::Fixture f = test::load_fixture("torch_post_gelu_3layer");
  const std::string path = test::convert_fixture(f, converter::WeightType::kI8);
  auto load_impl = [&] {  // a model of its own each time: its views start without panels
    auto impl = std::make_unique<Model::Impl>();
    impl->file = std::make_unique<MappedFile>();
    REQUIRE(impl->file->open(path).is_ok());
    REQUIRE(detail::load_model_buffer(impl->file->data(), impl->file->size(), path, impl.get()).is_ok());
    return impl;
  };
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  struct Case {
    std::string backend, cpu_option;
    bool dequantized, panels;
  };
  for (const Case& c : {Case{"mock_device", "", false, false}, Case{"mock_device", "f16", true, true},
                        Case{"mock_asking_for_fp16_linears", "", true, false}}) {
    INFO(c.backend << (c.cpu_option.empty() ? "" : ", cpu int8_linears=" + c.cpu_option));
    const auto impl = load_impl();
    opt.backend = c.backend;
    opt.backend_options.clear();
    if (!c.cpu_option.empty()) opt.backend_options["int8_linears"] = c.cpu_option;
    detail::SessionImpl s;
    REQUIRE(detail::build_session(*impl, opt, false, &s).is_ok());
    CHECK(s.dequantized_int8 == c.dequantized);
    int linears = 0, with_panels = 0;
    for (size_t i = 0; i < s.graph.ops.size(); ++i) {
      const plan::Op& op = s.graph.ops[i];
      if (op.kind != plan::OpKind::kLinear) continue;
      const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
      CHECK((w.dequantized_from != nullptr) == c.dequantized);
      ++linears;
      with_panels += w.dequantized_from && w.packed ? 1 : 0;
    }
    REQUIRE(linears > 0);
    CHECK(with_panels == (c.panels ? linears : 0));
    if (c.dequantized) CHECK((impl->dequantized_linears().bytes() > 0) == c.panels);
  }
}
