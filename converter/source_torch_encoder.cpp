// PyTorch nn.TransformerEncoder stacks ("model_type": "torch_encoder"): the state_dict() of a
// module with attributes `embedding` (nn.Embedding) and `transformer_encoder`
// (nn.TransformerEncoder, batch-first or not), optionally all under an "encoder." prefix, plus a
// sinusoidal positional encoding that the converter computes from max_len.
//
// config.json keys:
//   required: model_type, vocab_size, d_model, nhead, num_layers, dim_feedforward, max_len,
//             embedding_scale (true: embeddings * sqrt(d_model), as in PyTorch's tutorial)
//   optional, with nn.TransformerEncoderLayer's defaults: activation ("relu" | "gelu"; "relu"),
//             norm_first (false), layer_norm_eps (1e-5); positional_encoding ("sinusoidal", the
//             only kind)
//   task head, optional, as in the encoder family's design documents: a top-level linear
//             `classifier` (nn.Linear(d_model, num_classes), a text classifier on the pooled
//             output: mean pooling, or --pooling cls / max) or `tag_classifier` (nn.Linear(d_model,
//             num_tags), a per-token tagger for NER); its labels from Hugging Face's keys
//             id2label ({"0": "O", "1": "B-PER", ...}; absent: LABEL_0, LABEL_1, ...), and
//             problem_type (single_label_classification, multi_label_classification, regression)
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "converter/source_common.h"
#include "model/tensor_names.h"

namespace encrt::converter {

namespace {

using nlohmann::json;

Status read_torch_config(SourceConfig* cfg, ConfigReader& r) {
  Status st = r.require({"vocab_size", "d_model", "nhead", "num_layers", "dim_feedforward",
                         "max_len", "embedding_scale"});
  if (!st) return st;
  cfg->architecture = Architecture::kTorchEncoder;
  cfg->layer_norm_eps = 1e-5f;
  bool norm_first = false, scale_embeddings = false;
  std::string activation = "relu", positional = "sinusoidal";
  r.ignore({"model_type", "id2label", "label2id", "num_labels", "problem_type"});  // the head's: read later
  if (!(st = r.get_positive_int("vocab_size", &cfg->vocab_size))) return st;
  if (!(st = r.get_positive_int("d_model", &cfg->hidden_size))) return st;
  if (!(st = r.get_positive_int("nhead", &cfg->num_heads))) return st;
  if (!(st = r.get_positive_int("num_layers", &cfg->num_layers))) return st;
  if (!(st = r.get_positive_int("dim_feedforward", &cfg->ffn_size))) return st;
  if (!(st = r.get_positive_int("max_len", &cfg->max_seq_len))) return st;
  if (!(st = r.get_positive_float("layer_norm_eps", &cfg->layer_norm_eps))) return st;
  if (!(st = r.get_bool("norm_first", &norm_first))) return st;
  if (!(st = r.get_bool("embedding_scale", &scale_embeddings))) return st;
  if (!(st = r.get_string("activation", &activation))) return st;
  if (!(st = r.get_string("positional_encoding", &positional))) return st;
  if (!(st = r.finish())) return st;

  if (activation == "relu") cfg->activation = Activation::kRelu;
  else if (activation == "gelu") cfg->activation = Activation::kGelu;
  else
    return unsupported("unsupported activation '" + activation +
                       "' in config.json (supported: relu, gelu)");
  if (positional != "sinusoidal")
    return unsupported("unsupported positional_encoding '" + positional +
                       "' in config.json (supported: sinusoidal)");
  if (cfg->hidden_size % cfg->num_heads != 0)
    return invalid_model("d_model " + std::to_string(cfg->hidden_size) +
                         " is not a multiple of nhead " + std::to_string(cfg->num_heads));
  if (cfg->hidden_size % 2 != 0)
    return invalid_model("d_model " + std::to_string(cfg->hidden_size) +
                         " is odd; the sinusoidal encoding needs an even d_model");
  // The converter computes the sinusoidal table itself (max_len x d_model floats), so its size is
  // checked before it is allocated: max_len within the runtime's limit (model_loader.cpp), and the
  // table small enough for a model file (FlatBuffers buffers stay below 2 GiB). A max_len of 2^31 - 1
  // used to end the process with std::bad_alloc.
  if (cfg->max_seq_len > (1 << 20))
    return invalid_model("max_len = " + std::to_string(cfg->max_seq_len) + " is out of range (1.." +
                         std::to_string(1 << 20) + ")");
  if (static_cast<uint64_t>(cfg->max_seq_len) * static_cast<uint64_t>(cfg->hidden_size) * sizeof(float) >=
      (uint64_t{1} << 31))
    return invalid_model("max_len " + std::to_string(cfg->max_seq_len) + " x d_model " +
                         std::to_string(cfg->hidden_size) +
                         ": the sinusoidal position table would not fit in a model file (2 GiB)");
  cfg->norm_placement = norm_first ? NormPlacement::kPreNorm : NormPlacement::kPostNorm;
  cfg->positional_encoding = PositionalEncoding::kSinusoidal;
  // PyTorch multiplies by math.sqrt(d_model), a double that meets the fp32 tensor as fp32.
  cfg->embedding_scale =
      scale_embeddings ? static_cast<float>(std::sqrt(static_cast<double>(cfg->hidden_size))) : 1.0f;
  cfg->type_vocab_size = 0;
  cfg->embedding_norm = false;
  return Status::ok();
}

}  // namespace

Status read_torch_encoder_source(const CheckpointSource& source, const json& config,
                                 std::optional<Pooling> pooling, SourceModel* out) {
  SourceConfig cfg;
  ConfigReader r(config, "config.json");
  Status st = read_torch_config(&cfg, r);
  if (!st) return st;
  cfg.pooling = pooling.value_or(Pooling::kMean);
  if (cfg.pooling == Pooling::kPooler)
    return unsupported("pooling 'pooler' needs a BERT pooler; torch_encoder models have none "
                       "(use mean or cls)");

  SafetensorsFile file;
  if (!(st = open_checkpoint(source, &file))) return st;
  TensorLoader loader(file);
  const std::string p = loader.has("encoder.embedding.weight") ? "encoder." : "";
  const std::string enc = p + "transformer_encoder.";

  const int64_t d = cfg.hidden_size, F = cfg.ffn_size;
  std::map<std::string, FloatTensor>& tensors = out->tensors;
  tensors.clear();
  auto put = [&](const std::string& canonical, const std::string& source,
                 std::vector<int64_t> shape) {
    FloatTensor& t = tensors[canonical];
    t.shape = shape;
    return loader.load(source, shape, &t.data);
  };

  if (!(st = put(names::kWordEmbeddings, p + "embedding.weight", {cfg.vocab_size, d}))) return st;
  tensors[names::kPositionEmbeddings] =
      FloatTensor{{cfg.max_seq_len, d}, sinusoidal_position_table(cfg.max_seq_len, cfg.hidden_size)};

  struct Mapping {
    const char* canonical;
    const char* source;  // after "transformer_encoder.layers.L."
    std::vector<int64_t> shape;
  };
  const Mapping mappings[] = {
      {names::kQkvWeight, "self_attn.in_proj_weight", {3 * d, d}},
      {names::kQkvBias, "self_attn.in_proj_bias", {3 * d}},
      {names::kAttnOutWeight, "self_attn.out_proj.weight", {d, d}},
      {names::kAttnOutBias, "self_attn.out_proj.bias", {d}},
      {names::kFfnUpWeight, "linear1.weight", {F, d}},
      {names::kFfnUpBias, "linear1.bias", {F}},
      {names::kFfnDownWeight, "linear2.weight", {d, F}},
      {names::kFfnDownBias, "linear2.bias", {d}},
      {names::kAttnNormWeight, "norm1.weight", {d}},
      {names::kAttnNormBias, "norm1.bias", {d}},
      {names::kFfnNormWeight, "norm2.weight", {d}},
      {names::kFfnNormBias, "norm2.bias", {d}},
  };
  for (int l = 0; l < cfg.num_layers; ++l) {
    const std::string s = enc + "layers." + std::to_string(l) + ".";
    for (const Mapping& m : mappings)
      if (!(st = put(names::layer(l, m.canonical), s + m.source, m.shape))) return st;
  }

  const bool has_final_weight = loader.has(enc + "norm.weight");
  const bool has_final_bias = loader.has(enc + "norm.bias");
  if (has_final_weight || has_final_bias) {
    if (!(st = put(names::kFinalNormWeight, enc + "norm.weight", {d}))) return st;
    if (!(st = put(names::kFinalNormBias, enc + "norm.bias", {d}))) return st;
    cfg.final_norm = true;
  }

  // Leftovers inside the encoder (more layers than num_layers, separate q/k/v projections, ...)
  // mean the checkpoint does not match config.json.
  const std::vector<std::string> unused = loader.unused_with_prefix(enc);
  if (!unused.empty())
    return invalid_model("unexpected tensor '" + unused.front() + "' in " + file.origin() +
                         " (not part of an nn.TransformerEncoder with this config.json)");

  const bool classifier = loader.has("classifier.weight"), tagger = loader.has("tag_classifier.weight");
  if (classifier && tagger)
    return invalid_model(file.origin() + " holds both a classifier and a tag_classifier; a model has one task head");
  int num_labels = 0;
  if (classifier || tagger) {
    cfg.head.kind = classifier ? HeadKind::kSequenceClassification : HeadKind::kTokenClassification;
    cfg.head.pooling = cfg.pooling;
    if (!(st = load_head_classifier(loader, classifier ? "classifier" : "tag_classifier", cfg.hidden_size, out,
                                    &num_labels)))
      return st;
  }
  if (!(st = read_head_labels(r, config, num_labels, &cfg.head))) return st;

  out->config = cfg;
  out->metadata = {{"source", source.dir}, {"source_family", "torch_encoder"}};
  if (source.in_memory) return Status::ok();
  return read_vocabulary(source.dir, cfg.vocab_size, &out->vocabulary);
}

}  // namespace encrt::converter
