// Packed batches (SessionOptions::padding): a packed run computes only the real tokens, yet its
// real-token outputs equal the padded run's bit for bit on the CPU backend (every GEMM, LayerNorm,
// quantize and attention kernel treats rows independently and a sequence's keys in the same
// order; a mask with holes: see check_equal), on every fixture, fp32 / fp16 / int8, every kernel
// level this CPU runs, 1 and 2 threads;
// token-level outputs have zeros at padding positions; what cannot be packed falls back (auto) or
// is a clear error (packed).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "encrt/encrt.h"
#include "kernels/isa.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

std::vector<std::string> levels_to_test() {
  std::vector<std::string> levels;
  for (const kernels::IsaLevel& l : kernels::kIsaLevels)
    if (kernels::isa_supported(l.features)) levels.push_back(l.name);
  return levels;
}

// A batch of one run: [batch, seq] ids, mask and token types.
struct Batch {
  int batch = 0, seq = 0;
  std::vector<int32_t> ids, mask, types;
  bool has_types = false;
  Inputs inputs() const {
    return Inputs{batch, seq, ids.data(), mask.data(), has_types ? types.data() : nullptr};
  }
  bool real(int row) const { return mask[static_cast<size_t>(row)] != 0; }
};

// The fixture's own batch, and a harder one over its ids: sequence lengths seq, 1, 0 (a sequence
// with no real token; 2 for a model that pools the first token, which needs a real one to pack),
// seq / 2, and one whose mask has holes (not right padding).
std::vector<Batch> batches_of(const test::Fixture& f, bool first_token_pooling = false) {
  Batch own;
  own.batch = f.batch;
  own.seq = f.seq;
  own.ids = f.ids.data;
  own.mask = f.mask.data;
  own.has_types = f.has_token_types;
  if (f.has_token_types) own.types = f.token_types.data;

  Batch mixed;
  mixed.batch = 5;
  mixed.seq = f.seq;
  mixed.has_types = f.has_token_types;
  const size_t S = static_cast<size_t>(f.seq);
  for (int b = 0; b < mixed.batch; ++b)
    for (size_t t = 0; t < S; ++t) {
      const size_t from = (static_cast<size_t>(b) % static_cast<size_t>(f.batch)) * S + t;
      mixed.ids.push_back(f.ids.data[from]);
      mixed.types.push_back(f.has_token_types ? f.token_types.data[from] : 0);
      int32_t m = 1;
      if (b == 1) m = t < 1;
      if (b == 2) m = first_token_pooling && t < 2;
      if (b == 3) m = t < S / 2;
      if (b == 4) m = t == 0 || t % 3 != 1;  // holes: keys 1, 4, 7, ... are padding
      mixed.mask.push_back(m);
    }
  return {own, mixed};
}

struct Result {
  Status status;
  bool packed = false;
  std::map<std::string, std::vector<unsigned char>> outputs;  // every output's bytes
  std::map<std::string, size_t> row_bytes;                    // of token-level outputs ([batch, seq, ...])
};

Result run(const Model& model, SessionOptions opt, Padding padding, const Batch& batch) {
  Result r;
  opt.padding = padding;
  std::unique_ptr<Session> session;
  r.status = Session::create(model, opt, &session);
  if (!r.status) return r;
  r.status = session->run(batch.inputs());
  if (!r.status) return r;
  r.packed = session->last_run_packed();
  for (const std::string& name : session->output_names()) {
    OutputInfo info;
    REQUIRE(session->output(name, &info).is_ok());
    std::vector<unsigned char>& bytes = r.outputs[name];
    bytes.resize(info.bytes);
    REQUIRE(session->copy_output(name, bytes.data(), bytes.size()).is_ok());
    if (info.shape.size() >= 2 && info.shape[0] == batch.batch && info.shape[1] == batch.seq)
      r.row_bytes[name] = info.bytes / (static_cast<size_t>(batch.batch) * batch.seq);
  }
  return r;
}

// Packed equals padded on every real token of the token-level outputs and on every sequence of the
// sentence-level ones, bit for bit; the packed run's padding positions are zero bytes. A sequence
// whose mask has holes (not right padding) shifts its keys to other SIMD lanes when packed: the
// NEON fp32 attention's 4-lane softmax sum then rounds differently (measured: a few ulps), so its
// float rows are held to 1e-5 x the output's RMS instead (the x86 kernels give the same bits).
void check_equal(const Result& packed, const Result& padded, const Batch& batch) {
  INFO("packed: " << packed.status.to_string() << "; padded: " << padded.status.to_string());
  REQUIRE(packed.status.is_ok());
  REQUIRE(padded.status.is_ok());
  CHECK(packed.packed);
  CHECK_FALSE(padded.packed);
  REQUIRE(packed.outputs.size() == padded.outputs.size());
  std::vector<bool> right_padded(static_cast<size_t>(batch.batch), true);
  for (int b = 0; b < batch.batch; ++b)
    for (int t = 1; t < batch.seq; ++t)
      if (batch.real(b * batch.seq + t) && !batch.real(b * batch.seq + t - 1)) right_padded[static_cast<size_t>(b)] = false;
  for (const auto& [name, bytes] : padded.outputs) {
    INFO("output " << name);
    const std::vector<unsigned char>& got = packed.outputs.at(name);
    REQUIRE(got.size() == bytes.size());
    const auto rb = padded.row_bytes.find(name);
    const bool tokens = rb != padded.row_bytes.end();
    const int rows = tokens ? batch.batch * batch.seq : batch.batch;
    const size_t row_bytes = bytes.size() / static_cast<size_t>(rows);
    const bool floats = name != "labels";
    // The RMS of the padded run's real rows, for the tolerance of rows of sequences with holes.
    double sum2 = 0;
    size_t n = 0;
    for (int row = 0; row < rows && floats; ++row) {
      if (tokens && !batch.real(row)) continue;
      const float* p = reinterpret_cast<const float*>(bytes.data() + static_cast<size_t>(row) * row_bytes);
      for (size_t i = 0; i < row_bytes / sizeof(float); ++i, ++n) sum2 += static_cast<double>(p[i]) * p[i];
    }
    const double rms = n ? std::sqrt(sum2 / static_cast<double>(n)) : 0.0;
    int real_differ = 0, padding_nonzero = 0;
    double holes_error = 0;
    for (int row = 0; row < rows; ++row) {
      const unsigned char* g = got.data() + static_cast<size_t>(row) * row_bytes;
      const unsigned char* p = bytes.data() + static_cast<size_t>(row) * row_bytes;
      const int b = tokens ? row / batch.seq : row;
      if (tokens && !batch.real(row)) {
        for (size_t i = 0; i < row_bytes; ++i) padding_nonzero += g[i] != 0;
      } else if (right_padded[static_cast<size_t>(b)] || !floats) {
        real_differ += std::memcmp(g, p, row_bytes) != 0;
      } else {
        const float* gf = reinterpret_cast<const float*>(g);
        const float* pf = reinterpret_cast<const float*>(p);
        for (size_t i = 0; i < row_bytes / sizeof(float); ++i)
          holes_error = std::max(holes_error, static_cast<double>(std::fabs(gf[i] - pf[i])));
      }
    }
    INFO("rows of sequences with holes: max |packed - padded| " << holes_error << ", RMS " << rms);
    CHECK(real_differ == 0);
    CHECK(padding_nonzero == 0);
    CHECK(holes_error <= 1e-5 * rms);
  }
}

std::string convert(const test::Fixture& f, converter::WeightType type, const std::string& pooling = "") {
  return test::convert_fixture(f, type, pooling, ".packed");
}

}  // namespace

TEST_CASE("packed: real-token outputs equal the padded run's bit for bit, fp32 / fp16 / int8, every level",
          "[packed]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) {
      std::unique_ptr<Model> model;
      REQUIRE(Model::load(convert(f, type), &model).is_ok());
      HeadInfo head;
      const std::string head_pooling = model->has_head() && model->head(&head).is_ok() ? head.pooling : "";
      bool first_token = false;
      for (const std::string& p : {model->config().pooling, head_pooling}) first_token |= p == "cls" || p == "pooler";
      for (const Batch& batch : batches_of(f, first_token))
        for (const std::string& isa : levels_to_test())
          for (int threads : {1, 2}) {
            INFO("fixture " << name << " " << converter::weight_type_name(type) << ", batch " << batch.batch << " x "
                            << batch.seq << ", isa " << isa << ", threads " << threads);
            SessionOptions opt;
            opt.max_batch = 5;
            opt.max_seq = f.seq;
            opt.threads = threads;
            opt.backend = "cpu";
            opt.backend_options["isa"] = isa;
            const Result padded = run(*model, opt, Padding::kPadded, batch);
            check_equal(run(*model, opt, Padding::kPacked, batch), padded, batch);
            check_equal(run(*model, opt, Padding::kAuto, batch), padded, batch);  // auto packs a batch with padding
          }
    }
  }
}

TEST_CASE("packed: every fixture still matches PyTorch in both layouts", "[packed][golden]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(convert(f, converter::WeightType::kF32), &model).is_ok());
    for (Padding padding : {Padding::kPacked, Padding::kPadded}) {
      INFO("fixture " << name << ", padding " << static_cast<int>(padding));
      SessionOptions opt;
      opt.max_batch = f.batch;
      opt.max_seq = f.seq;
      opt.padding = padding;
      auto session = test::run_fixture(*model, f, opt);
      CHECK(session->last_run_packed() == (padding == Padding::kPacked));
      const double rms = test::rms_on_real_tokens(f.hidden_state.data.data(), f, f.hidden);
      CHECK(test::max_abs_diff_on_real_tokens(session->last_hidden_state(), f.hidden_state.data.data(), f, f.hidden) <=
            1e-4 * rms);
      double pooled_err = 0;
      for (size_t i = 0; i < f.pooled.data.size(); ++i)
        pooled_err = std::max(pooled_err, static_cast<double>(std::fabs(session->pooled()[i] - f.pooled.data[i])));
      CHECK(pooled_err <= 1e-4 * rms);
    }
  }
}

TEST_CASE("packed: a length-1 sequence and one with no real token", "[packed]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32), &model).is_ok());
  const Batch mixed = batches_of(f)[1];
  SessionOptions opt;
  opt.max_batch = mixed.batch;
  opt.max_seq = mixed.seq;
  const Result packed = run(*model, opt, Padding::kPacked, mixed);
  REQUIRE(packed.status.is_ok());
  const float* pooled = reinterpret_cast<const float*>(packed.outputs.at("pooled").data());
  const float* hidden = reinterpret_cast<const float*>(packed.outputs.at("hidden").data());
  const size_t H = static_cast<size_t>(f.hidden), S = static_cast<size_t>(mixed.seq);
  // Sequence 2 has no real token: zero hidden rows and (mean pooling) a zero pooled row, as
  // sentence-transformers' mean pooling gives it; sequence 1's one token is a real row.
  for (size_t i = 0; i < S * H; ++i) REQUIRE(hidden[2 * S * H + i] == 0.0f);
  for (size_t i = 0; i < H; ++i) REQUIRE(pooled[2 * H + i] == 0.0f);
  double norm1 = 0;
  for (size_t i = 0; i < H; ++i) norm1 += std::fabs(hidden[S * H + i]);
  CHECK(norm1 > 0);
  // A batch whose every sequence has no real token: every output zero.
  Batch empty = mixed;
  std::fill(empty.mask.begin(), empty.mask.end(), 0);
  const Result none = run(*model, opt, Padding::kPacked, empty);
  REQUIRE(none.status.is_ok());
  CHECK(none.packed);
  for (const auto& [name, bytes] : none.outputs)
    for (unsigned char c : bytes) REQUIRE(c == 0);
  check_equal(none, run(*model, opt, Padding::kPadded, empty), empty);
}

TEST_CASE("packed: auto runs a batch without padding padded; packed packs it all the same", "[packed]") {
  const test::Fixture f = test::load_fixture("torch_post_relu");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32), &model).is_ok());
  Batch full = batches_of(f)[0];
  std::fill(full.mask.begin(), full.mask.end(), 1);
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  const Result autod = run(*model, opt, Padding::kAuto, full);
  const Result packed = run(*model, opt, Padding::kPacked, full);
  REQUIRE(autod.status.is_ok());
  REQUIRE(packed.status.is_ok());
  CHECK_FALSE(autod.packed);
  CHECK(packed.packed);
  for (const auto& [name, bytes] : autod.outputs) CHECK(bytes == packed.outputs.at(name));
  // No mask at all: every token real, the same.
  std::unique_ptr<Session> session;
  opt.padding = Padding::kPacked;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  REQUIRE(session->run(Inputs{full.batch, full.seq, full.ids.data(), nullptr, nullptr}).is_ok());
  CHECK(std::memcmp(session->pooled(), autod.outputs.at("pooled").data(), autod.outputs.at("pooled").size()) == 0);
}

TEST_CASE("packed: task heads (sequence and token classifiers), fp32 and int8", "[packed][heads]") {
  const std::string dir = std::string(ENCRT_FIXTURES_DIR) + "/heads";
  std::ifstream in(dir + "/manifest.json");
  REQUIRE(in.good());
  const nlohmann::json manifest = nlohmann::json::parse(in);
  for (const auto& e : manifest.at("fixtures")) {
    const std::string name = e.at("name").get<std::string>();
    Batch batch;
    batch.batch = e.at("batch").get<int>();
    batch.seq = e.at("seq").get<int>();
    batch.has_types = e.at("has_token_types").get<bool>();
    npy::Int32Array ids, mask, types;
    REQUIRE(npy::read_int32(dir + "/" + name + "/ids.npy", &ids).is_ok());
    REQUIRE(npy::read_int32(dir + "/" + name + "/mask.npy", &mask).is_ok());
    if (batch.has_types) REQUIRE(npy::read_int32(dir + "/" + name + "/token_type_ids.npy", &types).is_ok());
    batch.ids = ids.data;
    batch.mask = mask.data;
    batch.types = types.data;
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kI8}) {
      converter::ConvertOptions c;
      c.source_dir = dir + "/" + name;
      c.weight_type = type;
      c.output_path = test::tmp_path("packed_head_" + name + "." + converter::weight_type_name(type) + ".encrt");
      c.calibration_threads = 1;
      REQUIRE(converter::convert(c).is_ok());
      std::unique_ptr<Model> model;
      REQUIRE(Model::load(c.output_path, &model).is_ok());
      for (const std::string& isa : {std::string("scalar"), std::string(kernels::best_isa_level().name)}) {
        INFO("head fixture " << name << " " << converter::weight_type_name(type) << " on " << isa);
        SessionOptions opt;
        opt.max_batch = batch.batch;
        opt.max_seq = batch.seq;
        opt.backend_options["isa"] = isa;
        check_equal(run(*model, opt, Padding::kPacked, batch), run(*model, opt, Padding::kPadded, batch), batch);
      }
    }
  }
}

TEST_CASE("packed: first-token pooling of a sequence that starts with padding runs padded, or is an error",
          "[packed][bad_input]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  for (const std::string pooling : {"cls", "pooler"}) {
    INFO("pooling " << pooling);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(convert(f, converter::WeightType::kF32, pooling), &model).is_ok());
    Batch left = batches_of(f)[0];
    // Sequence 1 left-padded: its real tokens moved to the end.
    const size_t S = static_cast<size_t>(left.seq);
    for (size_t t = 0; t < S; ++t) left.mask[S + t] = t >= S - 3;
    SessionOptions opt;
    opt.max_batch = left.batch;
    opt.max_seq = left.seq;
    const Result autod = run(*model, opt, Padding::kAuto, left);
    const Result padded = run(*model, opt, Padding::kPadded, left);
    REQUIRE(autod.status.is_ok());
    CHECK_FALSE(autod.packed);
    for (const auto& [name, bytes] : padded.outputs) CHECK(bytes == autod.outputs.at(name));
    const Result packed = run(*model, opt, Padding::kPacked, left);
    CHECK(packed.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(packed.status.message(), Catch::Contains("sequence 1 starts with padding"));
    // Right padding packs, and equals the padded run.
    const Batch right = batches_of(f)[0];
    check_equal(run(*model, opt, Padding::kPacked, right), run(*model, opt, Padding::kPadded, right), right);
  }
}

TEST_CASE("packed: src masks, attention probabilities, windows and other backends fall back or refuse",
          "[packed][bad_input]") {
  const test::Fixture f = test::load_fixture("torch_pre_gelu_final_norm");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32), &model).is_ok());
  const Batch batch = batches_of(f)[0];
  SessionOptions opt;
  opt.max_batch = batch.batch;
  opt.max_seq = batch.seq;

  // A src mask: per run.
  opt.src_mask = true;
  const size_t S = static_cast<size_t>(batch.seq);
  std::vector<uint8_t> causal(S * S);
  for (size_t i = 0; i < S; ++i)
    for (size_t j = 0; j < S; ++j) causal[i * S + j] = j > i;
  for (Padding padding : {Padding::kAuto, Padding::kPacked}) {
    opt.padding = padding;
    std::unique_ptr<Session> session;
    REQUIRE(Session::create(*model, opt, &session).is_ok());
    Inputs in = batch.inputs();
    REQUIRE(session->run(in).is_ok());  // without the src mask: packed
    CHECK(session->last_run_packed());
    in.src_mask_bool = causal.data();
    const Status s = session->run(in);
    if (padding == Padding::kAuto) {
      REQUIRE(s.is_ok());
      CHECK_FALSE(session->last_run_packed());
    } else {
      CHECK(s.code() == StatusCode::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains("src mask"));
      CHECK_FALSE(session->last_run_packed());
    }
  }
  opt.src_mask = false;

  // The attention probabilities: per session.
  opt.attention_layer = 1;
  opt.padding = Padding::kPacked;
  std::unique_ptr<Session> session;
  Status s = Session::create(*model, opt, &session);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("attention probabilities"));
  opt.padding = Padding::kAuto;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  REQUIRE(session->run(batch.inputs()).is_ok());
  CHECK_FALSE(session->last_run_packed());
  opt.attention_layer = -1;

  // An attention window.
  converter::ConvertOptions c;
  c.source_dir = f.dir;
  c.weight_type = converter::WeightType::kF32;
  c.attention_window = 2;
  c.output_path = test::tmp_path("packed_window.encrt");
  REQUIRE(converter::convert(c).is_ok());
  std::unique_ptr<Model> windowed;
  REQUIRE(Model::load(c.output_path, &windowed).is_ok());
  opt.padding = Padding::kPacked;
  s = Session::create(*windowed, opt, &session);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK_THAT(s.message(), Catch::Contains("attention window"));
  opt.padding = Padding::kAuto;
  REQUIRE(Session::create(*windowed, opt, &session).is_ok());
  REQUIRE(session->run(batch.inputs()).is_ok());
  CHECK_FALSE(session->last_run_packed());

  // xnnpack (when built) runs its linear layers packed too, and equals its padded run.
  for (const BackendStatus& b : available_backends()) {
    if (!b.available || b.name != "xnnpack") continue;
    opt.backend = b.name;
    check_equal(run(*model, opt, Padding::kPacked, batch), run(*model, opt, Padding::kPadded, batch), batch);
    opt.backend = "auto";
  }

  // An unknown value.
  opt.padding = static_cast<Padding>(7);
  s = Session::create(*model, opt, &session);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("padding 7"));
}

TEST_CASE("packed: an observed run in auto is padded (observers see batch x seq rows); packed reports real rows",
          "[packed]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(convert(f, converter::WeightType::kF32), &model).is_ok());
  const Batch batch = batches_of(f)[0];
  int real = 0;
  for (int32_t m : batch.mask) real += m;
  for (Padding padding : {Padding::kAuto, Padding::kPacked}) {
    SessionOptions opt;
    opt.max_batch = batch.batch;
    opt.max_seq = batch.seq;
    opt.padding = padding;
    std::unique_ptr<Session> session;
    REQUIRE(Session::create(*model, opt, &session).is_ok());
    int token_rows = -1;
    auto observer = [&](const OpOutput& op) {
      if (op.kind == std::string("layer_norm")) token_rows = op.rows;
    };
    REQUIRE(session->run(batch.inputs(), observer).is_ok());
    CHECK(token_rows == (padding == Padding::kAuto ? batch.batch * batch.seq : real));
    CHECK(session->last_run_packed() == (padding == Padding::kPacked));
  }
}

TEST_CASE("packed: the C API's padding option", "[packed][c-api]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  const std::string path = convert(f, converter::WeightType::kI8);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  std::vector<std::vector<float>> pooled;
  std::vector<std::vector<float>> hidden;
  for (int padding : {ENCRT_PADDING_PACKED, ENCRT_PADDING_PADDED, ENCRT_PADDING_AUTO}) {
    encrt_session_options opt;
    encrt_session_options_init(&opt);
    CHECK(opt.padding == ENCRT_PADDING_AUTO);
    opt.max_batch = f.batch;
    opt.max_seq = f.seq;
    opt.padding = padding;
    encrt_session* session = nullptr;
    REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);
    REQUIRE(encrt_session_run(session, f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr) == ENCRT_OK);
    pooled.emplace_back(static_cast<size_t>(f.batch) * f.hidden);
    hidden.emplace_back(static_cast<size_t>(f.batch) * f.seq * f.hidden);
    REQUIRE(encrt_session_copy_output(session, "pooled", pooled.back().data(), pooled.back().size() * sizeof(float)) == ENCRT_OK);
    REQUIRE(encrt_session_copy_output(session, "hidden", hidden.back().data(), hidden.back().size() * sizeof(float)) == ENCRT_OK);
    encrt_session_free(session);
  }
  CHECK(pooled[0] == pooled[1]);
  CHECK(pooled[2] == pooled[1]);
  for (size_t t = 0; t < f.mask.data.size(); ++t)
    for (int i = 0; i < f.hidden; ++i) {
      const size_t k = t * static_cast<size_t>(f.hidden) + static_cast<size_t>(i);
      if (f.mask.data[t]) REQUIRE(hidden[0][k] == hidden[1][k]);
      else REQUIRE(hidden[0][k] == 0.0f);
    }

  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  encrt_session* session = nullptr;
  opt.padding = 3;
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  CHECK_THAT(encrt_last_error(), Catch::Contains("padding 3"));
  CHECK(session == nullptr);
  // A caller built before the field existed: struct_size ends before it, padding stays auto.
  opt.padding = 3;
  opt.struct_size = offsetof(encrt_session_options, padding);
  REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);
  encrt_session_free(session);
  // Packed where the session cannot pack.
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.attention_layer = 0;
  opt.padding = ENCRT_PADDING_PACKED;
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_UNSUPPORTED);
  CHECK_THAT(encrt_last_error(), Catch::Contains("cannot run packed batches"));
  encrt_model_free(model);
}
