// sentence-transformers packages: modules.json lists the modules SentenceTransformer.encode runs
// after the Transformer (Pooling, Normalize, ...); 1_Pooling/config.json says how the Pooling
// module pools. encrt reproduces Transformer -> Pooling (mean, cls, max) [-> Normalize].
#include <string>
#include <vector>

#include "converter/source_common.h"

namespace encrt::converter {

namespace {

using nlohmann::json;

constexpr const char* kModulePrefix = "sentence_transformers.models.";

// A Pooling module's config.json: exactly one of the modes encrt runs.
Status read_pooling_config(const std::string& path, int hidden_size, Pooling* pooling) {
  json pc;
  if (Status st = load_json_file(path, &pc); !st) return st;
  if (!pc.is_object()) return invalid_model("'" + path + "' is not a JSON object");
  auto dim = pc.find("word_embedding_dimension");
  if (dim != pc.end() && !(dim->is_number_integer() && dim->get<int64_t>() == hidden_size))
    return invalid_model("'" + path + "' has word_embedding_dimension " + dim->dump() +
                         " but the model's hidden_size is " + std::to_string(hidden_size));
  std::vector<std::string> enabled;
  for (auto it = pc.begin(); it != pc.end(); ++it) {
    const std::string& key = it.key();
    if (key.compare(0, 13, "pooling_mode_") != 0) continue;
    if (!it->is_boolean()) return invalid_model("'" + key + "' in '" + path + "' must be true or false");
    if (it->get<bool>()) enabled.push_back(key.substr(13));
  }
  const bool one = enabled.size() == 1;
  if (one && enabled[0] == "mean_tokens") *pooling = Pooling::kMean;
  else if (one && enabled[0] == "cls_token") *pooling = Pooling::kCls;
  else if (one && enabled[0] == "max_tokens") *pooling = Pooling::kMax;
  else {
    std::string list;
    for (const std::string& e : enabled) list += (list.empty() ? "" : ", ") + e;
    return unsupported("'" + path + "' selects pooling {" + list +
                       "}; encrt supports exactly one of mean_tokens, cls_token or max_tokens (choose mean, cls, "
                       "max or pooler explicitly to override)");
  }
  return Status::ok();
}

}  // namespace

Status read_sentence_transformers(const std::string& source_dir, int hidden_size, bool pooling_chosen,
                                  Pooling* pooling, bool* normalize) {
  *normalize = false;
  const std::string modules_path = join_path(source_dir, "modules.json");
  if (!file_exists(modules_path)) {
    // A package without modules.json (older layouts): its Pooling module alone.
    const std::string path = join_path(source_dir, "1_Pooling/config.json");
    if (pooling_chosen || !file_exists(path)) return Status::ok();
    return read_pooling_config(path, hidden_size, pooling);
  }
  json modules;
  if (Status st = load_json_file(modules_path, &modules); !st) return st;
  if (!modules.is_array() || modules.empty())
    return invalid_model("'" + modules_path + "' must be a non-empty array of modules");
  // SentenceTransformer runs the modules in the file's order.
  bool seen_transformer = false, seen_pooling = false;
  for (const json& m : modules) {
    auto type = m.is_object() ? m.find("type") : m.end();
    auto path = m.is_object() ? m.find("path") : m.end();
    if (!m.is_object() || type == m.end() || !type->is_string() || (path != m.end() && !path->is_string()))
      return invalid_model("'" + modules_path + "': every module needs a \"type\" string (and a \"path\" string), got " +
                           m.dump());
    const std::string t = type->get<std::string>();
    const std::string name = t.compare(0, 29, kModulePrefix) == 0 ? t.substr(29) : t;
    const std::string dir = path == m.end() ? "" : path->get<std::string>();
    if (name == "Transformer" && !seen_transformer && !seen_pooling) {
      seen_transformer = true;
    } else if (name == "Pooling" && seen_transformer && !seen_pooling && !*normalize) {
      seen_pooling = true;
      if (!pooling_chosen)
        if (Status st = read_pooling_config(join_path(join_path(source_dir, dir), "config.json"), hidden_size, pooling); !st)
          return st;
    } else if (name == "Normalize" && seen_pooling && !*normalize) {
      *normalize = true;
    } else {
      return unsupported("'" + modules_path + "' has the module " + t + (seen_pooling ? " after Pooling" : "") +
                         "; encrt reproduces Transformer, Pooling (mean, cls, max) and Normalize, in that order");
    }
  }
  if (!seen_transformer)
    return unsupported("'" + modules_path + "' has no sentence_transformers.models.Transformer module");
  return Status::ok();
}

}  // namespace encrt::converter
