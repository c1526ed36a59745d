// The converter's entry points: read_source (dispatch on config.json's model_type), the checks
// every SourceModel must pass before it is written, and convert().
#include "converter/convert.h"
#include "converter/calibration.h"
#include "converter/int8_quantizer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "converter/source_common.h"
#include "model/tensor_names.h"

namespace encrt::converter {

const char* weight_type_name(WeightType type) {
  switch (type) {
    case WeightType::kF32: return "f32";
    case WeightType::kF16: return "f16";
    case WeightType::kI8: return "i8";
  }
  return "unknown";
}

std::map<std::string, std::vector<int64_t>> expected_tensor_shapes(const SourceConfig& c) {
  const int64_t H = c.hidden_size, F = c.ffn_size;
  std::map<std::string, std::vector<int64_t>> shapes;
  shapes[names::kWordEmbeddings] = {c.vocab_size, H};
  shapes[names::kPositionEmbeddings] = {c.max_seq_len, H};
  if (c.type_vocab_size > 0) shapes[names::kTokenTypeEmbeddings] = {c.type_vocab_size, H};
  if (c.embedding_norm) {
    shapes[names::kEmbeddingNormWeight] = {H};
    shapes[names::kEmbeddingNormBias] = {H};
  }
  for (int l = 0; l < c.num_layers; ++l) {
    shapes[names::layer(l, names::kQkvWeight)] = {3 * H, H};
    shapes[names::layer(l, names::kQkvBias)] = {3 * H};
    shapes[names::layer(l, names::kAttnOutWeight)] = {H, H};
    shapes[names::layer(l, names::kAttnOutBias)] = {H};
    shapes[names::layer(l, names::kAttnNormWeight)] = {H};
    shapes[names::layer(l, names::kAttnNormBias)] = {H};
    shapes[names::layer(l, names::kFfnUpWeight)] = {F, H};
    shapes[names::layer(l, names::kFfnUpBias)] = {F};
    shapes[names::layer(l, names::kFfnDownWeight)] = {H, F};
    shapes[names::layer(l, names::kFfnDownBias)] = {H};
    shapes[names::layer(l, names::kFfnNormWeight)] = {H};
    shapes[names::layer(l, names::kFfnNormBias)] = {H};
  }
  if (c.final_norm) {
    shapes[names::kFinalNormWeight] = {H};
    shapes[names::kFinalNormBias] = {H};
  }
  const bool head_reads_pooler = c.head.kind == HeadKind::kSequenceClassification && c.head.pooling == Pooling::kPooler;
  if (c.pooling == Pooling::kPooler || head_reads_pooler) {
    shapes[names::kPoolerWeight] = {H, H};
    shapes[names::kPoolerBias] = {H};
  }
  if (c.head.kind != HeadKind::kNone) {
    shapes[names::kHeadClassifierWeight] = {c.head.num_labels(), H};
    shapes[names::kHeadClassifierBias] = {c.head.num_labels()};
  }
  return shapes;
}

namespace {

Status check_range(const char* what, int value, int lo, int hi) {
  if (value < lo || value > hi)
    return invalid_model(std::string(what) + " = " + std::to_string(value) + " is out of range (" +
                         std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return Status::ok();
}

// The limits are the runtime's (model/model_loader.cpp), so that a file written here loads there.
Status check_config(const SourceConfig& c) {
  Status st;
  if (!(st = check_range("vocab_size", c.vocab_size, 1, 1 << 24))) return st;
  if (!(st = check_range("hidden_size", c.hidden_size, 1, 1 << 16))) return st;
  if (!(st = check_range("num_heads", c.num_heads, 1, 1024))) return st;
  if (!(st = check_range("num_layers", c.num_layers, 1, 1024))) return st;
  if (!(st = check_range("ffn_size", c.ffn_size, 1, 1 << 18))) return st;
  if (!(st = check_range("max_seq_len", c.max_seq_len, 1, 1 << 20))) return st;
  if (!(st = check_range("type_vocab_size", c.type_vocab_size, 0, 1 << 16))) return st;
  if (c.hidden_size % c.num_heads != 0)
    return invalid_model("hidden_size " + std::to_string(c.hidden_size) +
                         " is not a multiple of num_heads " + std::to_string(c.num_heads));
  if (!(std::isfinite(c.layer_norm_eps) && c.layer_norm_eps > 0.0f))
    return invalid_model("layer_norm_eps must be a positive number");
  if (!std::isfinite(c.embedding_scale)) return invalid_model("embedding_scale is not finite");
  if (c.head.kind != HeadKind::kNone) {
    if (Status st = check_range("the head's num_labels", c.head.num_labels(), 1, 1 << 16); !st) return st;
    if (c.head.kind == HeadKind::kTokenClassification && c.head.problem_type != ProblemType::kSingleLabel)
      return unsupported(std::string("a token classification head with problem_type ") +
                         problem_type_name(c.head.problem_type) + " (token classifiers are single-label)");
  }
  return Status::ok();
}

}  // namespace

Status validate_source_model(const SourceModel& model) {
  Status st = check_config(model.config);
  if (!st) return st;
  const auto expected = expected_tensor_shapes(model.config);
  for (const auto& [name, shape] : expected) {
    auto it = model.tensors.find(name);
    if (it == model.tensors.end()) return invalid_model("missing tensor '" + name + "'");
    if (it->second.shape != shape)
      return invalid_model("tensor '" + name + "' has shape " + shape_string(it->second.shape) +
                           ", expected " + shape_string(shape));
    size_t numel = 1;
    for (int64_t d : shape) numel *= static_cast<size_t>(d);
    if (it->second.data.size() != numel)
      return invalid_model("tensor '" + name + "' holds " + std::to_string(it->second.data.size()) +
                           " values, its shape " + shape_string(shape) + " needs " +
                           std::to_string(numel));
  }
  for (const auto& entry : model.tensors)
    if (expected.count(entry.first) == 0)
      return invalid_model("unexpected tensor '" + entry.first + "' (not part of a model with this "
                           "config)");
  if (model.vocabulary) {
    const Vocabulary& v = *model.vocabulary;
    const int64_t n = static_cast<int64_t>(v.tokens.size());
    if (n > model.config.vocab_size)
      return invalid_model("the vocabulary has " + std::to_string(n) + " tokens, more than vocab_size " +
                           std::to_string(model.config.vocab_size));
    for (int32_t id : {v.unk_id, v.cls_id, v.sep_id, v.pad_id, v.mask_id})
      if (id < -1 || id >= n)
        return invalid_model("special token id " + std::to_string(id) +
                             " is outside the vocabulary of " + std::to_string(n) + " tokens");
  }
  return Status::ok();
}

// --head none: the encoder alone, without the classifier (and the pooler, when only the head read it).
static void drop_head(SourceModel* model) {
  SourceConfig& c = model->config;
  c.head = HeadSpec();
  const auto keep = expected_tensor_shapes(c);
  for (auto it = model->tensors.begin(); it != model->tensors.end();)
    it = keep.count(it->first) ? std::next(it) : model->tensors.erase(it);
}

Status read_source(const std::string& source_dir, const std::string& pooling, SourceModel* out) {
  return read_source(source_dir, pooling, "", out);
}

namespace {

// --pooling and --head, checked before any file is read.
Status parse_source_options(const std::string& pooling, const std::string& head,
                            std::optional<Pooling>* pooling_choice) {
  if (!head.empty() && head != "none")
    return invalid_argument("unknown head option '" + head + "' (expected none, or nothing for the checkpoint's own)");
  return parse_pooling_option(pooling, pooling_choice);
}

// The part of reading a source after config.json is parsed: dispatch on model_type, --head, the
// checks. `config_name` names config.json in messages.
Status read_parsed_source(const CheckpointSource& source, const nlohmann::json& config, const std::string& config_name,
                          std::optional<Pooling> pooling_choice, const std::string& head, SourceModel* out) {
  if (!config.is_object()) return invalid_model("'" + config_name + "' is not a JSON object");
  auto type = config.find("model_type");
  if (type == config.end() || !type->is_string())
    return invalid_model("'" + config_name + "' has no \"model_type\" string");
  const std::string model_type = type->get<std::string>();

  Status st;
  if (model_type == "bert") st = read_bert_source(source, config, pooling_choice, out);
  else if (model_type == "torch_encoder")
    st = read_torch_encoder_source(source, config, pooling_choice, out);
  else
    st = unsupported("unknown model_type '" + model_type + "' in config.json (supported: bert, "
                     "torch_encoder)");
  if (!st) {
    *out = SourceModel();
    return st;
  }
  if (head == "none") drop_head(out);
  return validate_source_model(*out);
}

}  // namespace

Status read_source(const std::string& source_dir, const std::string& pooling, const std::string& head,
                   SourceModel* out) {
  if (out == nullptr) return invalid_argument("read_source: output is null");
  *out = SourceModel();
  std::optional<Pooling> pooling_choice;
  if (Status st = parse_source_options(pooling, head, &pooling_choice); !st) return st;
  const std::string config_path = join_path(source_dir, "config.json");
  if (!file_exists(config_path)) return io_error("no config.json in '" + source_dir + "'");
  nlohmann::json config;
  if (Status st = load_json_file(config_path, &config); !st) return st;
  CheckpointSource source;
  source.dir = source_dir;
  return read_parsed_source(source, config, config_path, pooling_choice, head, out);
}

Status read_source_from_memory(const std::string& config_json, const void* safetensors, size_t safetensors_size,
                               const std::string& pooling, const std::string& head, SourceModel* out) {
  if (out == nullptr) return invalid_argument("read_source_from_memory: output is null");
  *out = SourceModel();
  if (safetensors == nullptr && safetensors_size > 0)
    return invalid_argument("read_source_from_memory: safetensors is null but its size is " +
                            std::to_string(safetensors_size));
  std::optional<Pooling> pooling_choice;
  if (Status st = parse_source_options(pooling, head, &pooling_choice); !st) return st;
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return invalid_model("'<memory>/config.json' is not valid JSON");
  CheckpointSource source;
  source.dir = "<memory>";
  source.in_memory = true;
  source.safetensors = safetensors;
  source.safetensors_size = safetensors_size;
  return read_parsed_source(source, config, "<memory>/config.json", pooling_choice, head, out);
}

Status convert(const ConvertOptions& options_in, QuantizationReport* report_out) {
  ConvertOptions options = options_in;
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  const auto start = std::chrono::steady_clock::now();
  log("reading " + options.source_dir);
  SourceModel model;
  Status st = read_source(options.source_dir, options.pooling, options.head, &model);
  if (!st) return st;
  const SourceConfig& c = model.config;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char timing[32];
  std::snprintf(timing, sizeof timing, "%.2f", secs);
  log(std::string(c.architecture == Architecture::kBert ? "bert" : "torch_encoder") + ": " +
      std::to_string(c.num_layers) + " layers, hidden " + std::to_string(c.hidden_size) +
      ", heads " + std::to_string(c.num_heads) + ", ffn " + std::to_string(c.ffn_size) +
      ", vocab " + std::to_string(c.vocab_size) + ", pooling " + pooling_name(c.pooling) +
      (c.normalize ? " + normalize" : "") +
      (c.head.kind == HeadKind::kNone
           ? std::string(", no head")
           : std::string(", head ") + head_kind_name(c.head.kind) + " (" + std::to_string(c.head.num_labels()) +
                 " labels, " + problem_type_name(c.head.problem_type) + ", scores " +
                 score_function_name(c.head.score_function) + ")") +
      (model.vocabulary ? ", " + std::to_string(model.vocabulary->tokens.size()) + " tokens"
                        : std::string(", no vocab.txt")) +
      " (read in " + timing + " s)");
  if (options.weight_type == WeightType::kI8 && options.calibrate) {
    CalibrationSet cal;
    if (!options.calibration_ids.empty()) {
      if (!(st = load_calibration_ids(options.calibration_ids, model, &cal))) return st;
    } else {
      cal = synthetic_calibration(model);
    }
    QuantizationReport report;
    if (!(st = quantize_int8(&model, &options, cal, &report))) return st;
    log(report.to_text());
    std::string fp16_layers;
    for (int l : report.fp16_layers) fp16_layers += (fp16_layers.empty() ? "" : ",") + std::to_string(l);
    auto fixed = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6f", v);
      return std::string(buf);
    };
    options.extra_metadata.insert(
        options.extra_metadata.end(),
        {{"quantization", "int8 weights symmetric per output channel; activations asymmetric uint8 per token "
                          "row; SmoothQuant alpha " + fixed(options.smoothing_alpha) + "; attention " +
                          (options.int8_attention ? "int8" : "float")},
         {"calibration", report.calibration},
         {"calibration_pooled_cosine_mean", fixed(report.pooled_mean_cosine)},
         {"calibration_pooled_cosine_min", fixed(report.pooled_min_cosine)},
         {"calibration_min_cosine_bar", fixed(options.min_cosine)},
         {"fp16_layers", fp16_layers.empty() ? "none" : fp16_layers}});
    if (!report.head_decisions.empty())
      options.extra_metadata.insert(
          options.extra_metadata.end(),
          {{"calibration_head_decisions", report.head_decisions + " (" + std::to_string(report.head_decision_count) + ")"},
           {"calibration_label_agreement", fixed(report.label_agreement)},
           {"calibration_label_agreement_int8_only", fixed(report.int8_only_label_agreement)},
           {"calibration_max_logit_error", fixed(report.max_logit_error)},
           {"calibration_logit_rms", fixed(report.logit_rms)},
           {"calibration_min_label_agreement_bar", fixed(options.min_label_agreement)}});
    if (report_out) *report_out = report;
  }
  return write_model(model, options);
}

}  // namespace encrt::converter
