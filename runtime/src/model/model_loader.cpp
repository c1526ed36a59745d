// Loading a .encrt buffer: FlatBuffers verification (every offset and length is in bounds), then
// encrt's semantic checks (config values, every tensor the graph needs present with the right
// shape, dtype, layout and size). Only after both does anything read the data.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "kernels/kernel_types.h"
#include "model/checksums.h"
#include "model/model_impl.h"
#include "model/tensor_names.h"

namespace encrt::detail {

namespace {

constexpr int kMaxDim = 1 << 20;

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ']';
  return s.str();
}

std::vector<int64_t> tensor_shape(const fb::Tensor& t) {
  std::vector<int64_t> shape;
  if (t.shape())
    for (int64_t d : *t.shape()) shape.push_back(d);
  return shape;
}

size_t file_dtype_size(fb::DType d) {
  switch (d) {
    case fb::DType::F32: case fb::DType::I32: return 4;
    case fb::DType::F16: return 2;
    case fb::DType::I8: return 1;
  }
  return 0;
}

DType runtime_dtype(fb::DType d) {
  switch (d) {
    case fb::DType::F32: return DType::kF32;
    case fb::DType::F16: return DType::kF16;
    case fb::DType::I8: return DType::kI8;
    case fb::DType::I32: return DType::kI32;
  }
  return DType::kF32;
}

class Validator {
 public:
  explicit Validator(const fb::Model* root) : root_(root) {}

  Status find(const std::string& name, const fb::Tensor** out) const {
    const auto* tensors = root_->tensors();
    const fb::Tensor* t = tensors ? tensors->LookupByKey(name.c_str()) : nullptr;
    if (!t) return invalid_model("missing tensor '" + name + "'");
    *out = t;
    return Status::ok();
  }

  // Checks shape, and that the data holds exactly the bytes the dtype and layout need.
  Status check(const fb::Tensor& t, const std::vector<int64_t>& expected_shape, fb::DType dtype,
               fb::Layout layout) const {
    const std::string name = t.name()->str();
    const std::vector<int64_t> shape = tensor_shape(t);
    if (shape != expected_shape)
      return invalid_model("tensor '" + name + "' has shape " + shape_string(shape) + ", expected " +
                           shape_string(expected_shape));
    if (t.dtype() != dtype)
      return invalid_model("tensor '" + name + "' has dtype " + fb::EnumNameDType(t.dtype()) +
                           ", expected " + fb::EnumNameDType(dtype));
    if (t.layout() != layout)
      return invalid_model("tensor '" + name + "' has layout " + fb::EnumNameLayout(t.layout()) +
                           ", expected " + fb::EnumNameLayout(layout));
    // In 64 bits: the config allows shapes (vocab_size x hidden_size, ffn_size x hidden_size) whose
    // bytes overflow a 32-bit size_t, and a wrapped count could match a crafted tensor's size. The
    // shape equals the expected one, whose dimensions are positive ints: no 64-bit overflow.
    uint64_t elements = 1;
    if (layout == fb::Layout::PanelN16)
      elements = static_cast<uint64_t>(kernels::round_up(static_cast<int>(shape[0]), kernels::kPanelN)) *
                 static_cast<uint64_t>(shape[1]);
    else if (layout == fb::Layout::PanelN16K4)
      elements = static_cast<uint64_t>(kernels::round_up(static_cast<int>(shape[0]), kernels::kPanelN)) *
                 static_cast<uint64_t>(kernels::round_up(static_cast<int>(shape[1]), kernels::kPanelK));
    else
      for (int64_t d : shape) elements *= static_cast<uint64_t>(d);
    const uint64_t bytes = elements * file_dtype_size(dtype);
    const uint64_t have = t.data() ? t.data()->size() : 0;
    if (have != bytes)
      return invalid_model("tensor '" + name + "' holds " + std::to_string(have) + " bytes, expected " +
                           std::to_string(bytes));
    if (reinterpret_cast<uintptr_t>(t.data()->data()) % 64 != 0)
      return invalid_model("tensor '" + name + "' data is not 64-byte aligned");
    return Status::ok();
  }

  // The column sums of an int8 PanelN16K4 weight against the weights they summarize: the GEMMs
  // subtract zero_point · w_sum[n] from Σ q · W(n, k), so a sum that is not Σ_k W(n, k) gives
  // wrong outputs (and, as the file gave it, any int32: the product overflowed). One pass over
  // the panels, in memory order. Also gives the weights' largest |w| (-128 counting as 128),
  // which decides the int8 GEMMs that may run them (LinearView::max_abs_weight).
  Status column_sums(const fb::Tensor& t, int N, int K, int* max_abs) const {
    const int8_t* w = reinterpret_cast<const int8_t*>(t.data()->data());
    const int32_t* sums = t.column_sums()->data();
    const int K4 = (K + kernels::kPanelK - 1) / kernels::kPanelK;
    // Per panel: the sums of each of a group's 64 byte positions over the whole groups (contiguous,
    // so the loop vectorizes), then of the 4 positions of each column; |Σ| <= 128 · K, no overflow.
    constexpr int kGroupBytes = kernels::kPanelN * kernels::kPanelK;
    const int whole = K / kernels::kPanelK;
    int32_t position_sums[kGroupBytes], panel_sums[kernels::kPanelN];
    *max_abs = 0;
    for (int p = 0; p * kernels::kPanelN < N; ++p) {
      const int8_t* panel = w + static_cast<size_t>(p) * K4 * kGroupBytes;
      std::fill(position_sums, position_sums + kGroupBytes, 0);
      for (int g = 0; g < whole; ++g)
        for (int b = 0; b < kGroupBytes; ++b) position_sums[b] += panel[static_cast<size_t>(g) * kGroupBytes + b];
      uint8_t most = static_cast<uint8_t>(*max_abs);
      for (size_t i = 0; i < static_cast<size_t>(K4) * kGroupBytes; ++i) {
        const int v = panel[i];
        const auto a = static_cast<uint8_t>(v < 0 ? -v : v);
        most = a > most ? a : most;
      }
      *max_abs = most;
      for (int c = 0; c < kernels::kPanelN; ++c) {
        panel_sums[c] = 0;
        for (int i = 0; i < kernels::kPanelK; ++i) panel_sums[c] += position_sums[c * kernels::kPanelK + i];
        for (int i = 0; i < K - whole * kernels::kPanelK; ++i)  // the last, partial group
          panel_sums[c] += panel[static_cast<size_t>(whole) * kGroupBytes + c * kernels::kPanelK + i];
      }
      const int columns = std::min(kernels::kPanelN, N - p * kernels::kPanelN);
      for (int c = 0; c < columns; ++c) {
        const int n = p * kernels::kPanelN + c;
        if (panel_sums[c] != sums[n])
          return invalid_model("tensor '" + t.name()->str() + "': column sum " + std::to_string(n) + " is " +
                               std::to_string(sums[n]) + ", but its weights sum to " + std::to_string(panel_sums[c]));
      }
    }
    return Status::ok();
  }

  Status per_channel(const fb::Tensor& t, size_t n, bool need_sums) const {
    const std::string name = t.name()->str();
    if (!t.scales() || t.scales()->size() != n)
      return invalid_model("tensor '" + name + "' needs " + std::to_string(n) + " scales");
    for (float s : *t.scales())
      if (!(std::isfinite(s) && s > 0.0f)) return invalid_model("tensor '" + name + "' has a non-positive or non-finite scale");
    if (need_sums && (!t.column_sums() || t.column_sums()->size() != n))
      return invalid_model("tensor '" + name + "' needs " + std::to_string(n) + " column sums");
    return Status::ok();
  }

  Status vector_f32(const std::string& name, int n, const float** out) const {
    const fb::Tensor* t = nullptr;
    if (Status s = find(name, &t); !s) return s;
    if (Status s = check(*t, {n}, fb::DType::F32, fb::Layout::RowMajor); !s) return s;
    *out = reinterpret_cast<const float*>(t->data()->data());
    return Status::ok();
  }

  Status norm(const std::string& prefix_weight, const std::string& prefix_bias, int n, NormView* out) const {
    if (Status s = vector_f32(prefix_weight, n, &out->gamma); !s) return s;
    return vector_f32(prefix_bias, n, &out->beta);
  }

  Status linear(const std::string& weight, const std::string& bias, int N, int K, LinearView* out) const {
    const fb::Tensor* t = nullptr;
    if (Status s = find(weight, &t); !s) return s;
    const fb::Layout layout = t->dtype() == fb::DType::I8 ? fb::Layout::PanelN16K4 : fb::Layout::PanelN16;
    if (t->dtype() != fb::DType::F32 && t->dtype() != fb::DType::F16 && t->dtype() != fb::DType::I8)
      return invalid_model("tensor '" + weight + "' has unsupported dtype " + fb::EnumNameDType(t->dtype()));
    if (Status s = check(*t, {N, K}, t->dtype(), layout); !s) return s;
    if (t->dtype() == fb::DType::I8) {
      if (Status s = per_channel(*t, static_cast<size_t>(N), true); !s) return s;
      if (Status s = column_sums(*t, N, K, &out->max_abs_weight); !s) return s;
      out->scales = t->scales()->data();
      out->column_sums = t->column_sums()->data();
      if (const auto* m = t->activation_multipliers()) {
        if (m->size() != static_cast<size_t>(K))
          return invalid_model("tensor '" + weight + "' needs " + std::to_string(K) + " activation multipliers, has " +
                               std::to_string(m->size()));
        for (float v : *m)
          if (!(std::isfinite(v) && v > 0.0f))
            return invalid_model("tensor '" + weight + "' has a non-positive or non-finite activation multiplier");
        out->activation_multipliers = m->data();
      }
    }
    out->dtype = runtime_dtype(t->dtype());
    out->packed = t->data()->data();
    out->packed_bytes = t->data()->size();
    out->N = N;
    out->K = K;
    return vector_f32(bias, N, &out->bias);
  }

  Status table(const std::string& name, int rows, int width, bool allow_i8, TableView* out) const {
    const fb::Tensor* t = nullptr;
    if (Status s = find(name, &t); !s) return s;
    const bool ok_dtype = t->dtype() == fb::DType::F32 || t->dtype() == fb::DType::F16 ||
                          (allow_i8 && t->dtype() == fb::DType::I8);
    if (!ok_dtype) return invalid_model("tensor '" + name + "' has unsupported dtype " + fb::EnumNameDType(t->dtype()));
    if (Status s = check(*t, {rows, width}, t->dtype(), fb::Layout::RowMajor); !s) return s;
    if (t->dtype() == fb::DType::I8) {
      if (Status s = per_channel(*t, static_cast<size_t>(rows), false); !s) return s;
      out->row_scales = t->scales()->data();
    }
    out->dtype = runtime_dtype(t->dtype());
    out->data = t->data()->data();
    out->rows = rows;
    out->width = width;
    return Status::ok();
  }

 private:
  const fb::Model* root_;
};

// FlatBuffers 2.0.8's verifier checks a vector's 4-byte length for alignment, not its elements:
// a crafted file can place a vector of 8-byte scalars 4 bytes off, and reading it (as FlatBuffers'
// accessors do, by plain loads) is then a misaligned load, undefined behaviour. Every vector of
// 8-byte elements in the schema is checked here, before anything reads one. (Tensor.shape is the
// only one; a new [long], [ulong] or [double] field must be added.)
Status check_vector_alignment(const fb::Model* root) {
  if (!root->tensors()) return Status::ok();
  for (const fb::Tensor* t : *root->tensors()) {
    if (t->shape() && reinterpret_cast<uintptr_t>(t->shape()->data()) % alignof(int64_t) != 0)
      return invalid_model("tensor '" + (t->name() ? t->name()->str() : std::string()) +
                           "': its shape is not 8-byte aligned (a corrupt or crafted file)");
  }
  return Status::ok();
}

Status check_config(const fb::Config* c) {
  auto positive = [](int v, int limit, const char* what) -> Status {
    if (v <= 0 || v > limit)
      return invalid_model(std::string("config ") + what + " = " + std::to_string(v) + " is out of range (1.." +
                           std::to_string(limit) + ")");
    return Status::ok();
  };
  if (Status s = positive(c->vocab_size(), 1 << 24, "vocab_size"); !s) return s;
  if (Status s = positive(c->hidden_size(), 1 << 16, "hidden_size"); !s) return s;
  if (Status s = positive(c->num_heads(), 1024, "num_heads"); !s) return s;
  if (Status s = positive(c->num_layers(), 1024, "num_layers"); !s) return s;
  if (Status s = positive(c->ffn_size(), 1 << 18, "ffn_size"); !s) return s;
  if (Status s = positive(c->max_seq_len(), kMaxDim, "max_seq_len"); !s) return s;
  if (c->type_vocab_size() < 0 || c->type_vocab_size() > 1 << 16)
    return invalid_model("config type_vocab_size is out of range");
  if (c->hidden_size() % c->num_heads() != 0)
    return invalid_model("config hidden_size " + std::to_string(c->hidden_size()) + " is not divisible by num_heads " +
                         std::to_string(c->num_heads()));
  if (!(std::isfinite(c->layer_norm_eps()) && c->layer_norm_eps() > 0.0f))
    return invalid_model("config layer_norm_eps must be positive");
  if (!std::isfinite(c->embedding_scale())) return invalid_model("config embedding_scale is not finite");
  // The verifier checks offsets, not enum ranges.
  if (c->architecture() < fb::Architecture::MIN || c->architecture() > fb::Architecture::MAX)
    return invalid_model("config architecture has an unknown value");
  if (c->activation() < fb::Activation::MIN || c->activation() > fb::Activation::MAX)
    return invalid_model("config activation has an unknown value");
  if (c->norm_placement() < fb::NormPlacement::MIN || c->norm_placement() > fb::NormPlacement::MAX)
    return invalid_model("config norm_placement has an unknown value");
  if (c->positional_encoding() < fb::PositionalEncoding::MIN || c->positional_encoding() > fb::PositionalEncoding::MAX)
    return invalid_model("config positional_encoding has an unknown value");
  if (c->pooling() < fb::Pooling::MIN || c->pooling() > fb::Pooling::MAX)
    return invalid_model("config pooling has an unknown value");
  if (c->attention_precision() < fb::AttentionPrecision::MIN || c->attention_precision() > fb::AttentionPrecision::MAX)
    return invalid_model("config attention_precision has an unknown value");
  if (c->attention_window() < 0 || c->attention_window() > kMaxDim)
    return invalid_model("config attention_window = " + std::to_string(c->attention_window()) +
                         " is out of range (0 = full attention, else 1.." + std::to_string(kMaxDim) + ")");
  return Status::ok();
}

const char* pooling_name(fb::Pooling p) {
  switch (p) {
    case fb::Pooling::Mean: return "mean";
    case fb::Pooling::Cls: return "cls";
    case fb::Pooling::Pooler: return "pooler";
    case fb::Pooling::Max: return "max";
  }
  return "unknown";
}

Pooling runtime_pooling(fb::Pooling p) {
  switch (p) {
    case fb::Pooling::Mean: return Pooling::kMean;
    case fb::Pooling::Cls: return Pooling::kCls;
    case fb::Pooling::Pooler: return Pooling::kPooler;
    case fb::Pooling::Max: return Pooling::kMax;
  }
  return Pooling::kMean;
}

// The head table's enums and labels (its classifier is checked with the other tensors).
Status check_head(const fb::Head* h) {
  if (h->kind() < fb::HeadKind::MIN || h->kind() > fb::HeadKind::MAX) return invalid_model("head kind has an unknown value");
  if (h->problem_type() < fb::ProblemType::MIN || h->problem_type() > fb::ProblemType::MAX)
    return invalid_model("head problem_type has an unknown value");
  if (h->score_function() < fb::ScoreFunction::MIN || h->score_function() > fb::ScoreFunction::MAX)
    return invalid_model("head score_function has an unknown value");
  if (h->pooling() < fb::Pooling::MIN || h->pooling() > fb::Pooling::MAX) return invalid_model("head pooling has an unknown value");
  if (!h->labels() || h->labels()->size() < 1 || h->labels()->size() > (1u << 16))
    return invalid_model("the head has " + std::to_string(h->labels() ? h->labels()->size() : 0) +
                         " labels (it needs 1..65536: its classifier's outputs)");
  for (const flatbuffers::String* label : *h->labels())
    if (!label) return invalid_model("the head has a null label");
  return Status::ok();
}

HeadInfo to_head_info(const fb::Head* h) {
  HeadInfo info;
  info.kind = h->kind() == fb::HeadKind::TokenClassification ? "token_classification" : "sequence_classification";
  info.problem_type = h->problem_type() == fb::ProblemType::SingleLabel  ? "single_label"
                      : h->problem_type() == fb::ProblemType::MultiLabel ? "multi_label"
                                                                         : "regression";
  info.score_function = h->score_function() == fb::ScoreFunction::Softmax   ? "softmax"
                        : h->score_function() == fb::ScoreFunction::Sigmoid ? "sigmoid"
                                                                            : "identity";
  info.pooling = pooling_name(h->pooling());
  for (const flatbuffers::String* label : *h->labels()) info.labels.push_back(label->str());
  return info;
}

ModelConfig to_model_config(const fb::Config* c) {
  ModelConfig m;
  m.architecture = c->architecture() == fb::Architecture::Bert ? "bert" : "torch_encoder";
  m.vocab_size = c->vocab_size();
  m.hidden_size = c->hidden_size();
  m.num_heads = c->num_heads();
  m.num_layers = c->num_layers();
  m.ffn_size = c->ffn_size();
  m.activation = c->activation() == fb::Activation::Gelu ? "gelu" : "relu";
  m.pre_norm = c->norm_placement() == fb::NormPlacement::PreNorm;
  m.layer_norm_eps = c->layer_norm_eps();
  m.positional_encoding = c->positional_encoding() == fb::PositionalEncoding::Learned ? "learned" : "sinusoidal";
  m.embedding_scale = c->embedding_scale();
  m.max_seq_len = c->max_seq_len();
  m.type_vocab_size = c->type_vocab_size();
  m.embedding_norm = c->embedding_norm();
  m.final_norm = c->final_norm();
  m.pooling = pooling_name(c->pooling());
  m.normalize = c->normalize();
  m.attention_precision = c->attention_precision() == fb::AttentionPrecision::Int8 ? "int8" : "float";
  m.attention_window = c->attention_window();
  return m;
}

EncoderSpec to_encoder_spec(const fb::Config* c) {
  EncoderSpec e;
  e.vocab_size = c->vocab_size();
  e.hidden = c->hidden_size();
  e.heads = c->num_heads();
  e.layers = c->num_layers();
  e.ffn = c->ffn_size();
  e.max_seq = c->max_seq_len();
  e.type_vocab = c->type_vocab_size();
  e.activation = c->activation() == fb::Activation::Gelu ? kernels::Activation::kGelu : kernels::Activation::kRelu;
  e.pre_norm = c->norm_placement() == fb::NormPlacement::PreNorm;
  e.embedding_norm = c->embedding_norm();
  e.final_norm = c->final_norm();
  e.pooling = runtime_pooling(c->pooling());
  e.normalize = c->normalize();
  e.int8_attention = c->attention_precision() == fb::AttentionPrecision::Int8;
  e.layer_norm_eps = c->layer_norm_eps();
  e.embedding_scale = c->embedding_scale();
  e.attention_window = c->attention_window();
  return e;
}

}  // namespace

Status verify_model_buffer(const unsigned char* data, size_t size, const std::string& origin, const fb::Model** out) {
  const std::string where = "'" + origin + "': ";
  if (size < 8) return invalid_model(where + "file is too small to be a model (" + std::to_string(size) + " bytes)");
  if (!fb::ModelBufferHasIdentifier(data))
    return invalid_model(where + "not an encrt model (file identifier is not \"ENCR\")");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) return invalid_model(where + "file is larger than 2 GiB");
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/64, /*max_tables=*/1000000,
                                 /*check_alignment=*/true);
  if (!fb::VerifyModelBuffer(verifier))
    return invalid_model(where + "FlatBuffers verification failed (truncated or corrupt file)");
  const fb::Model* root = fb::GetModel(data);
  if (Status s = check_vector_alignment(root); !s) return invalid_model(where + s.message());
  *out = root;
  return Status::ok();
}

Status load_model_buffer(const unsigned char* data, size_t size, const std::string& origin, ModelImpl* impl,
                         const LoadOptions& options) {
  const std::string where = "'" + origin + "': ";
  const fb::Model* root = nullptr;
  if (Status s = verify_model_buffer(data, size, origin, &root); !s) return s;
  // Before any check reads the data: a damaged weight is then reported as damage, by name, and not
  // as whatever semantic check it happens to fail (an int8 weight's column sums, a scale).
  if (options.verify_checksums) {
    ChecksumReport report;
    check_checksums(data, size, root, &report);
    if (Status s = require_checksums(report, where); !s) return s;
  }
  if (root->format_version() == 0 || root->format_version() > names::kFormatVersion)
    return invalid_model(where + "format version " + std::to_string(root->format_version()) +
                         " is not supported (this build reads up to " + std::to_string(names::kFormatVersion) + ")");
  const fb::Config* c = root->config();
  if (Status s = check_config(c); !s) return invalid_model(where + s.message());
  const fb::Head* head = root->head();
  if (head)
    if (Status s = check_head(head); !s) return invalid_model(where + s.message());

  impl->data = data;
  impl->size = size;
  impl->root = root;
  impl->config = to_model_config(c);
  impl->spec = to_encoder_spec(c);
  const ModelConfig& cfg = impl->config;
  const int H = cfg.hidden_size, F = cfg.ffn_size;

  Validator v(root);
  auto fail = [&](const Status& s) { return invalid_model(where + s.message()); };
  if (Status s = v.table(names::kWordEmbeddings, cfg.vocab_size, H, true, &impl->word); !s) return fail(s);
  if (Status s = v.table(names::kPositionEmbeddings, cfg.max_seq_len, H, false, &impl->position); !s) return fail(s);
  if (cfg.type_vocab_size > 0)
    if (Status s = v.table(names::kTokenTypeEmbeddings, cfg.type_vocab_size, H, false, &impl->token_type); !s)
      return fail(s);
  if (cfg.embedding_norm)
    if (Status s = v.norm(names::kEmbeddingNormWeight, names::kEmbeddingNormBias, H, &impl->embedding_norm); !s)
      return fail(s);
  if (cfg.final_norm)
    if (Status s = v.norm(names::kFinalNormWeight, names::kFinalNormBias, H, &impl->final_norm); !s) return fail(s);
  impl->layers.resize(static_cast<size_t>(cfg.num_layers));
  for (int l = 0; l < cfg.num_layers; ++l) {
    LayerView& L = impl->layers[static_cast<size_t>(l)];
    auto n = [l](const char* rest) { return names::layer(l, rest); };
    Status s = v.linear(n(names::kQkvWeight), n(names::kQkvBias), 3 * H, H, &L.qkv);
    if (s) s = v.linear(n(names::kAttnOutWeight), n(names::kAttnOutBias), H, H, &L.attn_out);
    if (s) s = v.linear(n(names::kFfnUpWeight), n(names::kFfnUpBias), F, H, &L.ffn_up);
    if (s) s = v.linear(n(names::kFfnDownWeight), n(names::kFfnDownBias), H, F, &L.ffn_down);
    if (s) s = v.norm(n(names::kAttnNormWeight), n(names::kAttnNormBias), H, &L.attn_norm);
    if (s) s = v.norm(n(names::kFfnNormWeight), n(names::kFfnNormBias), H, &L.ffn_norm);
    if (!s) return fail(s);
  }
  if (head) {
    HeadView& h = impl->head;
    h.kind = head->kind() == fb::HeadKind::TokenClassification ? HeadKind::kTokenClassification
                                                               : HeadKind::kSequenceClassification;
    h.scores = head->score_function() == fb::ScoreFunction::Softmax   ? ScoreFunction::kSoftmax
               : head->score_function() == fb::ScoreFunction::Sigmoid ? ScoreFunction::kSigmoid
                                                                      : ScoreFunction::kIdentity;
    h.argmax_labels = head->problem_type() == fb::ProblemType::SingleLabel;
    h.pooling = runtime_pooling(head->pooling());
    impl->head_info = to_head_info(head);
    const int labels = static_cast<int>(head->labels()->size());
    if (Status s = v.linear(names::kHeadClassifierWeight, names::kHeadClassifierBias, labels, H, &h.classifier); !s)
      return fail(s);
  }
  const bool head_reads_pooler = impl->head.kind == HeadKind::kSequenceClassification && impl->head.pooling == Pooling::kPooler;
  if (impl->spec.pooling == Pooling::kPooler || head_reads_pooler)
    if (Status s = v.linear(names::kPoolerWeight, names::kPoolerBias, H, H, &impl->pooler); !s) return fail(s);

  if (const fb::Vocabulary* vocab = root->vocabulary(); vocab && vocab->tokens()) {
    const int64_t n = vocab->tokens()->size();
    if (n > cfg.vocab_size)
      return fail(invalid_model("the vocabulary has " + std::to_string(n) + " tokens, more than vocab_size " +
                                std::to_string(cfg.vocab_size)));
    for (int32_t id : {vocab->unk_id(), vocab->cls_id(), vocab->sep_id(), vocab->pad_id(), vocab->mask_id()})
      if (id < -1 || id >= n)
        return fail(invalid_model("vocabulary: special token id " + std::to_string(id) + " is outside its " +
                                  std::to_string(n) + " tokens"));
    const fb::StripAccents strip = vocab->strip_accents();
    if (strip != fb::StripAccents::FollowLowerCase && strip != fb::StripAccents::Keep &&
        strip != fb::StripAccents::Strip)
      return fail(invalid_model("vocabulary: unknown strip_accents value " +
                                std::to_string(static_cast<int>(strip))));
    impl->vocabulary.reserve(static_cast<size_t>(n));
    for (const flatbuffers::String* tok : *vocab->tokens()) impl->vocabulary.push_back(tok ? tok->str() : std::string());
    TokenizerInfo& t = impl->tokenizer;
    t.lowercase = vocab->do_lower_case();
    t.strip_accents = strip == fb::StripAccents::FollowLowerCase ? t.lowercase : strip == fb::StripAccents::Strip;
    t.chinese_chars = vocab->tokenize_chinese_chars();
    t.unk_id = vocab->unk_id(), t.cls_id = vocab->cls_id(), t.sep_id = vocab->sep_id();
    t.pad_id = vocab->pad_id(), t.mask_id = vocab->mask_id();
  }
  return Status::ok();
}

}  // namespace encrt::detail
