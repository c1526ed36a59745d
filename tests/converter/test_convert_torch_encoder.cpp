// Conversion of tiny hand-made nn.TransformerEncoder checkpoints ("model_type": "torch_encoder").
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "converter/converter_test_util.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "model/tensor_names.h"

using encrt::StatusCode;
using namespace encrt::converter;
using namespace encrt::test;
namespace fb = encrt::fb;
namespace names = encrt::names;
namespace ref = encrt::kernels::ref;
using nlohmann::json;

namespace {

constexpr int V = 25, D = 12, HEADS = 3, F = 20, MAXLEN = 40, L = 2;

json torch_config() {
  return json{{"model_type", "torch_encoder"}, {"vocab_size", V}, {"d_model", D}, {"nhead", HEADS},
              {"num_layers", L}, {"dim_feedforward", F}, {"activation", "gelu"},
              {"norm_first", true}, {"layer_norm_eps", 1e-5}, {"max_len", MAXLEN},
              {"positional_encoding", "sinusoidal"}, {"embedding_scale", true}};
}

struct Values {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

std::map<std::string, Values> torch_tensors(const std::string& prefix, bool final_norm) {
  std::map<std::string, Values> m;
  uint32_t seed = 100;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    m[prefix + name] = Values{shape, random_values(n, seed++, 0.7f)};
  };
  add("embedding.weight", {V, D});
  for (int l = 0; l < L; ++l) {
    const std::string s = "transformer_encoder.layers." + std::to_string(l) + ".";
    add(s + "self_attn.in_proj_weight", {3 * D, D});
    add(s + "self_attn.in_proj_bias", {3 * D});
    add(s + "self_attn.out_proj.weight", {D, D});
    add(s + "self_attn.out_proj.bias", {D});
    add(s + "linear1.weight", {F, D});
    add(s + "linear1.bias", {F});
    add(s + "linear2.weight", {D, F});
    add(s + "linear2.bias", {D});
    add(s + "norm1.weight", {D});
    add(s + "norm1.bias", {D});
    add(s + "norm2.weight", {D});
    add(s + "norm2.bias", {D});
  }
  if (final_norm) {
    add("transformer_encoder.norm.weight", {D});
    add("transformer_encoder.norm.bias", {D});
  }
  return m;
}

void write_checkpoint(const std::string& dir, const json& config,
                      const std::map<std::string, Values>& tensors) {
  write_text(dir + "/config.json", config.dump(2));
  std::vector<StTensor> st;
  for (const auto& [name, v] : tensors) st.push_back(st_f32(name, v.shape, v.data));
  write_text(dir + "/model.safetensors", safetensors_bytes(st));
}

const fb::Tensor& require_tensor(const LoadedModel& m, const std::string& name) {
  const fb::Tensor* t = m.tensor(name);
  INFO("tensor " << name);
  REQUIRE(t != nullptr);
  CHECK((t->data()->data() - m.data()) % 64 == 0);
  return *t;
}

}  // namespace

TEST_CASE("torch_encoder: pre-norm stack with a final norm", "[converter][torch]") {
  const std::string dir = scratch_dir("torch_prenorm");
  const auto src = torch_tensors("", /*final_norm=*/true);
  write_checkpoint(dir, torch_config(), src);
  ConvertOptions o;
  o.source_dir = dir;
  o.output_path = dir + "/model.encrt";
  REQUIRE(convert(o).to_string() == "ok");

  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  const fb::Config* c = m.model()->config();
  CHECK(c->architecture() == fb::Architecture::TorchEncoder);
  CHECK(c->vocab_size() == V);
  CHECK(c->hidden_size() == D);
  CHECK(c->num_heads() == HEADS);
  CHECK(c->num_layers() == L);
  CHECK(c->ffn_size() == F);
  CHECK(c->activation() == fb::Activation::Gelu);
  CHECK(c->norm_placement() == fb::NormPlacement::PreNorm);
  CHECK(c->layer_norm_eps() == 1e-5f);
  CHECK(c->positional_encoding() == fb::PositionalEncoding::Sinusoidal);
  CHECK(c->embedding_scale() == static_cast<float>(std::sqrt(12.0)));
  CHECK(c->max_seq_len() == MAXLEN);
  CHECK(c->type_vocab_size() == 0);
  CHECK_FALSE(c->embedding_norm());
  CHECK(c->final_norm());
  CHECK(c->pooling() == fb::Pooling::Mean);
  CHECK(m.metadata("source_family") == "torch_encoder");
  CHECK(m.model()->vocabulary() == nullptr);

  CHECK(m.tensor(names::kTokenTypeEmbeddings) == nullptr);
  CHECK(m.tensor(names::kEmbeddingNormWeight) == nullptr);
  CHECK(m.model()->tensors()->size() == 2 + 12 * L + 2);
  CHECK(data_as<float>(require_tensor(m, names::kWordEmbeddings)) == src.at("embedding.weight").data);
  CHECK(data_as<float>(require_tensor(m, names::kFinalNormWeight)) ==
        src.at("transformer_encoder.norm.weight").data);

  // The sinusoidal table: pe[pos, 2i] = sin(pos * 10000^(-2i/d)), pe[pos, 2i+1] = cos(...).
  const fb::Tensor& pe = require_tensor(m, names::kPositionEmbeddings);
  CHECK(shape_of(pe) == std::vector<int64_t>{MAXLEN, D});
  CHECK(pe.dtype() == fb::DType::F32);
  const std::vector<float> table = data_as<float>(pe);
  for (int pos = 0; pos < MAXLEN; ++pos)
    for (int i = 0; i < D / 2; ++i) {
      const double angle = pos * std::exp(2 * i * -std::log(10000.0) / D);
      INFO("pos " << pos << " i " << i);
      CHECK(table[static_cast<size_t>(pos * D + 2 * i)] == Approx(std::sin(angle)).margin(2e-5));
      CHECK(table[static_cast<size_t>(pos * D + 2 * i + 1)] == Approx(std::cos(angle)).margin(2e-5));
    }
  CHECK(table[0] == 0.0f);
  CHECK(table[1] == 1.0f);

  for (int l = 0; l < L; ++l) {
    const std::string s = "transformer_encoder.layers." + std::to_string(l) + ".";
    const fb::Tensor& qkv = require_tensor(m, names::layer(l, names::kQkvWeight));
    CHECK(shape_of(qkv) == std::vector<int64_t>{3 * D, D});
    CHECK(qkv.layout() == fb::Layout::PanelN16);
    std::vector<float> packed(encrt::kernels::panel_f32_size(3 * D, D));
    ref::pack_weights_f32(3 * D, D, src.at(s + "self_attn.in_proj_weight").data.data(), packed.data());
    CHECK(data_as<float>(qkv) == packed);
    CHECK(data_as<float>(require_tensor(m, names::layer(l, names::kQkvBias))) ==
          src.at(s + "self_attn.in_proj_bias").data);
    const fb::Tensor& up = require_tensor(m, names::layer(l, names::kFfnUpWeight));
    CHECK(shape_of(up) == std::vector<int64_t>{F, D});
    std::vector<float> up_packed(encrt::kernels::panel_f32_size(F, D));
    ref::pack_weights_f32(F, D, src.at(s + "linear1.weight").data.data(), up_packed.data());
    CHECK(data_as<float>(up) == up_packed);
    CHECK(shape_of(require_tensor(m, names::layer(l, names::kFfnDownWeight))) == std::vector<int64_t>{D, F});
    CHECK(data_as<float>(require_tensor(m, names::layer(l, names::kAttnNormWeight))) == src.at(s + "norm1.weight").data);
    CHECK(data_as<float>(require_tensor(m, names::layer(l, names::kFfnNormBias))) == src.at(s + "norm2.bias").data);
    CHECK(data_as<float>(require_tensor(m, names::layer(l, names::kAttnOutBias))) ==
          src.at(s + "self_attn.out_proj.bias").data);
  }
}

TEST_CASE("torch_encoder: prefixed post-norm stack, defaults, int8", "[converter][torch]") {
  const std::string dir = scratch_dir("torch_postnorm");
  auto src = torch_tensors("encoder.", /*final_norm=*/false);
  // Unrelated module state outside the encoder (a decoder head, a registered pe buffer) is ignored.
  src["decoder.weight"] = Values{{V, D}, random_values(V * D, 7)};
  src["pos_encoder.pe"] = Values{{MAXLEN, 1, D}, random_values(MAXLEN * D, 8)};
  json config = torch_config();
  config.erase("activation");   // default relu
  config.erase("norm_first");   // default false
  config.erase("layer_norm_eps");
  config["embedding_scale"] = false;
  write_checkpoint(dir, config, src);
  write_text(dir + "/vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nx\r\ny");

  SourceModel model;
  REQUIRE(read_source(dir, "cls", &model).to_string() == "ok");
  CHECK(model.config.activation == Activation::kRelu);
  CHECK(model.config.norm_placement == NormPlacement::kPostNorm);
  CHECK(model.config.layer_norm_eps == 1e-5f);
  CHECK(model.config.embedding_scale == 1.0f);
  CHECK_FALSE(model.config.final_norm);
  CHECK(model.config.pooling == Pooling::kCls);
  REQUIRE(model.vocabulary.has_value());
  CHECK(model.vocabulary->tokens == std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "x", "y"});
  CHECK(model.vocabulary->do_lower_case);
  CHECK(model.vocabulary->mask_id == -1);
  CHECK(model.vocabulary->sep_id == 3);

  ConvertOptions o;
  o.output_path = dir + "/model-i8.encrt";
  o.weight_type = WeightType::kI8;
  REQUIRE(write_model(model, o).to_string() == "ok");
  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  CHECK(m.model()->config()->attention_precision() == fb::AttentionPrecision::Int8);
  CHECK(m.tensor(names::kFinalNormWeight) == nullptr);
  const fb::Tensor& pe = require_tensor(m, names::kPositionEmbeddings);
  CHECK(pe.dtype() == fb::DType::F16);
  const fb::Tensor& down = require_tensor(m, names::layer(1, names::kFfnDownWeight));
  CHECK(down.dtype() == fb::DType::I8);
  CHECK(down.layout() == fb::Layout::PanelN16K4);
  CHECK(down.data()->size() == encrt::kernels::panel_i8_size(D, F));
  CHECK(require_tensor(m, names::kWordEmbeddings).dtype() == fb::DType::I8);
  CHECK(m.model()->vocabulary()->tokens()->size() == 6u);
}

TEST_CASE("torch_encoder: errors", "[converter][torch]") {
  const std::string dir = scratch_dir("torch_errors");
  auto src = torch_tensors("", true);
  json config = torch_config();
  SourceModel model;
  auto expect = [&](StatusCode code, const std::vector<std::string>& fragments,
                    const std::string& pooling = "") {
    write_checkpoint(dir, config, src);
    const encrt::Status st = read_source(dir, pooling, &model);
    INFO(st.to_string());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == code);
    for (const std::string& f : fragments) CHECK_THAT(st.message(), Catch::Contains(f));
  };
  SECTION("missing required key") {
    config.erase("d_model");
    expect(StatusCode::kInvalidModel, {"missing config key 'd_model'"});
  }
  SECTION("max_len beyond the runtime's limit, before the position table is computed") {
    config["max_len"] = 2147483647;  // once std::bad_alloc, which ended the process
    expect(StatusCode::kInvalidModel, {"max_len = 2147483647 is out of range"});
  }
  SECTION("unknown key") {
    config["dropout"] = 0.1;
    expect(StatusCode::kUnsupported, {"unknown config key 'dropout' in config.json"});
  }
  SECTION("unsupported activation") {
    config["activation"] = "tanh";
    expect(StatusCode::kUnsupported, {"activation", "tanh"});
  }
  SECTION("unsupported positional encoding") {
    config["positional_encoding"] = "learned";
    expect(StatusCode::kUnsupported, {"positional_encoding", "learned"});
  }
  SECTION("bool given as a number") {
    config["norm_first"] = 1;
    expect(StatusCode::kInvalidModel, {"norm_first", "true or false"});
  }
  SECTION("heads do not divide d_model") {
    config["nhead"] = 5;
    expect(StatusCode::kInvalidModel, {"nhead"});
  }
  SECTION("pooler pooling") { expect(StatusCode::kUnsupported, {"pooler"}, "pooler"); }
  SECTION("missing tensor") {
    src.erase("transformer_encoder.layers.1.linear2.bias");
    expect(StatusCode::kInvalidModel, {"missing tensor 'transformer_encoder.layers.1.linear2.bias'"});
  }
  SECTION("mis-shaped tensor") {
    src["transformer_encoder.layers.0.self_attn.in_proj_weight"] = Values{{D, D}, random_values(D * D, 3)};
    expect(StatusCode::kInvalidModel, {"in_proj_weight", "[12, 12]", "expected [36, 12]"});
  }
  SECTION("more layers than configured") {
    config["num_layers"] = 1;
    expect(StatusCode::kInvalidModel, {"unexpected tensor 'transformer_encoder.layers.1."});
  }
  SECTION("half a final norm") {
    src.erase("transformer_encoder.norm.bias");
    expect(StatusCode::kInvalidModel, {"transformer_encoder.norm.bias"});
  }
}

TEST_CASE("torch_encoder: the attention window is stored in the config; a negative one is refused",
          "[converter][torch][window]") {
  const std::string dir = scratch_dir("torch_window");
  write_checkpoint(dir, torch_config(), torch_tensors("", /*final_norm=*/false));
  SourceModel model;
  REQUIRE(read_source(dir, "", &model).to_string() == "ok");
  ConvertOptions o;
  o.output_path = dir + "/model.encrt";
  REQUIRE(write_model(model, o).to_string() == "ok");
  CHECK(LoadedModel(o.output_path).model()->config()->attention_window() == 0);  // default: full attention
  o.attention_window = 5;
  REQUIRE(write_model(model, o).to_string() == "ok");
  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  CHECK(m.model()->config()->attention_window() == 5);
  o.attention_window = -1;
  const encrt::Status s = write_model(model, o);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("attention window -1") != std::string::npos);
}
