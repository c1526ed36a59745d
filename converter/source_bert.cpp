// Hugging Face BERT checkpoints ("model_type": "bert"): BertModel weights, optionally under the
// "bert." prefix of the task models. BertForSequenceClassification and BertForTokenClassification
// (by config.json's "architectures") keep their classifier as the file's task head; the heads of
// other task models (cls.* of BertForMaskedLM, ...) are ignored. A sentence-transformers package's
// Pooling and Normalize modules set the pooled output (sentence_transformers.cpp).
#include <string>
#include <vector>

#include "converter/source_common.h"
#include "model/tensor_names.h"

namespace encrt::converter {

namespace {

using nlohmann::json;

// PretrainedConfig / BertConfig keys that do not change what BertModel computes for inference:
// training-only settings, generation settings, task-head labels, bookkeeping.
const std::vector<const char*> kIgnoredBertKeys = {
    "model_type", "architectures", "_name_or_path", "name_or_path", "transformers_version",
    "_commit_hash", "attention_probs_dropout_prob", "hidden_dropout_prob", "classifier_dropout",
    "initializer_range", "gradient_checkpointing", "use_cache", "torch_dtype", "use_bfloat16",
    "tf_legacy_loss", "torchscript", "return_dict", "output_hidden_states", "output_attentions",
    "chunk_size_feed_forward", "tie_word_embeddings", "tie_encoder_decoder",
    "cross_attention_hidden_size", "finetuning_task", "tokenizer_class", "prefix", "task_specific_params", "pad_token_id",
    "bos_token_id", "eos_token_id", "sep_token_id", "decoder_start_token_id", "max_length",
    "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
    "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "output_scores", "return_dict_in_generate", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "exponential_decay_length_penalty",
    "suppress_tokens", "begin_suppress_tokens", "xla_device",
    // Google's original BERT configs (e.g. bert-base-chinese) carry settings of a pooler variant
    // that BertModel never reads.
    "directionality", "pooler_fc_size", "pooler_num_attention_heads", "pooler_num_fc_layers",
    "pooler_size_per_head", "pooler_type",
};

Status read_bert_config(const json& config, SourceConfig* cfg, ConfigReader& r) {
  // Absent keys take BertConfig's defaults, as transformers would.
  cfg->architecture = Architecture::kBert;
  cfg->vocab_size = 30522;
  cfg->hidden_size = 768;
  cfg->num_layers = 12;
  cfg->num_heads = 12;
  cfg->ffn_size = 3072;
  cfg->max_seq_len = 512;
  cfg->type_vocab_size = 2;
  cfg->layer_norm_eps = 1e-12f;
  Status st;
  if (!(st = r.get_positive_int("vocab_size", &cfg->vocab_size))) return st;
  if (!(st = r.get_positive_int("hidden_size", &cfg->hidden_size))) return st;
  if (!(st = r.get_positive_int("num_hidden_layers", &cfg->num_layers))) return st;
  if (!(st = r.get_positive_int("num_attention_heads", &cfg->num_heads))) return st;
  if (!(st = r.get_positive_int("intermediate_size", &cfg->ffn_size))) return st;
  if (!(st = r.get_positive_int("max_position_embeddings", &cfg->max_seq_len))) return st;
  if (!(st = r.get_positive_int("type_vocab_size", &cfg->type_vocab_size))) return st;
  if (!(st = r.get_positive_float("layer_norm_eps", &cfg->layer_norm_eps))) return st;

  std::string act = "gelu";
  if (!(st = r.get_string("hidden_act", &act))) return st;
  if (act == "gelu") cfg->activation = Activation::kGelu;
  else if (act == "relu") cfg->activation = Activation::kRelu;
  else
    return unsupported("unsupported hidden_act '" + act +
                       "' in config.json (supported: gelu = exact erf GELU, relu)");

  std::string position_type = "absolute";
  if (!(st = r.get_string("position_embedding_type", &position_type))) return st;
  if (position_type != "absolute")
    return unsupported("unsupported position_embedding_type '" + position_type +
                       "' in config.json (supported: absolute)");

  for (const char* key : {"is_decoder", "add_cross_attention", "is_encoder_decoder"}) {
    bool value = false;
    if (!(st = r.get_bool(key, &value))) return st;
    if (value) return unsupported("config.json sets '" + std::string(key) +
                                  "': true; only encoder-only BERT models are supported");
  }
  if (r.has("pruned_heads")) {
    const json& pruned = config.at("pruned_heads");
    if (!(pruned.is_null() || (pruned.is_object() && pruned.empty())))
      return unsupported("config.json lists pruned_heads; models with pruned attention heads are "
                         "not supported");
    r.ignore({"pruned_heads"});
  }
  r.ignore(kIgnoredBertKeys);
  r.ignore({"id2label", "label2id", "num_labels", "problem_type"});  // the head's: read_head_labels
  if (!(st = r.finish())) return st;

  if (cfg->hidden_size % cfg->num_heads != 0)
    return invalid_model("hidden_size " + std::to_string(cfg->hidden_size) +
                         " is not a multiple of num_attention_heads " +
                         std::to_string(cfg->num_heads));
  cfg->norm_placement = NormPlacement::kPostNorm;
  cfg->positional_encoding = PositionalEncoding::kLearned;
  cfg->embedding_norm = true;
  cfg->embedding_scale = 1.0f;
  cfg->final_norm = false;
  return Status::ok();
}

// The task head the checkpoint's class has: BertForSequenceClassification (the classifier on the
// pooler output) and BertForTokenClassification (on every token's last hidden state). Other
// classes (BertModel, BertForMaskedLM, ...) convert as the encoder alone, their heads ignored.
HeadKind head_of(const json& config) {
  auto arch = config.find("architectures");
  if (arch == config.end() || !arch->is_array()) return HeadKind::kNone;
  for (const json& a : *arch) {
    if (a == "BertForSequenceClassification") return HeadKind::kSequenceClassification;
    if (a == "BertForTokenClassification") return HeadKind::kTokenClassification;
  }
  return HeadKind::kNone;
}

// Concatenates equally sized blocks row-wise (Q, K, V -> QKV).
std::vector<float> concat(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& c) {
  std::vector<float> out;
  out.reserve(a.size() + b.size() + c.size());
  out.insert(out.end(), a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

}  // namespace

Status read_bert_source(const CheckpointSource& source, const json& config,
                        std::optional<Pooling> pooling, SourceModel* out) {
  SourceConfig cfg;
  ConfigReader r(config, "config.json");
  Status st = read_bert_config(config, &cfg, r);
  if (!st) return st;
  cfg.pooling = pooling.value_or(Pooling::kMean);
  if (!source.in_memory)
    if (!(st = read_sentence_transformers(source.dir, cfg.hidden_size, pooling.has_value(), &cfg.pooling,
                                          &cfg.normalize)))
      return st;
  cfg.head.kind = head_of(config);
  cfg.head.pooling = Pooling::kPooler;  // BertForSequenceClassification: classifier(pooler output)

  SafetensorsFile file;
  if (!(st = open_checkpoint(source, &file))) return st;
  TensorLoader loader(file);
  const std::string p = loader.has("bert.embeddings.word_embeddings.weight") ? "bert." : "";

  const int64_t H = cfg.hidden_size, F = cfg.ffn_size;
  std::map<std::string, FloatTensor>& tensors = out->tensors;
  tensors.clear();
  auto put = [&](const std::string& canonical, const std::string& source,
                 std::vector<int64_t> shape) {
    FloatTensor& t = tensors[canonical];
    t.shape = shape;
    return loader.load(source, shape, &t.data);
  };
  // LayerNorm parameters: "weight"/"bias", or "gamma"/"beta" in checkpoints converted from TF.
  auto put_norm = [&](const std::string& canonical_weight, const std::string& canonical_bias,
                      const std::string& source) {
    FloatTensor& w = tensors[canonical_weight];
    FloatTensor& b = tensors[canonical_bias];
    w.shape = b.shape = {H};
    Status s = loader.load_any({source + ".weight", source + ".gamma"}, {H}, &w.data);
    if (!s) return s;
    return loader.load_any({source + ".bias", source + ".beta"}, {H}, &b.data);
  };

  if (!(st = put(names::kWordEmbeddings, p + "embeddings.word_embeddings.weight",
                 {cfg.vocab_size, H})))
    return st;
  if (!(st = put(names::kPositionEmbeddings, p + "embeddings.position_embeddings.weight",
                 {cfg.max_seq_len, H})))
    return st;
  if (!(st = put(names::kTokenTypeEmbeddings, p + "embeddings.token_type_embeddings.weight",
                 {cfg.type_vocab_size, H})))
    return st;
  if (!(st = put_norm(names::kEmbeddingNormWeight, names::kEmbeddingNormBias,
                      p + "embeddings.LayerNorm")))
    return st;

  for (int l = 0; l < cfg.num_layers; ++l) {
    const std::string s = p + "encoder.layer." + std::to_string(l) + ".";
    std::vector<float> q, k, v;
    if (!(st = loader.load(s + "attention.self.query.weight", {H, H}, &q))) return st;
    if (!(st = loader.load(s + "attention.self.key.weight", {H, H}, &k))) return st;
    if (!(st = loader.load(s + "attention.self.value.weight", {H, H}, &v))) return st;
    tensors[names::layer(l, names::kQkvWeight)] = FloatTensor{{3 * H, H}, concat(q, k, v)};
    if (!(st = loader.load(s + "attention.self.query.bias", {H}, &q))) return st;
    if (!(st = loader.load(s + "attention.self.key.bias", {H}, &k))) return st;
    if (!(st = loader.load(s + "attention.self.value.bias", {H}, &v))) return st;
    tensors[names::layer(l, names::kQkvBias)] = FloatTensor{{3 * H}, concat(q, k, v)};

    if (!(st = put(names::layer(l, names::kAttnOutWeight), s + "attention.output.dense.weight",
                   {H, H})))
      return st;
    if (!(st = put(names::layer(l, names::kAttnOutBias), s + "attention.output.dense.bias", {H})))
      return st;
    if (!(st = put_norm(names::layer(l, names::kAttnNormWeight),
                        names::layer(l, names::kAttnNormBias), s + "attention.output.LayerNorm")))
      return st;
    if (!(st = put(names::layer(l, names::kFfnUpWeight), s + "intermediate.dense.weight", {F, H})))
      return st;
    if (!(st = put(names::layer(l, names::kFfnUpBias), s + "intermediate.dense.bias", {F})))
      return st;
    if (!(st = put(names::layer(l, names::kFfnDownWeight), s + "output.dense.weight", {H, F})))
      return st;
    if (!(st = put(names::layer(l, names::kFfnDownBias), s + "output.dense.bias", {H}))) return st;
    if (!(st = put_norm(names::layer(l, names::kFfnNormWeight), names::layer(l, names::kFfnNormBias),
                        s + "output.LayerNorm")))
      return st;
  }

  int num_labels = 0;
  if (cfg.head.kind != HeadKind::kNone)
    if (!(st = load_head_classifier(loader, "classifier", cfg.hidden_size, out, &num_labels))) return st;
  if (!(st = read_head_labels(r, config, num_labels, &cfg.head))) return st;

  const bool head_reads_pooler = cfg.head.kind == HeadKind::kSequenceClassification;
  if (cfg.pooling == Pooling::kPooler || head_reads_pooler) {
    if (!loader.has(p + "pooler.dense.weight"))
      return invalid_model(std::string(head_reads_pooler ? "the classifier of BertForSequenceClassification reads "
                                                           "the pooler output and needs"
                                                         : "pooling 'pooler' needs") +
                           " the pooler weights, but '" + file.origin() + "' has no tensor '" + p +
                           "pooler.dense.weight'");
    if (!(st = put(names::kPoolerWeight, p + "pooler.dense.weight", {H, H}))) return st;
    if (!(st = put(names::kPoolerBias, p + "pooler.dense.bias", {H}))) return st;
  }

  // Leftovers inside the encoder mean the checkpoint does not match the config (more layers than
  // num_hidden_layers, relative-position tables, ...): converting would silently drop weights.
  // position_ids is a constant buffer [0, 1, ...] that older transformers versions saved.
  for (const char* scope : {"embeddings.", "encoder."})
    for (const std::string& name : loader.unused_with_prefix(p + scope))
      if (name != p + "embeddings.position_ids")
        return invalid_model("unexpected tensor '" + name + "' in " + file.origin() +
                             " (not part of a BertModel with this config.json)");

  out->config = cfg;
  out->metadata = {{"source", source.dir}, {"source_family", "bert"}};
  if (source.in_memory) return Status::ok();
  return read_vocabulary(source.dir, cfg.vocab_size, &out->vocabulary);
}

}  // namespace encrt::converter
