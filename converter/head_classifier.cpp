// Task heads of a checkpoint: the classifier linear and Hugging Face's label configuration
// (id2label, problem_type), shared by the BERT and torch_encoder readers.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "converter/source_common.h"
#include "model/tensor_names.h"

namespace encrt::converter {

using nlohmann::json;

const char* head_kind_name(HeadKind kind) {
  switch (kind) {
    case HeadKind::kNone: return "none";
    case HeadKind::kSequenceClassification: return "sequence_classification";
    case HeadKind::kTokenClassification: return "token_classification";
  }
  return "unknown";
}

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kPooler: return "pooler";
    case Pooling::kMax: return "max";
  }
  return "unknown";
}

const char* problem_type_name(ProblemType type) {
  switch (type) {
    case ProblemType::kSingleLabel: return "single_label";
    case ProblemType::kMultiLabel: return "multi_label";
    case ProblemType::kRegression: return "regression";
  }
  return "unknown";
}

const char* score_function_name(ScoreFunction function) {
  switch (function) {
    case ScoreFunction::kSoftmax: return "softmax";
    case ScoreFunction::kSigmoid: return "sigmoid";
    case ScoreFunction::kIdentity: return "identity";
  }
  return "unknown";
}

Status load_head_classifier(TensorLoader& loader, const std::string& source, int hidden, SourceModel* out,
                            int* num_labels) {
  const std::string weight = source + ".weight", bias = source + ".bias";
  const std::vector<int64_t>* shape = loader.shape_of(weight);
  if (shape == nullptr) return invalid_model("missing tensor '" + weight + "' (the classifier of the task head)");
  if (shape->size() != 2 || (*shape)[1] != hidden || (*shape)[0] < 1 || (*shape)[0] > 1 << 16)
    return invalid_model("tensor '" + weight + "' has shape " + shape_string(*shape) + ", expected [num_labels, " +
                         std::to_string(hidden) + "] with 1 <= num_labels <= 65536");
  const int64_t n = (*shape)[0];
  FloatTensor& w = out->tensors[names::kHeadClassifierWeight];
  w.shape = {n, hidden};
  if (Status s = loader.load(weight, w.shape, &w.data); !s) return s;
  FloatTensor& b = out->tensors[names::kHeadClassifierBias];
  b.shape = {n};
  if (Status s = loader.load(bias, b.shape, &b.data); !s) return s;
  *num_labels = static_cast<int>(n);
  return Status::ok();
}

namespace {

// id2label {"0": "NEG", "1": "POS"}: keys are the ids 0 .. n-1, each exactly once.
Status parse_id2label(const json& value, std::vector<std::string>* labels) {
  if (!value.is_object() || value.empty())
    return invalid_model("config key 'id2label' must be a non-empty object {\"0\": \"LABEL\", ...}, got " + value.dump());
  std::map<long, std::string> by_id;
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    char* end = nullptr;
    const long id = std::strtol(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id < 0 || id >= static_cast<long>(value.size()))
      return invalid_model("config key 'id2label' has the key '" + key + "'; its keys must be the label ids 0.." +
                           std::to_string(value.size() - 1));
    if (!it->is_string()) return invalid_model("id2label['" + key + "'] must be a string, got " + it->dump());
    if (!by_id.emplace(id, it->get<std::string>()).second)
      return invalid_model("config key 'id2label' names label id " + key + " twice");
  }
  labels->clear();
  for (const auto& [id, name] : by_id) labels->push_back(name);
  return Status::ok();
}

}  // namespace

Status read_head_labels(ConfigReader& r, const json& config, int num_labels, HeadSpec* head) {
  r.ignore({"id2label", "label2id", "num_labels", "problem_type"});
  if (head->kind == HeadKind::kNone) return Status::ok();
  head->labels.clear();
  if (r.has("id2label")) {
    if (Status s = parse_id2label(config.at("id2label"), &head->labels); !s) return s;
  } else {
    for (int i = 0; i < num_labels; ++i) head->labels.push_back("LABEL_" + std::to_string(i));
  }
  if (head->num_labels() != num_labels)
    return invalid_model("config.json's id2label names " + std::to_string(head->num_labels()) +
                         " labels, but the classifier has " + std::to_string(num_labels) + " outputs");
  if (r.has("num_labels")) {
    const json& n = config.at("num_labels");
    if (!n.is_number_integer() || n.get<int64_t>() != num_labels)
      return invalid_model("config key 'num_labels' is " + n.dump() + ", but the classifier has " +
                           std::to_string(num_labels) + " outputs");
  }
  std::string problem;
  if (r.has("problem_type") && !config.at("problem_type").is_null()) {
    if (!config.at("problem_type").is_string())
      return invalid_model("config key 'problem_type' must be a string or null, got " + config.at("problem_type").dump());
    problem = config.at("problem_type").get<std::string>();
  }
  if (problem.empty()) head->problem_type = num_labels == 1 ? ProblemType::kRegression : ProblemType::kSingleLabel;
  else if (problem == "single_label_classification") head->problem_type = ProblemType::kSingleLabel;
  else if (problem == "multi_label_classification") head->problem_type = ProblemType::kMultiLabel;
  else if (problem == "regression") head->problem_type = ProblemType::kRegression;
  else
    return unsupported("unknown problem_type '" + problem + "' in config.json (supported: single_label_classification, "
                       "multi_label_classification, regression)");
  // As transformers' text-classification pipeline chooses its function_to_apply; its
  // token-classification pipeline always takes the softmax.
  if (head->kind == HeadKind::kTokenClassification) head->score_function = ScoreFunction::kSoftmax;
  else if (head->problem_type == ProblemType::kMultiLabel || num_labels == 1) head->score_function = ScoreFunction::kSigmoid;
  else head->score_function = ScoreFunction::kSoftmax;
  return Status::ok();
}

}  // namespace encrt::converter
