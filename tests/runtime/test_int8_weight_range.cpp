// The CPU backend's choice of int8 GEMM on AVX2 without VNNI: both routes (int8_route=widened,
// signed) are exact, so a model gives the same bits on either; a model whose int8 weights hold
// -128 (which the converter never writes, and the signed route would get wrong) runs the
// widened kernel, says so, and gives those same bits too.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "converter/convert.h"
#include "encrt_generated.h"
#include "kernels/isa.h"
#include "kernels/kernel_types.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fixture's hidden state and the CPU backend's summary at isa=avx2 with `route`.
struct Run {
  std::vector<float> hidden;
  std::string summary;
};
Run run_avx2(const Model& model, const test::Fixture& f, const char* route) {
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.backend = "cpu";
  opt.backend_options["isa"] = "avx2";
  opt.backend_options["int8_route"] = route;
  auto session = test::run_fixture(model, f, opt);
  Run r;
  const float* h = session->last_hidden_state();
  r.hidden.assign(h, h + static_cast<size_t>(f.batch) * f.seq * f.hidden);
  r.summary = session->kernel_summary();
  return r;
}

}  // namespace

TEST_CASE("int8 on AVX2: the widened and signed routes give the same bits, and -128 weights fall back",
          "[int8][avx2]") {
  if (!kernels::isa_supported(kernels::kIsaAvx2)) {
    WARN("not run: this CPU has no AVX2");
    return;
  }
  const test::Fixture f = test::load_fixture("bert_plain");
  const std::string path = test::convert_fixture(f, converter::WeightType::kI8);
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(path, &model).is_ok());
  const Run widened = run_avx2(*model, f, "widened");
  const Run signed_route = run_avx2(*model, f, "signed");
  CHECK(widened.summary.find("gemm_u8s8=x86::qu8s8_gemm_6x8__avx2") != std::string::npos);
  CHECK(signed_route.summary.find("gemm_u8s8=x86::qu8s8_gemm_4x16__avx2") != std::string::npos);
  CHECK(signed_route.hidden == widened.hidden);

  // One weight of the first FFN set to -128 (its column sum follows): a file as another tool
  // might write it. Element (n = 0, k = 0) is the first byte of the PanelN16K4 data.
  std::string bytes = read_bytes(path);
  const fb::Model* root = fb::GetModel(bytes.data());
  const fb::Tensor* t = root->tensors()->LookupByKey("layers.0.ffn.up.weight");
  REQUIRE(t != nullptr);
  REQUIRE(t->dtype() == fb::DType::I8);
  const size_t data_at = reinterpret_cast<const char*>(t->data()->data()) - bytes.data();
  const size_t sum_at = reinterpret_cast<const char*>(t->column_sums()->data()) - bytes.data();
  const int8_t old = static_cast<int8_t>(bytes[data_at]);
  bytes[data_at] = static_cast<char>(0x80);
  int32_t sum;
  std::memcpy(&sum, bytes.data() + sum_at, sizeof sum);
  sum += -128 - old;
  std::memcpy(bytes.data() + sum_at, &sum, sizeof sum);
  const std::string patched = test::tmp_path("bert_plain.minus128.encrt");
  std::ofstream(patched, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::unique_ptr<Model> minus128;
  REQUIRE(Model::load(patched, &minus128).is_ok());
  const Run fallback = run_avx2(*minus128, f, "signed");
  const Run reference = run_avx2(*minus128, f, "widened");
  INFO(fallback.summary);
  CHECK(fallback.summary.find("gemm_u8s8=x86::qu8s8_gemm_6x8__avx2 (int8 weights hold -128)") != std::string::npos);
  CHECK(fallback.hidden == reference.hidden);
  CHECK(fallback.hidden != widened.hidden);  // the patch changed the model
}

TEST_CASE("the cpu backend's int8_route option is checked", "[int8][avx2][bad-input]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
  SessionOptions opt;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.backend = "cpu";
  opt.backend_options["int8_route"] = "fastest";
  std::unique_ptr<Session> session;
  const Status s = Session::create(*model, opt, &session);
  INFO(s.to_string());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("int8_route") != std::string::npos);
  CHECK(s.message().find("fastest") != std::string::npos);
}

TEST_CASE("7-bit int8 weights: the converter's ranges, and the same bits on every route and level",
          "[int8][avx2][narrow]") {
  // encrt convert --weight-bits 7: every linear's weights in [-63, 63] but the FFN down
  // projections', which keep [-127, 127] (and reach it: per channel, each row's largest |w|
  // maps to the last level). The kernel for 7-bit weights is exact, so the model gives the bits
  // of the 8-bit kernels at the same level (int8_route=widened / signed turn it off).
  const test::Fixture f = test::load_fixture("bert_plain");
  converter::ConvertOptions opt;
  opt.source_dir = f.dir;
  opt.weight_type = converter::WeightType::kI8;
  opt.int8_weight_bits = 7;
  opt.output_path = test::tmp_path("bert_plain.i8w7.encrt");
  const Status converted = converter::convert(opt);
  INFO(converted.to_string());
  REQUIRE(converted.is_ok());
  const std::string bytes = read_bytes(opt.output_path);
  const fb::Model* root = fb::GetModel(bytes.data());
  int linears = 0, down = 0;
  for (const fb::Tensor* t : *root->tensors()) {
    if (t->dtype() != fb::DType::I8 || t->layout() != fb::Layout::PanelN16K4) continue;
    int most = 0;
    for (int8_t v : *reinterpret_cast<const flatbuffers::Vector<int8_t>*>(t->data()))
      most = std::max(most, std::abs(static_cast<int>(v)));
    const bool is_down = t->name()->str().find("ffn.down.weight") != std::string::npos;
    INFO(t->name()->str());
    CHECK(most == (is_down ? 127 : 63));
    ++linears;
    down += is_down;
  }
  CHECK(down > 0);
  CHECK(linears > down);
  bool has_bits = false;
  for (const fb::KeyValue* kv : *root->metadata())
    if (kv->key()->str() == "int8_weight_bits") has_bits = kv->value()->str() == "7";
  CHECK(has_bits);

  if (!kernels::isa_supported(kernels::kIsaAvx2)) {
    WARN("not run: this CPU has no AVX2");
    return;
  }
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(opt.output_path, &model).is_ok());
  const Run narrow = run_avx2(*model, f, "auto");
  INFO(narrow.summary);
  CHECK(narrow.summary.find("gemm_u8s7=x86::qu8s7_gemm_6x16__avx2 (" + std::to_string(linears - down) + " of " +
                            std::to_string(linears) + " int8 linears: 7-bit weights)") != std::string::npos);
  for (const char* route : {"widened", "signed"}) {
    const Run r = run_avx2(*model, f, route);
    INFO(route << ": " << r.summary);
    CHECK(r.summary.find("gemm_u8s7") == std::string::npos);
    CHECK(r.hidden == narrow.hidden);
  }
  // 8-bit weights never take it.
  std::unique_ptr<Model> eight;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &eight).is_ok());
  CHECK(run_avx2(*eight, f, "auto").summary.find("gemm_u8s7") == std::string::npos);
}

TEST_CASE("the converter's int8 weight bits are 7 or 8", "[int8][narrow][bad-input]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  for (const int bits : {0, 6, 9}) {
    converter::ConvertOptions opt;
    opt.source_dir = f.dir;
    opt.weight_type = converter::WeightType::kI8;
    opt.int8_weight_bits = bits;
    opt.output_path = test::tmp_path("bert_plain.i8w" + std::to_string(bits) + ".encrt");
    const Status s = converter::convert(opt);
    INFO(bits << ": " << s.to_string());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("7 or 8") != std::string::npos);
  }
}
