#include "encrt/encrt.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "api/c_api_common.h"
#include "encrt/encrt.hpp"

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

using encrt::capi::null_argument;
using encrt::capi::parse_backend_options;
using encrt::capi::to_c;

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
  if (in->struct_size >= offsetof(encrt_session_options, backend_options) + sizeof(const char*)) {
    if (in->backend && *in->backend) out->backend = in->backend;
    if (in->backend_options)
      if (encrt::Status s = parse_backend_options(in->backend_options, &out->backend_options); !s) return s;
  }
  if (in->struct_size >= offsetof(encrt_session_options, src_mask) + sizeof(int)) out->src_mask = in->src_mask != 0;
  if (in->struct_size >= offsetof(encrt_session_options, padding) + sizeof(int)) {
    if (in->padding != ENCRT_PADDING_AUTO && in->padding != ENCRT_PADDING_PACKED && in->padding != ENCRT_PADDING_PADDED)
      return encrt::invalid_argument("encrt_session_options.padding " + std::to_string(in->padding) +
                                     " is none of ENCRT_PADDING_AUTO (0), ENCRT_PADDING_PACKED (1) and ENCRT_PADDING_PADDED (2)");
    out->padding = static_cast<encrt::Padding>(in->padding);
  }
  return encrt::Status::ok();
}

encrt::Status to_load_options(const encrt_load_options* in, encrt::LoadOptions* out) {
  *out = encrt::LoadOptions();
  if (!in) return encrt::Status::ok();
  if (in->struct_size < offsetof(encrt_load_options, verify_checksums) + sizeof(int))
    return encrt::invalid_argument("encrt_load_options.struct_size is too small (call encrt_load_options_init)");
  out->verify_checksums = in->verify_checksums != 0;
  return encrt::Status::ok();
}

// A loaded model's handle, with what the C API hands out as const char* kept in it.
encrt_status finish_model(std::unique_ptr<encrt_model> handle, encrt_model** out_model) {
  if (handle->model->has_head()) handle->model->head(&handle->head);
  *out_model = handle.release();
  return ENCRT_OK;
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

namespace {

encrt::Status to_encode_options(const encrt_encode_options* options, encrt::EncodeOptions* out) {
  *out = encrt::EncodeOptions();
  if (!options) return encrt::Status::ok();
  if (options->struct_size < sizeof(encrt_encode_options))
    return encrt::invalid_argument(
        "encrt_encode_options.struct_size is too small (set it to sizeof(encrt_encode_options))");
  if (options->max_length < 0)
    return encrt::invalid_argument("max_length " + std::to_string(options->max_length) + " is negative");
  if (options->truncation < ENCRT_TRUNCATION_LONGEST_FIRST || options->truncation > ENCRT_TRUNCATION_ONLY_SECOND)
    return encrt::invalid_argument("unknown truncation " + std::to_string(static_cast<int>(options->truncation)));
  out->max_length = options->max_length;
  out->truncate = options->truncate != 0;
  out->truncation = static_cast<encrt::Truncation>(options->truncation);
  return encrt::Status::ok();
}

encrt::Status check_arrays(const encrt_token_arrays* out) {
  if (!out) return encrt::invalid_argument("out is NULL");
  if (out->struct_size < sizeof(encrt_token_arrays))
    return encrt::invalid_argument("encrt_token_arrays.struct_size is too small (set it to sizeof(encrt_token_arrays))");
  if (!out->ids) return encrt::invalid_argument("out->ids is NULL");
  return encrt::Status::ok();
}

// The encoding `e` into the arrays from token position `at` on (NULL arrays are skipped).
void write_row(const encrt::Encoding& e, size_t at, encrt_token_arrays* out) {
  auto put = [&](int32_t* dst, const std::vector<int32_t>& src) {
    if (dst) std::copy(src.begin(), src.end(), dst + at);
  };
  put(out->ids, e.ids);
  put(out->token_type_ids, e.token_type_ids);
  put(out->attention_mask, e.attention_mask);
  put(out->special_tokens_mask, e.special_tokens_mask);
  put(out->word_ids, e.word_ids);
  put(out->sequence_ids, e.sequence_ids);
  if (out->offsets)
    for (size_t i = 0; i < e.size(); ++i) {
      out->offsets[2 * (at + i)] = e.offsets[i].start;
      out->offsets[2 * (at + i) + 1] = e.offsets[i].end;
    }
}

}  // namespace

extern "C" {

const char* encrt_version(void) { return encrt::version(); }
const char* encrt_last_error(void) { return encrt::capi::last_error(); }

encrt_status encrt_model_load(const char* path, encrt_model** out_model) {
  return encrt_model_load_ex(path, nullptr, out_model);
}

void encrt_load_options_init(encrt_load_options* options) {
  if (!options) return;
  *options = encrt_load_options{};
  options->struct_size = sizeof(encrt_load_options);
}

encrt_status encrt_model_load_ex(const char* path, const encrt_load_options* options, encrt_model** out_model) {
  if (!out_model) return null_argument("out_model");
  *out_model = nullptr;
  if (!path) return null_argument("path");
  encrt::LoadOptions opt;
  if (encrt::Status s = to_load_options(options, &opt); !s) return to_c(s);
  auto handle = std::make_unique<encrt_model>();
  if (encrt_status s = to_c(encrt::Model::load(path, opt, &handle->model)); s != ENCRT_OK) return s;
  return finish_model(std::move(handle), out_model);
}

encrt_status encrt_model_load_from_memory(const void* data, size_t size, const encrt_load_options* options,
                                          encrt_model** out_model) {
  if (!out_model) return null_argument("out_model");
  *out_model = nullptr;
  if (!data) return null_argument("data");
  encrt::LoadOptions opt;
  if (encrt::Status s = to_load_options(options, &opt); !s) return to_c(s);
  auto handle = std::make_unique<encrt_model>();
  if (encrt_status s = to_c(encrt::Model::from_buffer(data, size, opt, &handle->model)); s != ENCRT_OK) return s;
  return finish_model(std::move(handle), out_model);
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

encrt_status encrt_tune_backend_options(const encrt_model* model, const encrt_session_options* options, int batch,
                                        int seq, char* out_options, size_t capacity, size_t* length,
                                        double* default_ms, double* tuned_ms) {
  if (!model) return null_argument("model");
  if (!options) return null_argument("options");
  if (!length) return null_argument("length");
  if (!out_options && capacity > 0) return null_argument("out_options");
  encrt::SessionOptions opt;
  if (encrt_status s = to_c(to_options(options, &opt)); s != ENCRT_OK) return s;
  encrt::TuneOptions t;
  t.batch = batch;
  t.seq = seq;
  encrt::TuneResult r;
  if (encrt_status s = to_c(encrt::tune_backend_options(*model->model, opt, t, &r)); s != ENCRT_OK) return s;
  std::string text;
  for (const auto& [k, v] : r.options) text += (text.empty() ? "" : ",") + k + "=" + v;
  *length = text.size();
  if (default_ms) *default_ms = r.default_ms;
  if (tuned_ms) *tuned_ms = r.tuned_ms;
  if (capacity < text.size() + 1)
    return to_c(encrt::invalid_argument("out_options holds " + std::to_string(capacity) + " bytes; the options need " +
                                        std::to_string(text.size() + 1)));
  std::memcpy(out_options, text.c_str(), text.size() + 1);
  return ENCRT_OK;
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

void encrt_run_inputs_init(encrt_run_inputs* inputs) {
  if (!inputs) return;
  *inputs = encrt_run_inputs{};
  inputs->struct_size = sizeof(encrt_run_inputs);
  inputs->src_mask_shape = ENCRT_SRC_MASK_SEQ_SEQ;
}

encrt_status encrt_session_run_inputs(encrt_session* session, const encrt_run_inputs* inputs) {
  if (!session) return null_argument("session");
  if (!inputs) return null_argument("inputs");
  // The fields up to token_type_ids are the first version's; later ones count when present.
  if (inputs->struct_size < offsetof(encrt_run_inputs, token_type_ids) + sizeof(const int32_t*))
    return to_c(encrt::invalid_argument("encrt_run_inputs.struct_size is too small (call encrt_run_inputs_init)"));
  encrt::Inputs in{inputs->batch, inputs->seq, inputs->input_ids, inputs->attention_mask, inputs->token_type_ids};
  if (inputs->struct_size >= offsetof(encrt_run_inputs, src_mask_shape) + sizeof(int)) {
    in.src_mask_bool = inputs->src_mask_bool;
    in.src_mask_float = inputs->src_mask_float;
    // An unknown value maps to one no shape has, which run() refuses (never an out-of-range enum).
    in.src_mask_shape = inputs->src_mask_shape == ENCRT_SRC_MASK_SEQ_SEQ         ? encrt::SrcMaskShape::kSeqSeq
                        : inputs->src_mask_shape == ENCRT_SRC_MASK_BATCH_SEQ_SEQ ? encrt::SrcMaskShape::kBatchSeqSeq
                                                                                  : static_cast<encrt::SrcMaskShape>(255);
  }
  return to_c(session->session->run(in));
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

void encrt_encode_options_init(encrt_encode_options* options) {
  if (!options) return;
  *options = encrt_encode_options{};
  options->struct_size = sizeof(encrt_encode_options);
  options->max_length = 0;
  options->truncate = 1;
  options->truncation = ENCRT_TRUNCATION_LONGEST_FIRST;
}

void encrt_token_arrays_init(encrt_token_arrays* arrays) {
  if (!arrays) return;
  *arrays = encrt_token_arrays{};
  arrays->struct_size = sizeof(encrt_token_arrays);
}

encrt_status encrt_tokenizer_encode_text(const encrt_tokenizer* tokenizer, const char* text, const char* text_pair,
                                         const encrt_encode_options* options, encrt_token_arrays* out, size_t* count) {
  if (!count) return null_argument("count");
  *count = 0;
  if (!tokenizer) return null_argument("tokenizer");
  if (!text) return null_argument("text");
  if (encrt_status s = to_c(check_arrays(out)); s != ENCRT_OK) return s;
  encrt::EncodeOptions opt;
  if (encrt_status s = to_c(to_encode_options(options, &opt)); s != ENCRT_OK) return s;
  encrt::Encoding e;
  const encrt::Status st = text_pair ? tokenizer->tokenizer->encode_pair(text, text_pair, opt, &e)
                                     : tokenizer->tokenizer->encode(text, opt, &e);
  if (encrt_status s = to_c(st); s != ENCRT_OK) return s;
  *count = e.size();
  if (e.size() > out->capacity)
    return to_c(encrt::invalid_argument("encrt_tokenizer_encode_text: " + std::to_string(e.size()) +
                                        " tokens do not fit in a capacity of " + std::to_string(out->capacity)));
  write_row(e, 0, out);
  return ENCRT_OK;
}

encrt_status encrt_tokenizer_encode_batch(const encrt_tokenizer* tokenizer, const char* const* texts,
                                          const char* const* text_pairs, size_t batch,
                                          const encrt_encode_options* options, encrt_token_arrays* out, size_t* seq) {
  if (!seq) return null_argument("seq");
  *seq = 0;
  if (!tokenizer) return null_argument("tokenizer");
  if (!texts) return null_argument("texts");
  if (batch == 0) return to_c(encrt::invalid_argument("encrt_tokenizer_encode_batch: batch is 0"));
  if (encrt_status s = to_c(check_arrays(out)); s != ENCRT_OK) return s;
  encrt::EncodeOptions opt;
  if (encrt_status s = to_c(to_encode_options(options, &opt)); s != ENCRT_OK) return s;
  for (size_t i = 0; i < batch; ++i) {
    if (!texts[i]) return to_c(encrt::invalid_argument("texts[" + std::to_string(i) + "] is NULL"));
    if (text_pairs && !text_pairs[i])
      return to_c(encrt::invalid_argument("text_pairs[" + std::to_string(i) + "] is NULL"));
  }
  encrt::BatchEncoding b;
  encrt::Status st;
  if (text_pairs) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i < batch; ++i) pairs.emplace_back(texts[i], text_pairs[i]);
    st = tokenizer->tokenizer->encode_pair_batch(pairs, opt, &b);
  } else {
    st = tokenizer->tokenizer->encode_batch(std::vector<std::string>(texts, texts + batch), opt, &b);
  }
  if (encrt_status s = to_c(st); s != ENCRT_OK) return s;
  *seq = static_cast<size_t>(b.seq);
  const size_t needed = batch * *seq;
  if (needed > out->capacity)
    return to_c(encrt::invalid_argument("encrt_tokenizer_encode_batch: " + std::to_string(batch) + " x " +
                                        std::to_string(*seq) + " tokens do not fit in a capacity of " +
                                        std::to_string(out->capacity)));
  for (size_t r = 0; r < batch; ++r) write_row(b.rows[r], r * *seq, out);
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

encrt_status encrt_model_metadata(const encrt_model* model, const char* key, char* value, size_t capacity,
                                  size_t* length) {
  if (!model) return null_argument("model");
  if (!key) return null_argument("key");
  if (!length) return null_argument("length");
  if (!value && capacity > 0) return null_argument("value");
  for (const auto& [k, v] : model->model->metadata()) {
    if (k != key) continue;
    *length = v.size();
    if (capacity <= v.size())
      return to_c(encrt::invalid_argument("metadata '" + k + "' needs " + std::to_string(v.size() + 1) +
                                          " bytes, capacity is " + std::to_string(capacity)));
    std::memcpy(value, v.c_str(), v.size() + 1);
    return ENCRT_OK;
  }
  *length = 0;
  return to_c(encrt::invalid_argument(std::string("the model file has no metadata entry '") + key + "'"));
}

}  // extern "C"
