// Pieces shared by the checkpoint readers (source_bert.cpp, source_torch_encoder.cpp): typed and
// tracked access to config.json, checked tensor loading from model.safetensors, vocabulary and
// pooling files. Internal to the converter.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "converter/convert.h"
#include "converter/safetensors_reader.h"

namespace encrt::converter {

std::string shape_string(const std::vector<int64_t>& shape);
std::string join_path(const std::string& dir, const std::string& name);
bool file_exists(const std::string& path);

// Parses a JSON file; a missing file is an IoError, bad JSON an InvalidModel error.
Status load_json_file(const std::string& path, nlohmann::json* out);

// Reads the keys of a config object with type checks, remembering which keys were read so that
// finish() can reject keys nobody interpreted (a typo or an option this converter does not know
// would otherwise be silently dropped).
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& config, std::string file_name)
      : config_(config), file_name_(std::move(file_name)) {}

  bool has(const char* key) const;
  // Error naming the first of `keys` that is absent.
  Status require(const std::vector<const char*>& keys) const;
  // The get_* calls leave *out unchanged when the key is absent (so it keeps its default).
  // Integers must be JSON integers (not 384.0) and > 0 (>= 0 for get_non_negative_int).
  Status get_positive_int(const char* key, int* out);
  Status get_non_negative_int(const char* key, int* out);
  Status get_positive_float(const char* key, float* out);
  Status get_bool(const char* key, bool* out);
  Status get_string(const char* key, std::string* out);
  // Marks keys that are known not to affect inference.
  void ignore(const std::vector<const char*>& keys);
  // Error for the first key neither read nor ignored: "unknown config key 'X' in config.json".
  Status finish() const;

 private:
  const nlohmann::json* find(const char* key);
  Status type_error(const char* key, const char* expected) const;

  const nlohmann::json& config_;
  std::string file_name_;
  std::set<std::string> seen_;
};

// Loads named tensors from a safetensors file as fp32 with shape checks, remembering which were
// used so that the reader can find unexpected leftovers.
class TensorLoader {
 public:
  explicit TensorLoader(const SafetensorsFile& file) : file_(file) {}

  bool has(const std::string& name) const { return file_.find(name) != nullptr; }
  // The stored shape of `name`, or null when the file has no such tensor.
  const std::vector<int64_t>* shape_of(const std::string& name) const {
    const SafetensorsTensor* t = file_.find(name);
    return t ? &t->shape : nullptr;
  }
  // Missing tensor, wrong shape, non-float dtype and non-finite values are errors naming `name`.
  Status load(const std::string& name, const std::vector<int64_t>& shape, std::vector<float>* out);
  // As load() for the first of `names` that exists (e.g. LayerNorm "weight" or legacy "gamma").
  Status load_any(const std::vector<std::string>& names, const std::vector<int64_t>& shape,
                  std::vector<float>* out);
  // Tensors whose name starts with `prefix` that no load() consumed.
  std::vector<std::string> unused_with_prefix(const std::string& prefix) const;

 private:
  const SafetensorsFile& file_;
  std::set<std::string> used_;
};

// Where a family reader finds a checkpoint's files: a directory (model.safetensors and the optional
// vocab.txt, tokenizer_config.json and sentence-transformers files), or a model.safetensors image
// held in memory with no other files (read_source_from_memory).
struct CheckpointSource {
  std::string dir;  // the directory; in memory, the name that messages and the metadata give it
  bool in_memory = false;
  const void* safetensors = nullptr;  // in memory: the image, not copied (it outlives the read)
  size_t safetensors_size = 0;
};

// Opens dir/model.safetensors (with a helpful error for other checkpoint layouts), or parses the
// in-memory image.
Status open_checkpoint(const CheckpointSource& source, SafetensorsFile* file);

// Reads source_dir/vocab.txt if present (else leaves `out` empty), with do_lower_case and the
// special-token ids from tokenizer_config.json. Fails if the vocabulary exceeds vocab_size.
Status read_vocabulary(const std::string& source_dir, int vocab_size,
                       std::optional<Vocabulary>* out);

// "mean" | "cls" | "pooler" | "max" -> Pooling; "" -> nullopt (the family's default).
Status parse_pooling_option(const std::string& pooling, std::optional<Pooling>* out);

// Family readers. `config` is the parsed config.json; `pooling` nullopt = family default. An
// in-memory source has no vocabulary and no sentence-transformers modules.
Status read_bert_source(const CheckpointSource& source, const nlohmann::json& config,
                        std::optional<Pooling> pooling, SourceModel* out);
Status read_torch_encoder_source(const CheckpointSource& source, const nlohmann::json& config,
                                 std::optional<Pooling> pooling, SourceModel* out);

// ---- Task heads (head_classifier.cpp).

// Loads a classifier linear `<source>.weight` [num_labels, hidden] + `<source>.bias` into
// out->tensors as head.classifier.*; *num_labels is its row count.
Status load_head_classifier(TensorLoader& loader, const std::string& source, int hidden, SourceModel* out,
                            int* num_labels);

// Hugging Face's task-head keys of a config.json object (id2label, label2id, num_labels,
// problem_type): marked as read in `r` whether or not the model has a head. With a head
// (head->kind set, `num_labels` from the classifier's weight), fills head->labels, problem_type
// and score_function the way transformers' pipelines do: id2label when present, else LABEL_0 ...
// (transformers' own default names); problem_type null -> regression for one label, else
// single_label; scores: sigmoid for multi_label or one label, else softmax; token classification
// always softmax. Labels that do not match the classifier, unknown problem types and malformed
// id2label are errors.
Status read_head_labels(ConfigReader& r, const nlohmann::json& config, int num_labels, HeadSpec* head);

// ---- sentence-transformers packages (sentence_transformers.cpp).

// When `source_dir` is a sentence-transformers package (modules.json, or a 1_Pooling/config.json
// alone): the Pooling module's mode (mean, cls, max; *pooling is left alone when `pooling_chosen`)
// and whether a Normalize module follows it. Modules encrt cannot reproduce (Dense, other
// pooling modes, ...) are errors that name them. Without such files: nothing changes.
Status read_sentence_transformers(const std::string& source_dir, int hidden_size, bool pooling_chosen,
                                  Pooling* pooling, bool* normalize);

// The PyTorch-tutorial sinusoidal table [max_len, d_model], computed in fp32 as PyTorch does.
std::vector<float> sinusoidal_position_table(int max_len, int d_model);

}  // namespace encrt::converter
