// End-to-end: src masks (nn.TransformerEncoder's `mask`) and sliding-window attention against
// PyTorch (tests/fixtures/torch_src_masks, manifest "src_mask_fixtures"): a torch_encoder stack
// run with a causal, a block and a per-sequence random-graph bool mask, an additive float mask
// and a per-sequence one, each with the key padding mask, and with the band mask that a window
// of 3 means. fp32 within 1e-4 x RMS on every real token, for every kernel level this CPU runs
// and 1 and 2 threads; fp16 and int8 (int8 and float attention) within the per-token cosine bars
// of test_golden_quantized.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/isa.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

struct MaskCase {
  std::string name;
  bool is_bool = false;
  SrcMaskShape shape = SrcMaskShape::kSeqSeq;
  std::vector<uint8_t> bool_mask;
  std::vector<float> float_mask;
  npy::Float32Array hidden;
};

struct MaskFixture {
  std::string dir;
  int batch = 0, seq = 0, hidden = 0, window = 0;
  npy::Int32Array ids, mask, ids_window, mask_window;
  std::vector<MaskCase> cases;
  npy::Float32Array hidden_window;
};

std::string fixtures_dir() {
  const char* env = std::getenv("ENCRT_FIXTURES_DIR");
  return env && *env ? env : ENCRT_FIXTURES_DIR;
}

MaskFixture load_mask_fixture() {
  std::ifstream in(fixtures_dir() + "/manifest.json");
  REQUIRE(in.good());
  const nlohmann::json entry = nlohmann::json::parse(in).at("src_mask_fixtures").at(0);
  MaskFixture f;
  f.dir = fixtures_dir() + "/" + entry.at("name").get<std::string>();
  f.batch = entry.at("batch").get<int>();
  f.seq = entry.at("seq").get<int>();
  f.hidden = entry.at("hidden").get<int>();
  auto path = [&](const std::string& file) { return f.dir + "/" + file; };
  REQUIRE(npy::read_int32(path("ids.npy"), &f.ids).is_ok());
  REQUIRE(npy::read_int32(path("mask.npy"), &f.mask).is_ok());
  for (const auto& c : entry.at("src_masks")) {
    MaskCase m;
    m.name = c.at("name").get<std::string>();
    m.is_bool = c.at("kind").get<std::string>() == "bool";
    m.shape = c.at("shape").get<std::string>() == "seq_seq" ? SrcMaskShape::kSeqSeq : SrcMaskShape::kBatchSeqSeq;
    const std::string file = path(c.at("src_mask").get<std::string>());
    if (m.is_bool) {
      npy::Int32Array a;
      REQUIRE(npy::read_int32(file, &a).is_ok());
      m.bool_mask.assign(a.data.begin(), a.data.end());
    } else {
      npy::Float32Array a;
      REQUIRE(npy::read_float32(file, &a).is_ok());
      m.float_mask = a.data;
    }
    REQUIRE(npy::read_float32(path(c.at("hidden").get<std::string>()), &m.hidden).is_ok());
    f.cases.push_back(std::move(m));
  }
  const auto& w = entry.at("window");
  f.window = w.at("attention_window").get<int>();
  REQUIRE(npy::read_int32(path(w.at("ids").get<std::string>()), &f.ids_window).is_ok());
  REQUIRE(npy::read_int32(path(w.at("mask").get<std::string>()), &f.mask_window).is_ok());
  REQUIRE(npy::read_float32(path(w.at("hidden").get<std::string>()), &f.hidden_window).is_ok());
  REQUIRE(f.cases.size() == 5);
  return f;
}

std::string convert(const MaskFixture& f, converter::WeightType type, int window, bool int8_attention = true) {
  converter::ConvertOptions opt;
  opt.source_dir = f.dir;
  opt.weight_type = type;
  opt.attention_window = window;
  opt.int8_attention = int8_attention;
  opt.output_path = test::tmp_path(std::string("torch_src_masks.") + converter::weight_type_name(type) +
                                   (int8_attention ? "" : ".float_attention") + ".w" + std::to_string(window) + ".encrt");
  const Status s = converter::convert(opt);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return opt.output_path;
}

Inputs inputs_of(const MaskFixture& f, const MaskCase* c) {
  Inputs in;
  in.batch = f.batch;
  in.seq = f.seq;
  in.input_ids = c ? f.ids.data.data() : f.ids_window.data.data();
  in.attention_mask = c ? f.mask.data.data() : f.mask_window.data.data();
  if (c) {
    in.src_mask_bool = c->is_bool ? c->bool_mask.data() : nullptr;
    in.src_mask_float = c->is_bool ? nullptr : c->float_mask.data();
    in.src_mask_shape = c->shape;
  }
  return in;
}

// Over the real tokens (mask 1) of [batch, seq, hidden] arrays: max |a - b| and the RMS of b,
// or (cosines) each token's cosine.
struct Compare {
  double max_err = 0.0, rms = 0.0, min_cos = 1.0, mean_cos = 0.0;
};
Compare compare(const float* got, const npy::Float32Array& want, const int32_t* mask, const MaskFixture& f) {
  Compare c;
  double sq = 0.0;
  int tokens = 0;
  for (int t = 0; t < f.batch * f.seq; ++t) {
    if (mask[t] == 0) continue;
    const size_t off = static_cast<size_t>(t) * f.hidden;
    for (int d = 0; d < f.hidden; ++d) {
      c.max_err = std::max(c.max_err, static_cast<double>(std::fabs(got[off + d] - want.data[off + d])));
      sq += static_cast<double>(want.data[off + d]) * want.data[off + d];
    }
    const double cos = test::cosine(got + off, want.data.data() + off, f.hidden);
    c.min_cos = std::min(c.min_cos, cos);
    c.mean_cos += cos;
    ++tokens;
  }
  c.rms = std::sqrt(sq / (static_cast<double>(tokens) * f.hidden));
  c.mean_cos /= tokens;
  return c;
}

std::unique_ptr<Session> session_for(const Model& model, const MaskFixture& f, const std::string& isa, int threads,
                                     bool src_mask) {
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.threads = threads;
  opt.backend_options["isa"] = isa;
  opt.src_mask = src_mask;
  std::unique_ptr<Session> session;
  const Status s = Session::create(model, opt, &session);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return session;
}

std::vector<std::string> levels_to_test() {
  std::vector<std::string> levels;
  for (const kernels::IsaLevel& l : kernels::kIsaLevels)
    if (kernels::isa_supported(l.features)) levels.push_back(l.name);
  return levels;
}

}  // namespace

TEST_CASE("fp32 with src masks and a sliding window matches PyTorch", "[golden][src_mask]") {
  const MaskFixture f = load_mask_fixture();
  std::unique_ptr<Model> model, windowed;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32, 0), &model).is_ok());
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32, f.window), &windowed).is_ok());
  REQUIRE(windowed->config().attention_window == f.window);
  for (const std::string& isa : levels_to_test())
    for (int threads : {1, 2}) {
      auto session = session_for(*model, f, isa, threads, true);
      for (const MaskCase& c : f.cases) {
        INFO("isa " << isa << ", threads " << threads << ", mask " << c.name);
        const Status s = session->run(inputs_of(f, &c));
        INFO(s.to_string());
        REQUIRE(s.is_ok());
        const Compare r = compare(session->last_hidden_state(), c.hidden, f.mask.data.data(), f);
        INFO("max abs error " << r.max_err << ", rms " << r.rms);
        CHECK(r.max_err <= 1e-4 * r.rms);
      }
      auto w = session_for(*windowed, f, isa, threads, false);
      INFO("isa " << isa << ", threads " << threads << ", window " << f.window);
      REQUIRE(w->run(inputs_of(f, nullptr)).is_ok());
      const Compare r = compare(w->last_hidden_state(), f.hidden_window, f.mask_window.data.data(), f);
      INFO("max abs error " << r.max_err << ", rms " << r.rms);
      CHECK(r.max_err <= 1e-4 * r.rms);
    }
}

TEST_CASE("a window model also takes a src mask: the band and the mask both apply", "[golden][src_mask]") {
  // The windowed model with the causal mask equals the full model with the causal mask and the
  // band combined into one bool mask, bit for bit (the same kernels, the same masked pairs).
  const MaskFixture f = load_mask_fixture();
  std::unique_ptr<Model> model, windowed;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32, 0), &model).is_ok());
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32, f.window), &windowed).is_ok());
  const MaskCase& causal = f.cases[0];
  REQUIRE(causal.name == "causal");
  MaskCase combined = causal;
  for (int i = 0; i < f.seq; ++i)
    for (int j = 0; j < f.seq; ++j)
      if (std::abs(i - j) > f.window) combined.bool_mask[static_cast<size_t>(i) * f.seq + j] = 1;
  for (const std::string& isa : {std::string("scalar"), std::string(kernels::best_isa_level().name)}) {
    auto a = session_for(*windowed, f, isa, 1, true);
    auto b = session_for(*model, f, isa, 1, true);
    REQUIRE(a->run(inputs_of(f, &causal)).is_ok());
    REQUIRE(b->run(inputs_of(f, &combined)).is_ok());
    const size_t n = static_cast<size_t>(f.batch) * f.seq * f.hidden;
    INFO("isa " << isa);
    CHECK(std::equal(a->last_hidden_state(), a->last_hidden_state() + n, b->last_hidden_state()));
  }
}

TEST_CASE("bool and additive forms of one mask give the same bits", "[golden][src_mask]") {
  // A bool mask and the additive mask with 0 where it allows and -inf where it blocks mean the
  // same pairs and the same scores: identical outputs on every level.
  const MaskFixture f = load_mask_fixture();
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32, 0), &model).is_ok());
  for (const MaskCase& c : f.cases) {
    if (!c.is_bool) continue;
    MaskCase additive = c;
    additive.is_bool = false;
    for (uint8_t v : c.bool_mask) additive.float_mask.push_back(v ? -INFINITY : 0.0f);
    for (const std::string& isa : levels_to_test()) {
      auto session = session_for(*model, f, isa, 2, true);
      REQUIRE(session->run(inputs_of(f, &c)).is_ok());
      const size_t n = static_cast<size_t>(f.batch) * f.seq * f.hidden;
      const std::vector<float> from_bool(session->last_hidden_state(), session->last_hidden_state() + n);
      REQUIRE(session->run(inputs_of(f, &additive)).is_ok());
      INFO("mask " << c.name << ", isa " << isa);
      CHECK(std::equal(from_bool.begin(), from_bool.end(), session->last_hidden_state()));
    }
  }
}

TEST_CASE("fp16 and int8 with src masks and a window keep the per-token cosine bars", "[golden][src_mask][int8][fp16]") {
  const MaskFixture f = load_mask_fixture();
  struct Variant {
    converter::WeightType type;
    bool int8_attention;
    double min_bar, mean_bar;
  };
  const Variant variants[] = {{converter::WeightType::kF16, true, 0.999, 0.999},
                              {converter::WeightType::kI8, true, 0.98, 0.99},
                              {converter::WeightType::kI8, false, 0.98, 0.99}};
  for (const Variant& v : variants) {
    std::unique_ptr<Model> model, windowed;
    REQUIRE(Model::load(convert(f, v.type, 0, v.int8_attention), &model).is_ok());
    REQUIRE(Model::load(convert(f, v.type, f.window, v.int8_attention), &windowed).is_ok());
    for (const std::string& isa : {std::string("scalar"), std::string(kernels::best_isa_level().name)}) {
      auto session = session_for(*model, f, isa, 1, true);
      for (const MaskCase& c : f.cases) {
        REQUIRE(session->run(inputs_of(f, &c)).is_ok());
        const Compare r = compare(session->last_hidden_state(), c.hidden, f.mask.data.data(), f);
        INFO(converter::weight_type_name(v.type) << (v.int8_attention ? "" : " float attention") << " on " << isa
                                                 << ", mask " << c.name << ": token cosine mean " << r.mean_cos
                                                 << ", min " << r.min_cos);
        CHECK(r.min_cos >= v.min_bar);
        CHECK(r.mean_cos >= v.mean_bar);
      }
      auto w = session_for(*windowed, f, isa, 1, false);
      REQUIRE(w->run(inputs_of(f, nullptr)).is_ok());
      const Compare r = compare(w->last_hidden_state(), f.hidden_window, f.mask_window.data.data(), f);
      INFO(converter::weight_type_name(v.type) << " on " << isa << ", window: token cosine mean " << r.mean_cos
                                               << ", min " << r.min_cos);
      CHECK(r.min_cos >= v.min_bar);
      CHECK(r.mean_cos >= v.mean_bar);
    }
  }
}
