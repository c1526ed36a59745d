#include "converter/source_common.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

namespace encrt::converter {

using nlohmann::json;

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status load_json_file(const std::string& path, json* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error("cannot read '" + path + "'");
  *out = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return invalid_model("'" + path + "' is not valid JSON");
  return Status::ok();
}

// --- ConfigReader ---

bool ConfigReader::has(const char* key) const { return config_.find(key) != config_.end(); }

Status ConfigReader::require(const std::vector<const char*>& keys) const {
  for (const char* k : keys)
    if (!has(k)) return invalid_model("missing config key '" + std::string(k) + "' in " + file_name_);
  return Status::ok();
}

const json* ConfigReader::find(const char* key) {
  seen_.insert(key);
  auto it = config_.find(key);
  return it == config_.end() ? nullptr : &*it;
}

Status ConfigReader::type_error(const char* key, const char* expected) const {
  return invalid_model("config key '" + std::string(key) + "' in " + file_name_ + " must be " +
                       expected + ", got " + config_.at(key).dump());
}

Status ConfigReader::get_positive_int(const char* key, int* out) {
  const json* v = find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_number_integer() || v->get<int64_t>() <= 0 ||
      v->get<int64_t>() > std::numeric_limits<int>::max())
    return type_error(key, "a positive integer");
  *out = static_cast<int>(v->get<int64_t>());
  return Status::ok();
}

Status ConfigReader::get_non_negative_int(const char* key, int* out) {
  const json* v = find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_number_integer() || v->get<int64_t>() < 0 ||
      v->get<int64_t>() > std::numeric_limits<int>::max())
    return type_error(key, "a non-negative integer");
  *out = static_cast<int>(v->get<int64_t>());
  return Status::ok();
}

Status ConfigReader::get_positive_float(const char* key, float* out) {
  const json* v = find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_number() || !(v->get<double>() > 0.0) || !std::isfinite(v->get<double>()))
    return type_error(key, "a positive number");
  *out = static_cast<float>(v->get<double>());
  return Status::ok();
}

Status ConfigReader::get_bool(const char* key, bool* out) {
  const json* v = find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_boolean()) return type_error(key, "true or false");
  *out = v->get<bool>();
  return Status::ok();
}

Status ConfigReader::get_string(const char* key, std::string* out) {
  const json* v = find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_string()) return type_error(key, "a string");
  *out = v->get<std::string>();
  return Status::ok();
}

void ConfigReader::ignore(const std::vector<const char*>& keys) {
  for (const char* k : keys) seen_.insert(k);
}

Status ConfigReader::finish() const {
  for (auto it = config_.begin(); it != config_.end(); ++it)
    if (seen_.count(it.key()) == 0)
      return unsupported("unknown config key '" + it.key() + "' in " + file_name_);
  return Status::ok();
}

// --- TensorLoader ---

Status TensorLoader::load(const std::string& name, const std::vector<int64_t>& shape,
                          std::vector<float>* out) {
  const SafetensorsTensor* t = file_.find(name);
  if (t == nullptr) return invalid_model("missing tensor '" + name + "' in " + file_.origin());
  if (t->shape != shape)
    return invalid_model("tensor '" + name + "' has shape " + shape_string(t->shape) +
                         ", expected " + shape_string(shape));
  Status st = file_.read_float(*t, out);
  if (!st) return st;
  for (size_t i = 0; i < out->size(); ++i)
    if (!std::isfinite((*out)[i]))
      return invalid_model("tensor '" + name + "' holds a non-finite value (" +
                           std::to_string((*out)[i]) + ") at flat index " + std::to_string(i));
  used_.insert(name);
  return Status::ok();
}

Status TensorLoader::load_any(const std::vector<std::string>& names,
                              const std::vector<int64_t>& shape, std::vector<float>* out) {
  for (const std::string& n : names)
    if (has(n)) return load(n, shape, out);
  return load(names.front(), shape, out);  // reports the preferred name as missing
}

std::vector<std::string> TensorLoader::unused_with_prefix(const std::string& prefix) const {
  std::vector<std::string> names;
  for (const SafetensorsTensor& t : file_.tensors())
    if (t.name.compare(0, prefix.size(), prefix) == 0 && used_.count(t.name) == 0)
      names.push_back(t.name);
  return names;
}

// --- checkpoint, vocabulary, pooling ---

Status open_checkpoint(const CheckpointSource& source, SafetensorsFile* file) {
  if (source.in_memory)
    return file->parse(source.safetensors, source.safetensors_size, join_path(source.dir, "model.safetensors"));
  const std::string& source_dir = source.dir;
  const std::string path = join_path(source_dir, "model.safetensors");
  if (!file_exists(path)) {
    if (file_exists(join_path(source_dir, "model.safetensors.index.json")))
      return unsupported("'" + source_dir +
                         "' holds a sharded checkpoint (model.safetensors.index.json); "
                         "the converter reads a single model.safetensors");
    if (file_exists(join_path(source_dir, "pytorch_model.bin")))
      return unsupported("'" + source_dir +
                         "' holds pytorch_model.bin but no model.safetensors; save the weights "
                         "with safetensors (e.g. save_pretrained(..., safe_serialization=True))");
    return io_error("no model.safetensors in '" + source_dir + "'");
  }
  return file->open(path);
}

namespace {

// A special token in tokenizer_config.json: a string or an AddedToken object {"content": ...}.
std::string special_token(const json& tokenizer_config, const char* key, const char* fallback) {
  auto it = tokenizer_config.find(key);
  if (it == tokenizer_config.end()) return fallback;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) return c->get<std::string>();
  }
  return fallback;
}

}  // namespace

Status read_vocabulary(const std::string& source_dir, int vocab_size,
                       std::optional<Vocabulary>* out) {
  out->reset();
  const std::string vocab_path = join_path(source_dir, "vocab.txt");
  if (!file_exists(vocab_path)) return Status::ok();
  std::ifstream in(vocab_path, std::ios::binary);
  if (!in) return io_error("cannot open '" + vocab_path + "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error("cannot read '" + vocab_path + "'");

  // One token per line, as transformers' load_vocab reads it (text mode: "\r\n" ends a line too).
  Vocabulary vocab;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    size_t end = nl;
    if (end > pos && text[end - 1] == '\r') --end;
    vocab.tokens.emplace_back(text, pos, end - pos);
    pos = nl + 1;
  }
  if (vocab.tokens.empty()) return invalid_model("'" + vocab_path + "' is empty");
  if (static_cast<int64_t>(vocab.tokens.size()) > vocab_size)
    return invalid_model("'" + vocab_path + "' has " + std::to_string(vocab.tokens.size()) +
                         " tokens but the model's vocab_size is " + std::to_string(vocab_size));

  json tokenizer_config = json::object();
  const std::string tc_path = join_path(source_dir, "tokenizer_config.json");
  if (file_exists(tc_path)) {
    Status st = load_json_file(tc_path, &tokenizer_config);
    if (!st) return st;
    if (!tokenizer_config.is_object())
      return invalid_model("'" + tc_path + "' is not a JSON object");
    auto lc = tokenizer_config.find("do_lower_case");
    if (lc != tokenizer_config.end()) {
      if (!lc->is_boolean())
        return invalid_model("'do_lower_case' in '" + tc_path + "' must be true or false");
      vocab.do_lower_case = lc->get<bool>();
    }
    auto sa = tokenizer_config.find("strip_accents");
    if (sa != tokenizer_config.end() && !sa->is_null()) {
      if (!sa->is_boolean())
        return invalid_model("'strip_accents' in '" + tc_path + "' must be true, false or null");
      vocab.strip_accents = sa->get<bool>() ? Vocabulary::StripAccents::kStrip : Vocabulary::StripAccents::kKeep;
    }
    auto cc = tokenizer_config.find("tokenize_chinese_chars");
    if (cc != tokenizer_config.end()) {
      if (!cc->is_boolean())
        return invalid_model("'tokenize_chinese_chars' in '" + tc_path + "' must be true or false");
      vocab.tokenize_chinese_chars = cc->get<bool>();
    }
  }
  // Later duplicates win, as in the tokenizer's token -> id dictionary.
  auto id_of = [&](const std::string& token) {
    int32_t id = -1;
    for (size_t i = 0; i < vocab.tokens.size(); ++i)
      if (vocab.tokens[i] == token) id = static_cast<int32_t>(i);
    return id;
  };
  vocab.unk_id = id_of(special_token(tokenizer_config, "unk_token", "[UNK]"));
  vocab.cls_id = id_of(special_token(tokenizer_config, "cls_token", "[CLS]"));
  vocab.sep_id = id_of(special_token(tokenizer_config, "sep_token", "[SEP]"));
  vocab.pad_id = id_of(special_token(tokenizer_config, "pad_token", "[PAD]"));
  vocab.mask_id = id_of(special_token(tokenizer_config, "mask_token", "[MASK]"));
  *out = std::move(vocab);
  return Status::ok();
}

Status parse_pooling_option(const std::string& pooling, std::optional<Pooling>* out) {
  if (pooling.empty()) out->reset();
  else if (pooling == "mean") *out = Pooling::kMean;
  else if (pooling == "cls") *out = Pooling::kCls;
  else if (pooling == "pooler") *out = Pooling::kPooler;
  else if (pooling == "max") *out = Pooling::kMax;
  else
    return invalid_argument("unknown pooling '" + pooling + "' (expected mean, cls, pooler or max)");
  return Status::ok();
}

std::vector<float> sinusoidal_position_table(int max_len, int d_model) {
  // PyTorch: div_term = exp(arange(0, d, 2).float() * (-ln(10000) / d)), the scalar rounded to
  // fp32 first; angle = position * div_term in fp32; pe[:, 0::2] = sin, pe[:, 1::2] = cos.
  const float factor = static_cast<float>(-std::log(10000.0) / d_model);
  std::vector<float> div_term(static_cast<size_t>(d_model + 1) / 2);
  for (size_t i = 0; i < div_term.size(); ++i)
    div_term[i] = std::exp(static_cast<float>(2 * i) * factor);
  std::vector<float> pe(static_cast<size_t>(max_len) * d_model);
  for (int pos = 0; pos < max_len; ++pos) {
    float* row = pe.data() + static_cast<size_t>(pos) * d_model;
    for (size_t i = 0; i < div_term.size(); ++i) {
      const float angle = static_cast<float>(pos) * div_term[i];
      row[2 * i] = std::sin(angle);
      if (2 * i + 1 < static_cast<size_t>(d_model)) row[2 * i + 1] = std::cos(angle);
    }
  }
  return pe;
}

}  // namespace encrt::converter
