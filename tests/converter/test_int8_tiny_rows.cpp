// Int8 weights of rows whose largest value is tiny (subnormal: max |w| below 127 · FLT_MIN): the
// scale max|w| / 127 underflowed to 0 or a subnormal, which the runtime refuses ("non-positive or
// non-finite scale"), so such a checkpoint could not be converted to int8. The scale is now at
// least FLT_MIN, for the linear weights (kernels/ref/quantize_ref.cpp) and the word embeddings
// (model_writer.cpp). Found by the converter's fuzz target (fuzz/fuzz_converter.cpp): its property
// "the runtime loads what the converter writes" failed on a QKV weight row of subnormal values
// (reproducer: fuzz/corpus/converter/regress-int8-subnormal-weight-row).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "converter/convert.h"
#include "encrt/encrt.hpp"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "model/tensor_names.h"

using namespace encrt;
using namespace encrt::converter;

TEST_CASE("int8: rows of subnormal weights get a positive normal scale and the model loads", "[converter][int8]") {
  SourceModel src;
  SourceConfig& c = src.config;
  c.architecture = Architecture::kBert;
  c.vocab_size = 6, c.hidden_size = 8, c.num_heads = 2, c.num_layers = 1, c.ffn_size = 16;
  c.max_seq_len = 4, c.type_vocab_size = 2, c.embedding_norm = true;
  for (const auto& [name, shape] : expected_tensor_shapes(c)) {
    FloatTensor& t = src.tensors[name];
    t.shape = shape;
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    t.data.resize(n);
    for (size_t i = 0; i < n; ++i) t.data[i] = 0.05f * static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  const float tiny = 1.0e-44f;  // subnormal; tiny / 127 rounds to 0
  for (int k = 0; k < 8; ++k) {
    src.tensors[names::layer(0, names::kFfnUpWeight)].data[static_cast<size_t>(k)] = k % 2 ? tiny : -tiny;
    src.tensors[names::kWordEmbeddings].data[static_cast<size_t>(8 * 3 + k)] = k % 3 ? tiny : 0.0f;
  }
  ConvertOptions opt;
  opt.output_path = "tiny_rows.encrt";
  opt.weight_type = WeightType::kI8;
  std::vector<uint8_t> bytes;
  const Status built = build_model(src, opt, &bytes);
  INFO(built.to_string());
  REQUIRE(built.is_ok());

  // Model::from_buffer takes 64-byte aligned memory.
  std::vector<uint8_t> aligned(bytes.size() + 64);
  uint8_t* base = aligned.data() + (64 - reinterpret_cast<uintptr_t>(aligned.data()) % 64) % 64;
  std::copy(bytes.begin(), bytes.end(), base);
  std::unique_ptr<Model> model;
  const Status loaded = Model::from_buffer(base, bytes.size(), &model);
  INFO(loaded.to_string());
  REQUIRE(loaded.is_ok());
  SessionOptions so;
  so.max_seq = 4;
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(*model, so, &session).is_ok());
  const std::vector<int32_t> ids = {2, 3, 1, 0};
  Inputs in;
  in.batch = 1, in.seq = 4, in.input_ids = ids.data();
  REQUIRE(session->run(in).is_ok());
  for (int i = 0; i < 4 * 8; ++i) CHECK(std::isfinite(session->last_hidden_state()[i]));

  // The reference quantizer alone: the tiny row's scale is FLT_MIN and its values round near it.
  std::vector<float> w(16 * 8, 0.25f);
  for (int k = 0; k < 8; ++k) w[static_cast<size_t>(k)] = tiny;
  std::vector<int8_t> packed(kernels::panel_i8_size(16, 8));
  std::vector<float> scales(16);
  std::vector<int32_t> sums(16);
  kernels::ref::quantize_pack_weights_i8(16, 8, w.data(), packed.data(), scales.data(), sums.data());
  CHECK(scales[0] == std::numeric_limits<float>::min());
  CHECK(sums[0] == 0);  // 1e-44 / FLT_MIN = 8.5e-7 rounds to 0
  CHECK(scales[1] == 0.25f / 127.0f);
}
