// encrt model converter: reads a checkpoint directory (Hugging Face BERT or a PyTorch
// nn.TransformerEncoder stack saved as safetensors) and writes a .encrt file.
//
// Two stages, both public so that other code (calibration/quantization, tests) can reuse them:
//   read_source()  checkpoint directory -> SourceModel (fp32 tensors under canonical names)
//   write_model()  SourceModel -> packed / quantized .encrt file
// convert() runs both.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "encrt/status.hpp"

namespace encrt::converter {

enum class WeightType { kF32, kF16, kI8 };

// "f32", "f16", "i8": the spelling used in the file's metadata and on the command line.
const char* weight_type_name(WeightType type);

struct ConvertOptions {
  std::string source_dir;   // holds config.json + model.safetensors (+ optional vocab.txt,
                            // tokenizer_config.json, 1_Pooling/config.json)
  std::string output_path;  // .encrt file to write (written to a temp file in the same dir, then renamed)
  WeightType weight_type = WeightType::kF32;
  // Per-layer override (index = layer): empty = all layers use weight_type. Lets the quantizer
  // keep chosen layers in fp16. Otherwise it must have exactly one entry per layer.
  std::vector<WeightType> layer_weight_types;
  std::string pooling;  // "", "mean", "cls", "pooler"; "" = the checkpoint's default
  std::vector<std::pair<std::string, std::string>> extra_metadata;  // appended to the metadata
  std::function<void(const std::string&)> log;                     // progress lines; may be empty
  // Progress of long stages (calibration): stage name, steps done, steps in all. May be empty.
  std::function<void(const std::string& stage, int done, int total)> progress;
  // Int8 models: compute Q·Kᵀ and P·V in int8 (true) or keep attention in fp32 (false).
  bool int8_attention = true;
  // Int8 models (see converter/int8_quantizer.h): calibration token ids (.npy [count, seq];
  // "" = synthetic ids), the bar on the smallest pooled-output cosine vs fp32 below which layers
  // are kept in fp16, the SmoothQuant alpha (0 = off), and threads for the calibration runs.
  // calibrate = false skips all of it: plain per-channel int8 weights, no smoothing, no guardrail.
  // Int8 linear weights: 8 bits ([-127, 127] per output channel), or 7 ([-63, 63]) for every
  // linear but the FFN's down projection (model_writer.cpp says why): coarser, but AVX2 CPUs
  // without VNNI multiply them in three instructions instead of four
  // (x86::qu8s7_gemm_6x16__avx2); other CPUs run them at the 8-bit speed. Metadata
  // int8_weight_bits says which; the guardrail measures the accuracy either way.
  int int8_weight_bits = 8;
  bool calibrate = true;
  std::string calibration_ids;
  double min_cosine = 0.99;
  double smoothing_alpha = 0.5;
  int calibration_threads = 2;
  // Sliding-window attention stored in the model's config: > 0, each query attends only the
  // keys within ±attention_window of it; 0 = full attention.
  int attention_window = 0;
  // The task head: "" = the checkpoint's own (a classifier when it has one), "none" = the
  // encoder alone (the classifier's tensors are left out).
  std::string head;
  // Int8 models with a classifier head: the guardrail's bar on the share of calibration
  // decisions (labels, per token for token classification) that agree with fp32.
  double min_label_agreement = 0.99;
  // The head classifier's weight type; empty = weight_type (the guardrail may keep an int8
  // model's head in fp16).
  std::optional<WeightType> head_weight_type;
};

struct QuantizationReport;

// The model hyper-parameters, one field per field of the file's Config table (schema/encrt.fbs)
// minus attention_precision, which the writer derives from the weight type.
enum class Architecture { kBert, kTorchEncoder };
enum class Activation { kGelu, kRelu };  // kGelu is the exact erf GELU
enum class NormPlacement { kPostNorm, kPreNorm };
enum class PositionalEncoding { kLearned, kSinusoidal };
enum class Pooling { kMean, kCls, kPooler, kMax };

// A task head (schema Head): one linear `head.classifier` [num_labels, hidden] after the encoder.
enum class HeadKind { kNone, kSequenceClassification, kTokenClassification };
enum class ProblemType { kSingleLabel, kMultiLabel, kRegression };
enum class ScoreFunction { kSoftmax, kSigmoid, kIdentity };
struct HeadSpec {
  HeadKind kind = HeadKind::kNone;
  ProblemType problem_type = ProblemType::kSingleLabel;
  ScoreFunction score_function = ScoreFunction::kSoftmax;
  std::vector<std::string> labels;  // id2label, by id
  Pooling pooling = Pooling::kMean; // kSequenceClassification: the pooling the classifier reads
  int num_labels() const { return static_cast<int>(labels.size()); }
};

struct SourceConfig {
  Architecture architecture = Architecture::kBert;
  int vocab_size = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_layers = 0;
  int ffn_size = 0;
  Activation activation = Activation::kGelu;
  NormPlacement norm_placement = NormPlacement::kPostNorm;
  float layer_norm_eps = 1e-12f;
  PositionalEncoding positional_encoding = PositionalEncoding::kLearned;
  float embedding_scale = 1.0f;  // token embeddings are multiplied by this
  int max_seq_len = 0;
  int type_vocab_size = 0;  // 0 = no token-type embeddings
  bool embedding_norm = false;
  bool final_norm = false;
  Pooling pooling = Pooling::kMean;
  bool normalize = false;  // the pooled output is L2-normalized (sentence-transformers' Normalize)
  HeadSpec head;           // the file's Model.head (kind kNone: no head)
};

// A dense fp32 tensor, row-major, with its logical shape (a linear weight is [N outputs, K inputs]).
struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;  // product(shape) elements
};

// The tokenizer vocabulary stored in the file (from vocab.txt + tokenizer_config.json).
struct Vocabulary {
  std::vector<std::string> tokens;  // token text by id
  bool do_lower_case = true;
  int32_t unk_id = -1;  // -1: the token is not in the vocabulary
  int32_t cls_id = -1;
  int32_t sep_id = -1;
  int32_t pad_id = -1;
  int32_t mask_id = -1;
  enum class StripAccents { kFollowLowerCase, kKeep, kStrip } strip_accents = StripAccents::kFollowLowerCase;
  bool tokenize_chinese_chars = true;
};

// The checkpoint in the runtime's terms, before packing or quantization.
struct SourceModel {
  SourceConfig config;
  // Exactly the tensors the file will hold (see expected_tensor_shapes), keyed by the canonical
  // names of runtime/src/model/tensor_names.h, unpacked fp32 with logical shapes: BERT's separate
  // Q/K/V projections are already fused into layers.L.attention.qkv.*, and the sinusoidal table of
  // a torch_encoder is already computed.
  std::map<std::string, FloatTensor> tensors;
  std::optional<Vocabulary> vocabulary;  // absent when the checkpoint has no vocab.txt
  // Written to the file's metadata: "source" (the directory) and "source_family" (bert|torch_encoder).
  std::vector<std::pair<std::string, std::string>> metadata;
  // Optional SmoothQuant factors for int8 linear weights, keyed by weight name, one per input
  // channel k (> 0): an int8 weight's column k is multiplied by s[k] before quantization and the
  // file stores 1/s[k] as the tensor's activation_multipliers. Ignored for fp32/fp16 weights.
  std::map<std::string, std::vector<float>> smoothing;
};

// The canonical tensors (name -> logical shape) a model with this config consists of.
std::map<std::string, std::vector<int64_t>> expected_tensor_shapes(const SourceConfig& config);

// Checks the config (positive sizes, hidden % heads == 0, ...) and that `model.tensors` holds
// exactly expected_tensor_shapes(config) with matching shapes and element counts.
Status validate_source_model(const SourceModel& model);

// Reads `source_dir` (config.json "model_type": "bert" or "torch_encoder"). `pooling` and `head`
// are as in ConvertOptions.
Status read_source(const std::string& source_dir, const std::string& pooling, SourceModel* out);
Status read_source(const std::string& source_dir, const std::string& pooling, const std::string& head,
                   SourceModel* out);

// As read_source, from a config.json text and a model.safetensors image in memory (not copied; it
// must stay valid during the call), with no other files: no vocabulary, no sentence-transformers
// modules. For callers that hold a checkpoint in memory, and the converter's fuzz target.
Status read_source_from_memory(const std::string& config_json, const void* safetensors, size_t safetensors_size,
                               const std::string& pooling, const std::string& head, SourceModel* out);

// "none", "sequence_classification", "token_classification"; "mean", "cls", "pooler", "max";
// "single_label", "multi_label", "regression"; "softmax", "sigmoid", "identity".
const char* head_kind_name(HeadKind kind);
const char* pooling_name(Pooling pooling);
const char* problem_type_name(ProblemType type);
const char* score_function_name(ScoreFunction function);

// Packs / quantizes `src` as `options` say (weight_type, layer_weight_types, extra_metadata, log;
// source_dir and pooling are not used) and writes options.output_path.
Status write_model(const SourceModel& src, const ConvertOptions& options);

// As write_model, into memory: `out` holds the finished .encrt buffer.
Status build_model(const SourceModel& src, const ConvertOptions& options, std::vector<uint8_t>* out);

// read_source, then for int8 calibration and the accuracy guardrail (quantize_int8, whose
// report goes to `report` when it is not null), then write_model.
Status convert(const ConvertOptions& options, QuantizationReport* report = nullptr);

}  // namespace encrt::converter
