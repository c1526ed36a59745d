#include "encrt/encrt.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

struct encrt_model {
  std::unique_ptr<encrt::Model> model;
  encrt::HeadInfo head;  // for the const char* the C API hands out (empty without a head)
};
struct encrt_tokenizer {
  std::unique_ptr<encrt::Tokenizer> tokenizer;
};
struct encrt_session {
  std::unique_ptr<encrt::Session> session;
  const encrt::Model* model = nullptr;
  std::vector<std::string> output_names;  // for the const char* the C API hands out
  mutable std::vector<std::string> devices;  // per output: its device name of the last query
};

namespace {

thread_local std::string g_last_error;

encrt_status to_c(const encrt::Status& s) {
  if (s.is_ok()) return ENCRT_OK;
  g_last_error = s.to_string();
  switch (s.code()) {
    case encrt::StatusCode::kInvalidArgument: return ENCRT_INVALID_ARGUMENT;
    case encrt::StatusCode::kIoError: return ENCRT_IO_ERROR;
    case encrt::StatusCode::kInvalidModel: return ENCRT_INVALID_MODEL;
    case encrt::StatusCode::kUnsupported: return ENCRT_UNSUPPORTED;
    case encrt::StatusCode::kOutOfMemory: return ENCRT_OUT_OF_MEMORY;
    default: return ENCRT_INTERNAL;
  }
}

encrt_status null_argument(const char* what) { return to_c(encrt::invalid_argument(std::string(what) + " is NULL")); }

// "a=1,b=2" into a map; an entry without '=' or with an empty name is an error.
encrt::Status parse_backend_options(const char* text, std::map<std::string, std::string>* out) {
  std::string all = text;
  size_t begin = 0;
  while (begin <= all.size()) {
    size_t end = all.find(',', begin);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(begin, end - begin);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        return encrt::invalid_argument("backend option '" + item + "' is not name=value");
      (*out)[item.substr(0, eq)] = item.substr(eq + 1);
    }
    begin = end + 1;
  }
  return encrt::Status::ok();
}

encrt::Status to_options(const encrt_session_options* in, encrt::SessionOptions* out) {
  if (in->struct_size < sizeof(size_t) + 4 * sizeof(int))
    return encrt::invalid_argument("encrt_session_options.struct_size is too small (call encrt_session_options_init)");
  out->max_batch = in->max_batch;
  out->max_seq = in->max_seq;
  out->threads = in->threads;
  out->attention_layer = in->attention_layer;
  if (in->struct_size >= offsetof(encrt_session_options, arena_size) + sizeof(size_t)) {
    out->arena = in->arena;
    out->arena_size = in->arena_size;
  }
  if (in->struct_size >= sizeof(encrt_session_options)) {
    if (in->backend && *in->backend) out->backend = in->backend;
    if (in->backend_options)
      if (encrt::Status s = parse_backend_options(in->backend_options, &out->backend_options); !s) return s;
  }
  return encrt::Status::ok();
}

encrt_dtype to_c(encrt::DType d) {
  switch (d) {
    case encrt::DType::kF32: return ENCRT_DTYPE_F32;
    case encrt::DType::kF16: return ENCRT_DTYPE_F16;
    case encrt::DType::kI8: return ENCRT_DTYPE_I8;
    case encrt::DType::kU8: return ENCRT_DTYPE_U8;
    case encrt::DType::kI32: return ENCRT_DTYPE_I32;
  }
  return ENCRT_DTYPE_F32;
}

}  // namespace

extern "C" {

const char* encrt_version(void) { return encrt::version(); }
const char* encrt_last_error(void) { return g_last_error.c_str(); }

encrt_status encrt_model_load(const char* path, encrt_model** out_model) {
  if (!out_model) return null_argument("out_model");
  *out_model = nullptr;
  if (!path) return null_argument("path");
  auto handle = std::make_unique<encrt_model>();
  if (encrt_status s = to_c(encrt::Model::load(path, &handle->model)); s != ENCRT_OK) return s;
  if (handle->model->has_head()) handle->model->head(&handle->head);
  *out_model = handle.release();
  return ENCRT_OK;
}

void encrt_model_free(encrt_model* model) { delete model; }

encrt_status encrt_model_dims(const encrt_model* model, int* vocab_size, int* hidden_size, int* num_heads,
                              int* num_layers, int* max_seq_len) {
  if (!model) return null_argument("model");
  const encrt::ModelConfig& c = model->model->config();
  if (vocab_size) *vocab_size = c.vocab_size;
  if (hidden_size) *hidden_size = c.hidden_size;
  if (num_heads) *num_heads = c.num_heads;
  if (num_layers) *num_layers = c.num_layers;
  if (max_seq_len) *max_seq_len = c.max_seq_len;
  return ENCRT_OK;
}

void encrt_session_options_init(encrt_session_options* options) {
  if (!options) return;
  *options = encrt_session_options{};
  options->struct_size = sizeof(encrt_session_options);
  options->max_batch = 1;
  options->max_seq = 128;
  options->threads = 1;
  options->attention_layer = -1;
}

encrt_status encrt_session_arena_size(const encrt_model* model, const encrt_session_options* options,
                                      size_t* out_bytes) {
  if (!model) return null_argument("model");
  if (!options) return null_argument("options");
  if (!out_bytes) return null_argument("out_bytes");
  encrt::SessionOptions opt;
  if (encrt_status s = to_c(to_options(options, &opt)); s != ENCRT_OK) return s;
  return to_c(encrt::Session::arena_size(*model->model, opt, out_bytes));
}

encrt_status encrt_session_create(const encrt_model* model, const encrt_session_options* options,
                                  encrt_session** out_session) {
  if (!out_session) return null_argument("out_session");
  *out_session = nullptr;
  if (!model) return null_argument("model");
  if (!options) return null_argument("options");
  encrt::SessionOptions opt;
  if (encrt_status s = to_c(to_options(options, &opt)); s != ENCRT_OK) return s;
  auto handle = std::make_unique<encrt_session>();
  handle->model = model->model.get();
  if (encrt_status s = to_c(encrt::Session::create(*model->model, opt, &handle->session)); s != ENCRT_OK) return s;
  handle->output_names = handle->session->output_names();
  handle->devices.resize(handle->output_names.size());
  *out_session = handle.release();
  return ENCRT_OK;
}

void encrt_session_free(encrt_session* session) { delete session; }

encrt_status encrt_session_run(encrt_session* session, int batch, int seq, const int32_t* input_ids,
                               const int32_t* attention_mask, const int32_t* token_type_ids) {
  if (!session) return null_argument("session");
  return to_c(session->session->run({batch, seq, input_ids, attention_mask, token_type_ids}));
}

encrt_status encrt_session_output(const encrt_session* session, encrt_output which, const float** data,
                                  int64_t shape[4], int* rank) {
  if (!session) return null_argument("session");
  if (!data) return null_argument("data");
  *data = nullptr;
  const char* name = which == ENCRT_OUTPUT_HIDDEN      ? "hidden"
                     : which == ENCRT_OUTPUT_POOLED    ? "pooled"
                     : which == ENCRT_OUTPUT_ATTENTION ? "attention"
                                                       : nullptr;
  if (!name) return to_c(encrt::invalid_argument("unknown output " + std::to_string(static_cast<int>(which))));
  const encrt::Session& s = *session->session;
  const auto& names = session->output_names;
  if (std::find(names.begin(), names.end(), name) == names.end())
    return to_c(encrt::invalid_argument("no attention output: create the session with attention_layer >= 0"));
  encrt::OutputInfo info;
  if (encrt_status st = to_c(s.output(name, &info)); st != ENCRT_OK) return st;
  if (info.device != "host")
    return to_c(encrt::unsupported(std::string("output '") + name + "' is in " + info.device +
                                   " memory: use encrt_session_copy_output"));
  *data = static_cast<const float*>(info.data);
  if (shape)
    for (size_t i = 0; i < 4; ++i) shape[i] = i < info.shape.size() ? info.shape[i] : 0;
  if (rank) *rank = static_cast<int>(info.shape.size());
  return ENCRT_OK;
}

encrt_status encrt_tokenizer_create(const encrt_model* model, encrt_tokenizer** out_tokenizer) {
  if (!out_tokenizer) return null_argument("out_tokenizer");
  *out_tokenizer = nullptr;
  if (!model) return null_argument("model");
  auto handle = std::make_unique<encrt_tokenizer>();
  if (encrt_status s = to_c(encrt::Tokenizer::create(*model->model, &handle->tokenizer)); s != ENCRT_OK) return s;
  *out_tokenizer = handle.release();
  return ENCRT_OK;
}

void encrt_tokenizer_free(encrt_tokenizer* tokenizer) { delete tokenizer; }

encrt_status encrt_tokenizer_encode(const encrt_tokenizer* tokenizer, const char* text, int max_length,
                                    int32_t* ids, size_t capacity, size_t* count) {
  if (!count) return null_argument("count");
  *count = 0;
  if (!tokenizer) return null_argument("tokenizer");
  if (!text) return null_argument("text");
  if (!ids && capacity > 0) return null_argument("ids");
  std::vector<int32_t> out;
  if (encrt_status s = to_c(tokenizer->tokenizer->encode(text, max_length, &out)); s != ENCRT_OK) return s;
  *count = out.size();
  if (out.size() > capacity)
    return to_c(encrt::invalid_argument("encrt_tokenizer_encode: " + std::to_string(out.size()) +
                                        " ids do not fit in a capacity of " + std::to_string(capacity)));
  std::copy(out.begin(), out.end(), ids);
  return ENCRT_OK;
}

encrt_status encrt_session_output_count(const encrt_session* session, size_t* count) {
  if (!session) return null_argument("session");
  if (!count) return null_argument("count");
  *count = session->output_names.size();
  return ENCRT_OK;
}

encrt_status encrt_session_output_name(const encrt_session* session, size_t index, const char** name) {
  if (!session) return null_argument("session");
  if (!name) return null_argument("name");
  *name = nullptr;
  if (index >= session->output_names.size())
    return to_c(encrt::invalid_argument("output index " + std::to_string(index) + " is outside 0.." +
                                        std::to_string(session->output_names.size() - 1)));
  *name = session->output_names[index].c_str();
  return ENCRT_OK;
}

encrt_status encrt_session_output_info(const encrt_session* session, const char* name, encrt_tensor_info* info) {
  if (!session) return null_argument("session");
  if (!name) return null_argument("name");
  if (!info) return null_argument("info");
  if (info->struct_size < sizeof(encrt_tensor_info))
    return to_c(encrt::invalid_argument("encrt_tensor_info.struct_size is too small (set it to sizeof(encrt_tensor_info))"));
  encrt::OutputInfo out;
  if (encrt_status s = to_c(session->session->output(name, &out)); s != ENCRT_OK) return s;
  if (out.shape.size() > 8) return to_c(encrt::internal_error("output '" + out.name + "' has more than 8 dimensions"));
  size_t index = 0;
  while (session->output_names[index] != out.name) ++index;
  session->devices[index] = out.device;
  info->name = session->output_names[index].c_str();
  info->dtype = to_c(out.dtype);
  info->rank = static_cast<int>(out.shape.size());
  for (int i = 0; i < 8; ++i) info->shape[i] = i < info->rank ? out.shape[static_cast<size_t>(i)] : 0;
  info->device = session->devices[index].c_str();
  info->data = out.data;
  info->bytes = out.bytes;
  return ENCRT_OK;
}

encrt_status encrt_session_copy_output(const encrt_session* session, const char* name, void* dst, size_t capacity) {
  if (!session) return null_argument("session");
  if (!name) return null_argument("name");
  if (!dst) return null_argument("dst");
  return to_c(session->session->copy_output(name, dst, capacity));
}

encrt_status encrt_model_has_head(const encrt_model* model, int* has_head) {
  if (!model) return null_argument("model");
  if (!has_head) return null_argument("has_head");
  *has_head = model->model->has_head() ? 1 : 0;
  return ENCRT_OK;
}

encrt_status encrt_model_head(const encrt_model* model, encrt_head_info* info) {
  if (!model) return null_argument("model");
  if (!info) return null_argument("info");
  if (info->struct_size < sizeof(encrt_head_info))
    return to_c(encrt::invalid_argument("encrt_head_info.struct_size is too small (set it to sizeof(encrt_head_info))"));
  encrt::HeadInfo unused;
  if (encrt_status s = to_c(model->model->head(&unused)); s != ENCRT_OK) return s;
  const encrt::HeadInfo& h = model->head;
  info->kind = h.kind == "token_classification" ? ENCRT_HEAD_TOKEN_CLASSIFICATION : ENCRT_HEAD_SEQUENCE_CLASSIFICATION;
  info->problem_type = h.problem_type.c_str();
  info->score_function = h.score_function.c_str();
  info->pooling = h.pooling.c_str();
  info->num_labels = h.num_labels();
  return ENCRT_OK;
}

encrt_status encrt_model_head_label(const encrt_model* model, int label_id, const char** label) {
  if (!model) return null_argument("model");
  if (!label) return null_argument("label");
  encrt::HeadInfo unused;
  if (encrt_status s = to_c(model->model->head(&unused)); s != ENCRT_OK) return s;
  const encrt::HeadInfo& h = model->head;
  if (label_id < 0 || label_id >= h.num_labels())
    return to_c(encrt::invalid_argument("label id " + std::to_string(label_id) + " is outside 0.." +
                                        std::to_string(h.num_labels() - 1)));
  *label = h.labels[static_cast<size_t>(label_id)].c_str();
  return ENCRT_OK;
}

}  // extern "C"
