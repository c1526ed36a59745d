#include "encrt/encrt.h"

#include <algorithm>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

struct encrt_model {
  std::unique_ptr<encrt::Model> model;
};
struct encrt_tokenizer {
  std::unique_ptr<encrt::Tokenizer> tokenizer;
};
struct encrt_session {
  std::unique_ptr<encrt::Session> session;
  const encrt::Model* model = nullptr;
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

encrt::Status to_options(const encrt_session_options* in, encrt::SessionOptions* out) {
  if (in->struct_size < sizeof(size_t) + 4 * sizeof(int))
    return encrt::invalid_argument("encrt_session_options.struct_size is too small (call encrt_session_options_init)");
  out->max_batch = in->max_batch;
  out->max_seq = in->max_seq;
  out->threads = in->threads;
  out->attention_layer = in->attention_layer;
  if (in->struct_size >= sizeof(encrt_session_options)) {
    out->arena = in->arena;
    out->arena_size = in->arena_size;
  }
  return encrt::Status::ok();
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
  const encrt::Session& s = *session->session;
  const encrt::ModelConfig& c = session->model->config();
  int64_t dims[4] = {s.batch(), s.seq(), c.hidden_size, 0};
  int r = 3;
  switch (which) {
    case ENCRT_OUTPUT_HIDDEN:
      *data = s.last_hidden_state();
      break;
    case ENCRT_OUTPUT_POOLED:
      *data = s.pooled();
      dims[1] = c.hidden_size;
      r = 2;
      break;
    case ENCRT_OUTPUT_ATTENTION:
      *data = s.attention_probs();
      dims[1] = c.num_heads;
      dims[2] = dims[3] = s.seq();
      r = 4;
      if (!*data && s.last_hidden_state())
        return to_c(encrt::invalid_argument("no attention output: create the session with attention_layer >= 0"));
      break;
    default:
      *data = nullptr;
      return to_c(encrt::invalid_argument("unknown output " + std::to_string(static_cast<int>(which))));
  }
  if (!*data) return to_c(encrt::invalid_argument("no output yet: the session has not run successfully"));
  if (shape)
    for (int i = 0; i < 4; ++i) shape[i] = i < r ? dims[i] : 0;
  if (rank) *rank = r;
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

}  // extern "C"
