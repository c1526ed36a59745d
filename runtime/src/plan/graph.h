// The encoder as a flat list of ops over named buffers. Built once per session from the model's
// config and weights; the session executes it in order. Buffers are sized for the session's
// maximum shape (max_batch * max_seq rows); a smaller run uses a prefix of each.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/kernel_types.h"
#include "model/model_impl.h"

namespace encrt::plan {

enum class OpKind {
  kEmbed,      // ids (+ token types) -> hidden rows: gather, scale, add positions (+ LayerNorm)
  kLayerNorm,  // rows -> rows (in place allowed)
  kQuantize,   // fp32 rows -> uint8 rows + per-row scale and zero point (for int8 linears)
  kLinear,     // rows [M, K] -> rows [M, N] with bias, activation and residual epilogue
  kAttention,  // fused QKV rows -> context rows (+ probabilities)
  kPoolMean,   // hidden rows -> [batch, hidden], mean over real tokens
  kPoolFirst,  // hidden rows -> [batch, hidden], the first token of each sequence
  kTanh,       // in place
};

const char* op_kind_name(OpKind kind);

// Rows of a buffer: how many rows a run uses is a function of its (batch, seq).
enum class RowsOf { kTokens, kSequences, kNone };

struct BufferSpec {
  std::string name;
  RowsOf rows = RowsOf::kTokens;
  size_t row_bytes = 0;  // bytes per row (kTokens / kSequences); total bytes for kNone
  size_t max_bytes = 0;  // planned size
};

struct Op {
  OpKind kind = OpKind::kEmbed;
  std::string label;     // e.g. "layers.3.ffn.up"
  int layer = -1;
  int in = -1;           // buffer ids, -1 = none
  int out = -1;
  int residual = -1;
  int q_scale = -1;      // kQuantize outputs / int8 kLinear inputs
  int q_zero_point = -1;
  int probs = -1;        // kAttention: probabilities buffer, if requested
  int scratch = -1;      // per-thread scratch, scratch_per_thread bytes for each thread
  size_t scratch_per_thread = 0;
  int width_in = 0;      // K (or hidden)
  int width_out = 0;     // N (or hidden)
  const detail::LinearView* linear = nullptr;
  const detail::NormView* norm = nullptr;
  kernels::Activation activation = kernels::Activation::kNone;
  bool int8_attention = false;
};

struct Graph {
  std::vector<BufferSpec> buffers;
  std::vector<Op> ops;
  int hidden_output = -1;  // buffer holding last_hidden_state
  int pooled_output = -1;  // buffer holding the pooled output
  int probs_output = -1;   // attention probabilities, or -1
};

struct GraphOptions {
  int max_batch = 1;
  int max_seq = 1;
  int threads = 1;
  int attention_layer = -1;
  kernels::AttentionScratchFn attention_f32_scratch = nullptr;
  kernels::AttentionScratchFn attention_i8_scratch = nullptr;
};

Graph build_encoder_graph(const detail::ModelImpl& model, const GraphOptions& options);

// Each buffer's [first_op, last_op]; the outputs stay alive to the end.
struct Lifetime {
  int first_op = 0;
  int last_op = 0;
};
std::vector<Lifetime> buffer_lifetimes(const Graph& graph);

}  // namespace encrt::plan
