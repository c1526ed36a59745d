#include "plan/graph.h"

#include <algorithm>

#include "model/tensor_names.h"

namespace encrt::plan {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbed: return "embed";
    case OpKind::kLayerNorm: return "layer_norm";
    case OpKind::kQuantize: return "quantize";
    case OpKind::kLinear: return "linear";
    case OpKind::kAttention: return "attention";
    case OpKind::kPoolMean: return "pool_mean";
    case OpKind::kPoolFirst: return "pool_first";
    case OpKind::kTanh: return "tanh";
  }
  return "unknown";
}

namespace {

class GraphBuilder {
 public:
  GraphBuilder(const detail::ModelImpl& model, const GraphOptions& options) : model_(model), opt_(options) {}

  Graph build() {
    const ModelConfig& c = model_.config;
    const int H = c.hidden_size;
    int x = rows_f32("embeddings", H);
    Op embed{};
    embed.kind = OpKind::kEmbed;
    embed.label = "embeddings";
    embed.out = x;
    embed.width_out = H;
    embed.norm = c.embedding_norm ? &model_.embedding_norm : nullptr;
    add(embed);

    for (int l = 0; l < c.num_layers; ++l) x = c.pre_norm ? pre_norm_layer(l, x) : post_norm_layer(l, x);
    if (c.final_norm) x = layer_norm("final_norm", -1, x, &model_.final_norm, /*in_place=*/false);
    g_.hidden_output = x;

    Op pool{};
    pool.in = x;
    pool.width_in = pool.width_out = H;
    if (c.pooling == "mean") {
      pool.kind = OpKind::kPoolMean;
      pool.label = "pool.mean";
      pool.out = g_.pooled_output = sequences_f32("pooled", H);
      add(pool);
    } else {
      pool.kind = OpKind::kPoolFirst;
      pool.label = "pool.first_token";
      pool.out = sequences_f32(c.pooling == "cls" ? "pooled" : "pool.first_token", H);
      add(pool);
      g_.pooled_output = pool.out;
      if (c.pooling == "pooler") {
        g_.pooled_output = linear("pooler", -1, pool.out, model_.pooler, kernels::Activation::kNone, -1, "pooled",
                                  RowsOf::kSequences);
        Op tanh{};
        tanh.kind = OpKind::kTanh;
        tanh.label = "pooler.tanh";
        tanh.in = tanh.out = g_.pooled_output;
        tanh.width_in = tanh.width_out = H;
        add(tanh);
      }
    }
    return std::move(g_);
  }

 private:
  // Post-norm (BERT, nn.TransformerEncoderLayer default): x = LN(x + attn(x)); x = LN(x + ffn(x)).
  int post_norm_layer(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const int ctx = attention(l, x);
    int a = linear(names::layer(l, "attention.out"), l, ctx, L.attn_out, kernels::Activation::kNone, x,
                   names::layer(l, "attention.out"), RowsOf::kTokens);
    a = layer_norm(names::layer(l, "attention.norm"), l, a, &L.attn_norm, true);
    const int h = linear(names::layer(l, "ffn.up"), l, a, L.ffn_up, activation(), -1, names::layer(l, "ffn.up"),
                         RowsOf::kTokens);
    int f = linear(names::layer(l, "ffn.down"), l, h, L.ffn_down, kernels::Activation::kNone, a,
                   names::layer(l, "ffn.down"), RowsOf::kTokens);
    return layer_norm(names::layer(l, "ffn.norm"), l, f, &L.ffn_norm, true);
  }

  // Pre-norm: x = x + attn(LN(x)); x = x + ffn(LN(x)).
  int pre_norm_layer(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const int n1 = layer_norm(names::layer(l, "attention.norm"), l, x, &L.attn_norm, false);
    const int ctx = attention(l, n1);
    const int x1 = linear(names::layer(l, "attention.out"), l, ctx, L.attn_out, kernels::Activation::kNone, x,
                          names::layer(l, "attention.out"), RowsOf::kTokens);
    const int n2 = layer_norm(names::layer(l, "ffn.norm"), l, x1, &L.ffn_norm, false);
    const int h = linear(names::layer(l, "ffn.up"), l, n2, L.ffn_up, activation(), -1, names::layer(l, "ffn.up"),
                         RowsOf::kTokens);
    return linear(names::layer(l, "ffn.down"), l, h, L.ffn_down, kernels::Activation::kNone, x1,
                  names::layer(l, "ffn.down"), RowsOf::kTokens);
  }

  int attention(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const ModelConfig& c = model_.config;
    const int qkv = linear(names::layer(l, "attention.qkv"), l, x, L.qkv, kernels::Activation::kNone, -1,
                           names::layer(l, "attention.qkv"), RowsOf::kTokens);
    Op op{};
    op.kind = OpKind::kAttention;
    op.label = names::layer(l, "attention");
    op.layer = l;
    op.in = qkv;
    op.width_in = 3 * c.hidden_size;
    op.width_out = c.hidden_size;
    op.out = rows_f32(names::layer(l, "attention.context"), c.hidden_size);
    // Int8 attention where the model asks for it and the layer's own weights are int8 (a layer
    // kept in fp16 by the accuracy guardrail keeps float attention too).
    op.int8_attention = c.attention_precision == "int8" && L.qkv.dtype == fb::DType::I8;
    const auto scratch_fn = op.int8_attention ? opt_.attention_i8_scratch : opt_.attention_f32_scratch;
    op.scratch_per_thread = round64(scratch_fn(opt_.max_seq, c.head_dim()));
    op.scratch = buffer(names::layer(l, "attention.scratch"), RowsOf::kNone,
                        op.scratch_per_thread * static_cast<size_t>(opt_.threads));
    if (l == opt_.attention_layer) {
      const size_t probs = static_cast<size_t>(opt_.max_batch) * c.num_heads * opt_.max_seq * opt_.max_seq * sizeof(float);
      op.probs = g_.probs_output = buffer(names::layer(l, "attention.probs"), RowsOf::kNone, probs);
    }
    add(op);
    return op.out;
  }

  int linear(const std::string& label, int l, int in, const detail::LinearView& w, kernels::Activation act,
             int residual, const std::string& out_name, RowsOf rows) {
    Op op{};
    op.kind = OpKind::kLinear;
    op.label = label;
    op.layer = l;
    op.linear = &w;
    op.activation = act;
    op.residual = residual;
    op.width_in = w.K;
    op.width_out = w.N;
    op.in = in;
    if (w.dtype == fb::DType::I8) {
      Op q{};
      q.kind = OpKind::kQuantize;
      q.label = label + ".quantize";
      q.layer = l;
      q.linear = &w;  // for its activation multipliers
      q.in = in;
      q.width_in = q.width_out = w.K;
      q.out = buffer(label + ".input_u8", rows, static_cast<size_t>(kernels::round_up(w.K, kernels::kPanelK)));
      q.q_scale = buffer(label + ".input_scale", rows, sizeof(float));
      q.q_zero_point = buffer(label + ".input_zero_point", rows, sizeof(int32_t));
      add(q);
      op.in = q.out;
      op.q_scale = q.q_scale;
      op.q_zero_point = q.q_zero_point;
    }
    op.out = buffer(out_name, rows, static_cast<size_t>(w.N) * sizeof(float));
    add(op);
    return op.out;
  }

  int layer_norm(const std::string& label, int l, int x, const detail::NormView* norm, bool in_place) {
    Op op{};
    op.kind = OpKind::kLayerNorm;
    op.label = label;
    op.layer = l;
    op.in = x;
    op.norm = norm;
    op.width_in = op.width_out = model_.config.hidden_size;
    op.out = in_place ? x : rows_f32(label, model_.config.hidden_size);
    add(op);
    return op.out;
  }

  kernels::Activation activation() const {
    return model_.config.activation == "gelu" ? kernels::Activation::kGelu : kernels::Activation::kRelu;
  }

  static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

  int rows_f32(const std::string& name, int width) {
    return buffer(name, RowsOf::kTokens, static_cast<size_t>(width) * sizeof(float));
  }
  int sequences_f32(const std::string& name, int width) {
    return buffer(name, RowsOf::kSequences, static_cast<size_t>(width) * sizeof(float));
  }
  int buffer(const std::string& name, RowsOf rows, size_t row_bytes) {
    BufferSpec b;
    b.name = name;
    b.rows = rows;
    b.row_bytes = row_bytes;
    const size_t max_rows = rows == RowsOf::kTokens      ? static_cast<size_t>(opt_.max_batch) * opt_.max_seq
                            : rows == RowsOf::kSequences ? static_cast<size_t>(opt_.max_batch)
                                                         : 1;
    b.max_bytes = row_bytes * max_rows;
    g_.buffers.push_back(b);
    return static_cast<int>(g_.buffers.size()) - 1;
  }
  void add(const Op& op) { g_.ops.push_back(op); }

  const detail::ModelImpl& model_;
  const GraphOptions& opt_;
  Graph g_;
};

}  // namespace

Graph build_encoder_graph(const detail::ModelImpl& model, const GraphOptions& options) {
  return GraphBuilder(model, options).build();
}

std::vector<Lifetime> buffer_lifetimes(const Graph& graph) {
  std::vector<Lifetime> life(graph.buffers.size(), Lifetime{-1, -1});
  auto touch = [&](int buffer, int op) {
    if (buffer < 0) return;
    Lifetime& t = life[static_cast<size_t>(buffer)];
    if (t.first_op < 0) t.first_op = op;
    t.last_op = std::max(t.last_op, op);
  };
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    const Op& op = graph.ops[static_cast<size_t>(i)];
    for (int b : {op.in, op.out, op.residual, op.q_scale, op.q_zero_point, op.probs, op.scratch}) touch(b, i);
  }
  const int end = static_cast<int>(graph.ops.size()) - 1;
  for (int b : {graph.hidden_output, graph.pooled_output, graph.probs_output})
    if (b >= 0) life[static_cast<size_t>(b)].last_op = end;
  return life;
}

}  // namespace encrt::plan
