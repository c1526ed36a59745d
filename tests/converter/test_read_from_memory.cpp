// converter::read_source_from_memory: a checkpoint held in memory (config.json text and a
// model.safetensors image) reads as the same checkpoint in a directory does, without side
// files, and bad input is a Status that names the part it came from.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "converter/convert.h"
#include "converter/converter_test_util.h"

using encrt::StatusCode;
using namespace encrt::converter;
using namespace encrt::test;
using nlohmann::json;

namespace {

constexpr int V = 11, D = 8, F = 12, MAXLEN = 9;

json torch_config() {
  return json{{"model_type", "torch_encoder"}, {"vocab_size", V}, {"d_model", D}, {"nhead", 2},
              {"num_layers", 1}, {"dim_feedforward", F}, {"max_len", MAXLEN}, {"embedding_scale", false}};
}

std::string torch_image() {
  std::vector<StTensor> st;
  uint32_t seed = 7;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    st.push_back(st_f32(name, shape, random_values(n, seed++, 0.5f)));
  };
  add("embedding.weight", {V, D});
  const std::string s = "transformer_encoder.layers.0.";
  add(s + "self_attn.in_proj_weight", {3 * D, D});
  add(s + "self_attn.in_proj_bias", {3 * D});
  add(s + "self_attn.out_proj.weight", {D, D});
  add(s + "self_attn.out_proj.bias", {D});
  add(s + "linear1.weight", {F, D});
  add(s + "linear1.bias", {F});
  add(s + "linear2.weight", {D, F});
  add(s + "linear2.bias", {D});
  for (const char* norm : {"norm1", "norm2"}) {
    add(s + norm + ".weight", {D});
    add(s + norm + ".bias", {D});
  }
  return safetensors_bytes(st);
}

}  // namespace

TEST_CASE("read_source_from_memory reads what read_source reads from a directory", "[converter][memory]") {
  const std::string dir = scratch_dir("from_memory");
  const std::string config = torch_config().dump();
  const std::string image = torch_image();
  write_text(dir + "/config.json", config);
  write_text(dir + "/model.safetensors", image);
  // A vocabulary beside the files: the directory reads it, memory has no side files.
  write_text(dir + "/vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");

  SourceModel from_dir, from_memory;
  REQUIRE(read_source(dir, "cls", &from_dir).is_ok());
  const encrt::Status st = read_source_from_memory(config, image.data(), image.size(), "cls", "", &from_memory);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  CHECK(from_memory.config.pooling == Pooling::kCls);
  CHECK(from_memory.config.hidden_size == from_dir.config.hidden_size);
  CHECK(from_memory.config.num_layers == from_dir.config.num_layers);
  REQUIRE(from_memory.tensors.size() == from_dir.tensors.size());
  for (const auto& [name, t] : from_dir.tensors) {
    INFO(name);
    REQUIRE(from_memory.tensors.count(name) == 1);
    CHECK(from_memory.tensors.at(name).shape == t.shape);
    CHECK(from_memory.tensors.at(name).data == t.data);
  }
  CHECK(from_dir.vocabulary.has_value());
  CHECK_FALSE(from_memory.vocabulary.has_value());
  bool named = false;
  for (const auto& [key, value] : from_memory.metadata) named |= key == "source" && value == "<memory>";
  CHECK(named);

  // And it builds into a model like any source.
  ConvertOptions opt;
  opt.output_path = "memory.encrt";
  std::vector<uint8_t> bytes;
  CHECK(build_model(from_memory, opt, &bytes).is_ok());
}

TEST_CASE("read_source_from_memory: bad input is a Status naming its part", "[converter][memory]") {
  const std::string config = torch_config().dump();
  const std::string image = torch_image();
  SourceModel model;
  auto expect = [&](const encrt::Status& st, StatusCode code, const std::string& fragment) {
    INFO(st.to_string());
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == code);
    CHECK_THAT(st.message(), Catch::Contains(fragment));
    CHECK(model.tensors.empty());
  };
  expect(read_source_from_memory("{\"model_type\": ", image.data(), image.size(), "", "", &model),
         StatusCode::kInvalidModel, "config.json' is not valid JSON");
  expect(read_source_from_memory("[1, 2]", image.data(), image.size(), "", "", &model), StatusCode::kInvalidModel,
         "is not a JSON object");
  expect(read_source_from_memory(config, nullptr, 16, "", "", &model), StatusCode::kInvalidArgument,
         "safetensors is null");
  expect(read_source_from_memory(config, nullptr, 0, "", "", &model), StatusCode::kInvalidModel,
         "<memory>/model.safetensors");
  expect(read_source_from_memory(config, image.data(), image.size() - 4, "", "", &model), StatusCode::kInvalidModel,
         "<memory>/model.safetensors");
  expect(read_source_from_memory(config, image.data(), image.size(), "sum", "", &model),
         StatusCode::kInvalidArgument, "unknown pooling 'sum'");
  expect(read_source_from_memory(config, image.data(), image.size(), "", "tagger", &model),
         StatusCode::kInvalidArgument, "unknown head option 'tagger'");
  CHECK_FALSE(read_source_from_memory(config, image.data(), image.size(), "", "", nullptr).is_ok());
}
