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
#include <utility>
#include <vector>

#include "backends/cuda/layer_fusions.h"
#include "model/dequantized_linears.h"
#include "model/model_impl.h"
#include "plan/arena_planner.h"
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

TEST_CASE("cuda layer fusions: the layer tail's kernel never writes y over rows of its input still to be read",
          "[cuda_fusions]") {
  // The arena may put y (first written at the tail's down projection) over the projection's input
  // and residual (last read at the projection), which the one kernel still reads then.
  unsigned char memory[4096];
  unsigned char* y = memory + 1024;
  CHECK(cuda::layer_tail_memory_fits(y, memory, memory + 2048, 1024));  // apart
  CHECK(cuda::layer_tail_memory_fits(y, y, nullptr, 1024));             // the same rows
  CHECK(!cuda::layer_tail_memory_fits(y, memory + 256, nullptr, 1024));  // y's rows over later rows of in
  CHECK(!cuda::layer_tail_memory_fits(y, memory, memory + 1792, 1024));  // over earlier rows of the residual
  // What the arena does with a 2-layer post-norm encoder of TinyBERT's widths (H 312, F 1200) at
  // 1 × 17 tokens, its cuda session's buffers (fp16, the output fp32) living between the graph's
  // ops as `encrt inspect --buffers` lists them: embedding 0, then each layer's QKV projection,
  // attention, output projection o, LayerNorm, up and down projections and LayerNorm, the pooler
  // 15. The first layer's tail (o = 3) reads the context and the embeddings last at op 3, and its
  // y (written from op 6) may share their memory: [17, 312] fp16 is 10,608 bytes, not a multiple
  // of the arena's 256.
  const size_t M = 17, H = 312, F = 1200, row = H * 2;
  const std::vector<plan::BufferLifetime> buffers = {
      {M * row, 0, 3},       // 0 embeddings: the first tail's residual
      {3 * M * row, 1, 2},   // 1 QKV
      {M * row, 2, 3},       // 2 context: the first tail's in
      {M * row, 3, 6},       // 3 x
      {M * F * 2, 5, 6},     // 4 h
      {M * row, 6, 10},      // 5 y: the first tail's output, the second's residual
      {3 * M * row, 8, 9},   // 6
      {M * row, 9, 10},      // 7 context
      {M * row, 10, 13},     // 8 x
      {M * F * 2, 12, 13},   // 9 h
      {M * H * 4, 13, 15},   // 10 the last hidden state (an output: fp32, no fused tail)
      {H * 4, 15, 15}};      // 11 pooled
  const plan::ArenaPlan arena = plan::plan_arena(buffers, 256);
  const size_t y_at = arena.offsets[5], in_at = arena.offsets[2], residual_at = arena.offsets[0];
  INFO("y at " << y_at << ", in at " << in_at << ", residual at " << residual_at);
  const auto overlaps = [&](size_t at) { return at != y_at && at < y_at + M * row && y_at < at + M * row; };
  CHECK((overlaps(in_at) || overlaps(residual_at)));  // as the arena plans it now: one kernel would race
  std::vector<unsigned char> arena_memory(arena.arena_size);
  unsigned char* base = arena_memory.data();
  CHECK(!cuda::layer_tail_memory_fits(base + y_at, base + in_at, base + residual_at, M * row));
}

#endif
