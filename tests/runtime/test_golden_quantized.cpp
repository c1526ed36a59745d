// End-to-end accuracy of fp16 and int8 conversions against the PyTorch fixtures, per token:
// fp16 min cosine >= 0.999; int8 min cosine >= 0.98 and mean >= 0.99, on every fixture, for the
// reference kernels and the best kernels of this CPU.
#include <catch2/catch.hpp>

#include "kernels/isa.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

struct TokenCosines {
  double mean = 0.0, min = 1.0;
};

TokenCosines token_cosines(const float* got, const test::Fixture& f) {
  TokenCosines c;
  int n = 0;
  double sum = 0.0;
  for (int t = 0; t < f.batch * f.seq; ++t) {
    if (f.mask.data[static_cast<size_t>(t)] == 0) continue;
    const size_t off = static_cast<size_t>(t) * f.hidden;
    const double cos = test::cosine(got + off, f.hidden_state.data.data() + off, f.hidden);
    sum += cos;
    c.min = std::min(c.min, cos);
    ++n;
  }
  c.mean = sum / n;
  return c;
}

void check_type(converter::WeightType type, double min_bar, double mean_bar) {
  const std::string best = kernels::best_isa_level().name;
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(test::convert_fixture(f, type), &model).is_ok());
    for (const std::string& isa : {std::string("scalar"), best}) {
      SessionOptions opt;
      opt.max_batch = f.batch;
      opt.max_seq = f.seq;
      opt.backend_options["isa"] = isa;
      auto session = test::run_fixture(*model, f, opt);
      const TokenCosines c = token_cosines(session->last_hidden_state(), f);
      INFO(name << " " << converter::weight_type_name(type) << " on " << isa << ": token cosine mean " << c.mean
                << ", min " << c.min << "; fp16 layers: " << model->metadata_value("fp16_layers"));
      CHECK(c.min >= min_bar);
      CHECK(c.mean >= mean_bar);
    }
  }
}

}  // namespace

TEST_CASE("fp16 models keep per-token cosine >= 0.999 against PyTorch", "[golden][fp16]") {
  check_type(converter::WeightType::kF16, 0.999, 0.999);
}

TEST_CASE("int8 models keep per-token cosine min >= 0.98 and mean >= 0.99 against PyTorch", "[golden][int8]") {
  check_type(converter::WeightType::kI8, 0.98, 0.99);
}

TEST_CASE("the int8 guardrail keeps layers in fp16 to meet a strict bar and says so", "[int8][guardrail]") {
  const test::Fixture f = test::load_fixture("torch_post_gelu_3layer");
  converter::ConvertOptions opt;
  opt.source_dir = f.dir;
  opt.weight_type = converter::WeightType::kI8;
  opt.output_path = test::tmp_path("guardrail.strict.encrt");
  opt.min_cosine = 0.999999;
  converter::QuantizationReport report;
  REQUIRE(converter::convert(opt, &report).is_ok());
  INFO(report.to_text());
  CHECK_FALSE(report.fp16_layers.empty());
  CHECK(report.pooled_min_cosine > report.int8_only_min_cosine);
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(opt.output_path, &model).is_ok());
  CHECK(model->metadata_value("fp16_layers") != "none");
  CHECK(!model->metadata_value("calibration_pooled_cosine_min").empty());
  int fp16_weights = 0;
  for (const TensorInfo& t : model->tensors())
    if (t.name.find("ffn.up.weight") != std::string::npos && t.dtype == "f16") ++fp16_weights;
  CHECK(fp16_weights == static_cast<int>(report.fp16_layers.size()));

  // A lax bar keeps every layer int8.
  opt.min_cosine = -1.0;
  opt.output_path = test::tmp_path("guardrail.lax.encrt");
  converter::QuantizationReport lax;
  REQUIRE(converter::convert(opt, &lax).is_ok());
  CHECK(lax.fp16_layers.empty());
  REQUIRE(Model::load(opt.output_path, &model).is_ok());
  CHECK(model->metadata_value("fp16_layers") == "none");
}

TEST_CASE("calibration ids are checked", "[int8][calibration]") {
  const test::Fixture f = test::load_fixture("torch_post_relu");
  converter::ConvertOptions opt;
  opt.source_dir = f.dir;
  opt.weight_type = converter::WeightType::kI8;
  opt.output_path = test::tmp_path("calibration.encrt");
  std::vector<int32_t> ids = {1, 2, 3, 1000, 0, 0};  // 1000 >= vocab 100
  REQUIRE(npy::write_int32(test::tmp_path("bad_calibration.npy"), {2, 3}, ids.data()).is_ok());
  opt.calibration_ids = test::tmp_path("bad_calibration.npy");
  Status s = converter::convert(opt);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("1000") != std::string::npos);
  ids[3] = 7;
  REQUIRE(npy::write_int32(test::tmp_path("good_calibration.npy"), {2, 3}, ids.data()).is_ok());
  opt.calibration_ids = test::tmp_path("good_calibration.npy");
  converter::QuantizationReport report;
  s = converter::convert(opt, &report);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  CHECK(report.calibration.find("2 sequences") != std::string::npos);
}
