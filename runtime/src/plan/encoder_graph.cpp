#include "plan/encoder_graph.h"

#include <cmath>

#include "model/dequantized_linears.h"
#include "model/tensor_names.h"

namespace encrt::plan {

namespace {

class GraphBuilder {
 public:
  GraphBuilder(const detail::ModelImpl& model, const EncoderGraphOptions& options)
      : model_(model), spec_(model.spec), opt_(options) {}

  Graph build() {
    const int H = spec_.hidden;
    const int ids = input("input_ids");
    const int mask = input("attention_mask");
    const int types = spec_.type_vocab > 0 ? input("token_type_ids") : -1;
    mask_ = mask;
    if (opt_.src_mask) {
      src_mask_bool_ = pair_input("src_mask_bool", DType::kU8);
      src_mask_float_ = pair_input("src_mask_float", DType::kF32);
    }

    EmbedParams e;
    e.word = &model_.word;
    e.position = &model_.position;
    e.token_type = spec_.type_vocab > 0 ? &model_.token_type : nullptr;
    e.scale = spec_.embedding_scale;
    e.norm = spec_.embedding_norm ? &model_.embedding_norm : nullptr;
    e.eps = spec_.layer_norm_eps;
    e.width = H;
    int x = rows_f32("embeddings", H);
    add(OpKind::kEmbed, "embeddings", -1, {ids, types}, {x}, e);

    for (int l = 0; l < spec_.layers; ++l) x = spec_.pre_norm ? pre_norm_layer(l, x) : post_norm_layer(l, x);
    if (spec_.final_norm) x = layer_norm("final_norm", -1, x, &model_.final_norm, /*in_place=*/false);
    output("hidden", x, {{Dim::kBatch}, {Dim::kSeq}, {Dim::kFixed, H}});

    const int raw = pool(spec_.pooling, x, spec_.normalize ? "pooled.unnormalized" : "pooled", "pool");
    int pooled = raw;
    if (spec_.normalize) {
      pooled = sequences_f32("pooled", H);
      add(OpKind::kL2Normalize, "pool.normalize", -1, {raw}, {pooled}, RowsParams{H});
    }
    output("pooled", pooled, {{Dim::kBatch}, {Dim::kFixed, H}});
    if (probs_ >= 0)
      output("attention", probs_, {{Dim::kBatch}, {Dim::kFixed, spec_.heads}, {Dim::kSeq}, {Dim::kSeq}});
    if (model_.head.kind != detail::HeadKind::kNone) head(x, spec_.pooling == model_.head.pooling ? raw : -1);
    return std::move(g_);
  }

 private:
  // [batch, hidden] rows of `x` pooled as `pooling` says, into a new buffer `out_name`.
  int pool(detail::Pooling pooling, int x, const std::string& out_name, const std::string& label) {
    const int H = spec_.hidden;
    switch (pooling) {
      case detail::Pooling::kMean: {
        const int out = sequences_f32(out_name, H);
        add(OpKind::kPoolMean, label + ".mean", -1, {x, mask_}, {out}, RowsParams{H});
        return out;
      }
      case detail::Pooling::kMax: {
        const int out = sequences_f32(out_name, H);
        add(OpKind::kPoolMax, label + ".max", -1, {x, mask_}, {out}, RowsParams{H});
        return out;
      }
      case detail::Pooling::kCls:
      case detail::Pooling::kPooler:
        break;
    }
    const bool cls = pooling == detail::Pooling::kCls;
    const int first = sequences_f32(cls ? out_name : label + ".first_token", H);
    add(OpKind::kPoolFirst, label + ".first_token", -1, {x}, {first}, RowsParams{H});
    if (cls) return first;
    const int pooled = linear(label + "er", -1, first, model_.pooler, kernels::Activation::kNone, -1, out_name,
                              Rows::kSequences);
    add(OpKind::kTanh, label + "er.tanh", -1, {pooled}, {pooled}, RowsParams{H});
    return pooled;
  }

  // The task head: the classifier on the pooled rows (a sequence classifier: `pooled`, or its own
  // pooling when -1) or on every token's row of `hidden`, then its scores and labels.
  void head(int hidden, int pooled) {
    const detail::HeadView& h = model_.head;
    head_ = true;
    const bool tokens = h.kind == detail::HeadKind::kTokenClassification;
    int in = hidden;
    if (!tokens) in = pooled >= 0 ? pooled : pool(h.pooling, hidden, "head.pooled", "head.pool");
    const Rows rows = tokens ? Rows::kTokens : Rows::kSequences;
    const int N = h.num_labels();
    const int logits = linear("head.classifier", -1, in, h.classifier, kernels::Activation::kNone, -1, "logits", rows);
    const int scores = buffer("scores", DType::kF32, rows, static_cast<size_t>(N) * sizeof(float));
    const int labels = h.argmax_labels ? buffer("labels", DType::kI32, rows, sizeof(int32_t)) : -1;
    add(OpKind::kScores, "head.scores", -1, {logits}, {scores, labels}, ScoresParams{N, h.scores});
    std::vector<Dim> shape = {{Dim::kBatch}};
    if (tokens) shape.push_back({Dim::kSeq});
    shape.push_back({Dim::kFixed, N});
    output("logits", logits, shape);
    output("scores", scores, shape);
    if (labels >= 0) {
      shape.pop_back();
      output("labels", labels, shape);
    }
    head_ = false;
  }

  // Post-norm (BERT, nn.TransformerEncoderLayer default): x = LN(x + attn(x)); x = LN(x + ffn(x)).
  int post_norm_layer(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const int ctx = attention(l, x);
    int a = linear(names::layer(l, "attention.out"), l, ctx, L.attn_out, kernels::Activation::kNone, x,
                   names::layer(l, "attention.out"), Rows::kTokens);
    a = layer_norm(names::layer(l, "attention.norm"), l, a, &L.attn_norm, true);
    const int h = linear(names::layer(l, "ffn.up"), l, a, L.ffn_up, spec_.activation, -1, names::layer(l, "ffn.up"),
                         Rows::kTokens);
    int f = linear(names::layer(l, "ffn.down"), l, h, L.ffn_down, kernels::Activation::kNone, a,
                   names::layer(l, "ffn.down"), Rows::kTokens);
    return layer_norm(names::layer(l, "ffn.norm"), l, f, &L.ffn_norm, true);
  }

  // Pre-norm: x = x + attn(LN(x)); x = x + ffn(LN(x)).
  int pre_norm_layer(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const int n1 = layer_norm(names::layer(l, "attention.norm"), l, x, &L.attn_norm, false);
    const int ctx = attention(l, n1);
    const int x1 = linear(names::layer(l, "attention.out"), l, ctx, L.attn_out, kernels::Activation::kNone, x,
                          names::layer(l, "attention.out"), Rows::kTokens);
    const int n2 = layer_norm(names::layer(l, "ffn.norm"), l, x1, &L.ffn_norm, false);
    const int h = linear(names::layer(l, "ffn.up"), l, n2, L.ffn_up, spec_.activation, -1, names::layer(l, "ffn.up"),
                         Rows::kTokens);
    return linear(names::layer(l, "ffn.down"), l, h, L.ffn_down, kernels::Activation::kNone, x1,
                  names::layer(l, "ffn.down"), Rows::kTokens);
  }

  int attention(int l, int x) {
    const detail::LayerView& L = model_.layers[static_cast<size_t>(l)];
    const int qkv = linear(names::layer(l, "attention.qkv"), l, x, L.qkv, kernels::Activation::kNone, -1,
                           names::layer(l, "attention.qkv"), Rows::kTokens);
    AttentionParams p;
    p.heads = spec_.heads;
    p.head_dim = spec_.head_dim();
    p.scale = 1.0f / std::sqrt(static_cast<float>(p.head_dim));
    // Int8 attention where the model asks for it and the layer's own weights are int8 (a layer
    // kept in fp16 by the accuracy guardrail keeps float attention too).
    p.int8 = spec_.int8_attention && weights(L.qkv).dtype == DType::kI8;
    p.window = spec_.attention_window;
    const int ctx = rows_f32(names::layer(l, "attention.context"), spec_.hidden);
    int probs = -1;
    if (l == opt_.attention_layer) {
      const size_t bytes = static_cast<size_t>(opt_.max_batch) * spec_.heads * opt_.max_seq * opt_.max_seq * sizeof(float);
      probs = probs_ = buffer(names::layer(l, "attention.probs"), DType::kF32, Rows::kFixed, bytes);
    }
    std::vector<int> in{qkv, mask_};
    if (opt_.src_mask) in.insert(in.end(), {src_mask_bool_, src_mask_float_});
    add(OpKind::kAttention, names::layer(l, "attention"), l, std::move(in), {ctx, probs}, p);
    return ctx;
  }

  // The weights a linear runs with: its fp16 view where the options dequantize int8 linears.
  const detail::LinearView& weights(const detail::LinearView& w) const {
    return opt_.dequantized ? opt_.dequantized->effective(w) : w;
  }

  int linear(const std::string& label, int l, int in, const detail::LinearView& stored, kernels::Activation act,
             int residual, const std::string& out_name, Rows rows) {
    const detail::LinearView& w = weights(stored);
    LinearParams p{&w, act};
    if (w.dtype == DType::kI8) {
      const int q = buffer(label + ".input_u8", DType::kU8, rows, static_cast<size_t>(kernels::round_up(w.K, kernels::kPanelK)));
      const int scale = buffer(label + ".input_scale", DType::kF32, rows, sizeof(float));
      const int zp = buffer(label + ".input_zero_point", DType::kI32, rows, sizeof(int32_t));
      add(OpKind::kQuantize, label + ".quantize", l, {in}, {q, scale, zp}, QuantizeParams{&w});
      const int out = buffer(out_name, DType::kF32, rows, static_cast<size_t>(w.N) * sizeof(float));
      add(OpKind::kLinear, label, l, {q, residual, scale, zp}, {out}, p);
      return out;
    }
    const int out = buffer(out_name, DType::kF32, rows, static_cast<size_t>(w.N) * sizeof(float));
    add(OpKind::kLinear, label, l, {in, residual, -1, -1}, {out}, p);
    return out;
  }

  int layer_norm(const std::string& label, int l, int x, const detail::NormView* norm, bool in_place) {
    const int y = in_place ? x : rows_f32(label, spec_.hidden);
    add(OpKind::kLayerNorm, label, l, {x}, {y}, LayerNormParams{norm, spec_.layer_norm_eps, spec_.hidden});
    return y;
  }

  int rows_f32(const std::string& name, int width) {
    return buffer(name, DType::kF32, Rows::kTokens, static_cast<size_t>(width) * sizeof(float));
  }
  int sequences_f32(const std::string& name, int width) {
    return buffer(name, DType::kF32, Rows::kSequences, static_cast<size_t>(width) * sizeof(float));
  }
  int buffer(const std::string& name, DType dtype, Rows rows, size_t row_bytes) {
    BufferSpec b;
    b.name = name;
    b.dtype = dtype;
    b.rows = rows;
    b.row_bytes = row_bytes;
    b.max_bytes = row_bytes * max_rows(rows, opt_.max_batch, opt_.max_seq);
    return g_.add_buffer(std::move(b));
  }
  // A [batch, seq] int32 array of the caller's.
  int input(const std::string& name) {
    const int b = buffer(name, DType::kI32, Rows::kTokens, sizeof(int32_t));
    g_.buffers[static_cast<size_t>(b)].storage = Storage::kInput;
    g_.inputs.push_back({name, b, {{Dim::kBatch}, {Dim::kSeq}}});
    return b;
  }
  // A [batch, seq, seq] (or [seq, seq]) array of the caller's: planned at the largest.
  int pair_input(const std::string& name, DType dtype) {
    const int b = buffer(name, dtype, Rows::kPairs, dtype_size(dtype));
    g_.buffers[static_cast<size_t>(b)].storage = Storage::kInput;
    g_.inputs.push_back({name, b, {{Dim::kBatch}, {Dim::kSeq}, {Dim::kSeq}}});
    return b;
  }
  void output(const std::string& name, int buffer, std::vector<Dim> shape) {
    g_.outputs.push_back({name, buffer, std::move(shape)});
  }
  void add(OpKind kind, std::string label, int layer, std::vector<int> inputs, std::vector<int> outputs,
           OpParams params) {
    Op op;
    op.kind = kind;
    op.label = std::move(label);
    op.layer = layer;
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    op.params = params;
    op.head = head_;
    g_.ops.push_back(std::move(op));
  }

  const detail::ModelImpl& model_;
  const detail::EncoderSpec& spec_;
  const EncoderGraphOptions& opt_;
  Graph g_;
  int mask_ = -1;
  int src_mask_bool_ = -1;
  int src_mask_float_ = -1;
  int probs_ = -1;
  bool head_ = false;  // building the task head's ops
};

}  // namespace

Graph build_encoder_graph(const detail::ModelImpl& model, const EncoderGraphOptions& options) {
  return GraphBuilder(model, options).build();
}

}  // namespace encrt::plan
