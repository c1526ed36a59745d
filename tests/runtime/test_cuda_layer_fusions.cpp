// Which ops of real encoder graphs the CUDA backend's fused kernels may take, by the graphs' shape
// (backends/cuda/layer_fusions.h), checked without a GPU: every layer of a post-norm encoder has
// its QKV projection + attention, its feed-forward block, its two linear + LayerNorm pairs, and
// its tail after the attention (output projection, LayerNorm, feed-forward block);
// a pre-norm encoder has the first only (its LayerNorms come before the linears); the layer whose
// attention probabilities are an output, and an encoder with src masks, keep their attention
// apart. A GPU run would otherwise be the first to find a fusion that never applies.
#include <catch2/catch.hpp>

#if defined(ENCRT_WITH_CUDA)

#include <memory>
#include <string>

#include "backends/cuda/layer_fusions.h"
#include "model/dequantized_linears.h"
#include "model/model_impl.h"
#include "plan/encoder_graph.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

struct Counts {
  int layers = 0, qkv_attention = 0, ffn = 0, linear_norm = 0, layer_tail = 0;
};

// type kI8: the int8 model with its linears run as fp16 ones (the cuda backend's int8_linears=f16,
// and auto at small batches: model/dequantized_linears.h).
Counts count_fusions(const std::string& fixture, int attention_layer = -1, bool src_mask = false,
                     converter::WeightType type = converter::WeightType::kF16) {
  const test::Fixture f = test::load_fixture(fixture);
  const std::string path = test::convert_fixture(f, type, "", ".layer_fusions");
  Model::Impl impl;
  impl.file = std::make_unique<MappedFile>();
  REQUIRE(impl.file->open(path).is_ok());
  REQUIRE(detail::load_model_buffer(impl.file->data(), impl.file->size(), path, &impl).is_ok());
  plan::EncoderGraphOptions options;
  options.max_batch = 2;
  options.max_seq = 16;
  options.attention_layer = attention_layer;
  options.src_mask = src_mask;
  if (type == converter::WeightType::kI8) options.dequantized = &impl.dequantized_linears();
  const plan::Graph g = plan::build_encoder_graph(impl, options);
  Counts c;
  c.layers = static_cast<int>(impl.layers.size());
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    c.qkv_attention += cuda::qkv_attention_at(g, i) ? 1 : 0;
    c.ffn += cuda::ffn_block_at(g, i) ? 1 : 0;
    c.linear_norm += cuda::fuses_into_norm(g, i) ? 1 : 0;
    c.layer_tail += cuda::layer_tail_at(g, i) ? 1 : 0;
  }
  return c;
}

}  // namespace

TEST_CASE("cuda layer fusions: every layer of post-norm encoders", "[cuda_fusions]") {
  for (const char* name : {"bert_plain", "torch_post_gelu_3layer", "torch_post_relu"}) {
    INFO(name);
    const Counts c = count_fusions(name);
    REQUIRE(c.layers > 0);
    CHECK(c.qkv_attention == c.layers);
    CHECK(c.ffn == c.layers);
    CHECK(c.linear_norm == 2 * c.layers);
    CHECK(c.layer_tail == c.layers);
  }
}

TEST_CASE("cuda layer fusions: int8 models whose linears run as fp16 take every fusion", "[cuda_fusions][int8_linears]") {
  for (const char* name : {"bert_plain", "torch_post_gelu_3layer", "torch_post_relu"}) {
    INFO(name);
    const Counts c = count_fusions(name, -1, false, converter::WeightType::kI8);
    REQUIRE(c.layers > 0);
    CHECK(c.qkv_attention == c.layers);
    CHECK(c.ffn == c.layers);
    CHECK(c.linear_norm == 2 * c.layers);
    CHECK(c.layer_tail == c.layers);
  }
}

TEST_CASE("cuda layer fusions: a pre-norm encoder keeps its LayerNorms apart", "[cuda_fusions]") {
  const Counts c = count_fusions("torch_pre_gelu_final_norm");
  REQUIRE(c.layers > 0);
  CHECK(c.qkv_attention == c.layers);
  CHECK(c.ffn == 0);
  CHECK(c.linear_norm == 0);
  CHECK(c.layer_tail == 0);
}

TEST_CASE("cuda layer fusions: attention probabilities and src masks keep the attention apart", "[cuda_fusions]") {
  const Counts probs = count_fusions("bert_plain", 1);
  CHECK(probs.qkv_attention == probs.layers - 1);
  CHECK(probs.ffn == probs.layers);
  CHECK(probs.layer_tail == probs.layers);  // the tail after the attention is the same
  const Counts masked = count_fusions("torch_post_gelu_3layer", -1, true);  // every attention reads the src masks
  CHECK(masked.qkv_attention == 0);
  CHECK(masked.ffn == masked.layers);
}

#endif
