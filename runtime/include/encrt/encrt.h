/* encrt C API: a stable ABI over the C++ runtime, with opaque handles and status codes.
 *
 * Ownership and lifetimes:
 *   - encrt_model_load() returns a model the caller frees with encrt_model_free(); it maps the
 *     file read-only and uses the weights in place.
 *   - A session borrows its model: free every session of a model before the model.
 *   - Output pointers from encrt_session_output() point into the session's arena and stay valid
 *     until the next encrt_session_run() or encrt_session_free() on that session.
 *   - A session is not thread-safe; different sessions may run concurrently on one model.
 * Errors: every function that can fail returns an encrt_status; on failure
 * encrt_last_error() returns a message for the calling thread (valid until its next call into
 * encrt). No function aborts the process on bad input, including null pointers. */
#ifndef ENCRT_ENCRT_H_
#define ENCRT_ENCRT_H_

#include <stddef.h>
#include <stdint.h>

#include "encrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum encrt_status {
  ENCRT_OK = 0,
  ENCRT_INVALID_ARGUMENT = 1,
  ENCRT_IO_ERROR = 2,
  ENCRT_INVALID_MODEL = 3,
  ENCRT_UNSUPPORTED = 4,
  ENCRT_OUT_OF_MEMORY = 5,
  ENCRT_INTERNAL = 6,
} encrt_status;

typedef enum encrt_output {
  ENCRT_OUTPUT_HIDDEN = 0,     /* [batch, seq, hidden] */
  ENCRT_OUTPUT_POOLED = 1,     /* [batch, hidden] */
  ENCRT_OUTPUT_ATTENTION = 2,  /* [batch, heads, seq, seq]; needs attention_layer >= 0 */
} encrt_output;

typedef enum encrt_dtype {
  ENCRT_DTYPE_F32 = 0,
  ENCRT_DTYPE_F16 = 1,
  ENCRT_DTYPE_I8 = 2,
  ENCRT_DTYPE_U8 = 3,
  ENCRT_DTYPE_I32 = 4,
} encrt_dtype;

typedef struct encrt_model encrt_model;
typedef struct encrt_session encrt_session;

/* How a run lays out a batch with padding (encrt_session_options.padding; encrt::Padding in
 * encrt.hpp says it all): PACKED computes the real tokens only (attention_mask == 1) and gives
 * token-level outputs zeros at padding positions, PADDED every position, AUTO (default) packed
 * when the batch has padding and the session can pack. PACKED where the session cannot pack is
 * an error at encrt_session_create, where a run cannot (a src mask; CLS/pooler pooling of a
 * sequence that starts with padding) an error of that run. */
typedef enum encrt_padding {
  ENCRT_PADDING_AUTO = 0,
  ENCRT_PADDING_PACKED = 1,
  ENCRT_PADDING_PADDED = 2,
} encrt_padding;

/* Session options. Set struct_size = sizeof(encrt_session_options) (encrt_session_options_init
 * does) so that later versions can append fields without breaking callers. */
typedef struct encrt_session_options {
  size_t struct_size;
  int max_batch;        /* >= 1; default 1 */
  int max_seq;          /* 1..model max; default 128 (or the model's maximum if smaller) */
  int threads;          /* >= 1; default 1 */
  int attention_layer;  /* -1 = none (default); else keep that layer's attention probabilities */
  void* arena;          /* optional caller-owned host arena, 64-byte aligned; NULL = allocate */
  size_t arena_size;    /* bytes at arena; see encrt_session_arena_size */
  /* The backend: NULL or "auto" (default), "cpu", "xnnpack" (when built in). An unknown, unbuilt
   * or unavailable backend is an error at encrt_session_create that names it. */
  const char* backend;
  /* NULL, or backend options as "name=value" pairs separated by commas, e.g. "isa=avx2" (the CPU
   * backend's kernel level). A name that none of the session's backends knows is an error. */
  const char* backend_options;
  /* Nonzero: plan for a src mask (encrt_run_inputs.src_mask_bool / src_mask_float); 0 (default):
   * a run with one is an error. Attention then runs on the CPU backend. */
  int src_mask;
  /* An encrt_padding value (an int: others are refused); default ENCRT_PADDING_AUTO. */
  int padding;
} encrt_session_options;

/* An output of a session's last run, by name. The strings stay valid while the session lives;
 * data points into the output's memory (host-readable only when device is "host") and stays
 * valid until the next run. Set struct_size = sizeof(encrt_tensor_info). */
typedef struct encrt_tensor_info {
  size_t struct_size;
  const char* name;
  encrt_dtype dtype;
  int rank;
  int64_t shape[8];
  const char* device;
  const void* data;
  size_t bytes;
} encrt_tensor_info;

ENCRT_API const char* encrt_version(void);
ENCRT_API const char* encrt_last_error(void);

ENCRT_API encrt_status encrt_model_load(const char* path, encrt_model** out_model);
ENCRT_API void encrt_model_free(encrt_model* model); /* NULL is a no-op */
/* Basic dimensions; any pointer may be NULL. */
ENCRT_API encrt_status encrt_model_dims(const encrt_model* model, int* vocab_size, int* hidden_size, int* num_heads,
                              int* num_layers, int* max_seq_len);

ENCRT_API void encrt_session_options_init(encrt_session_options* options);
ENCRT_API encrt_status encrt_session_arena_size(const encrt_model* model, const encrt_session_options* options,
                                      size_t* out_bytes);
ENCRT_API encrt_status encrt_session_create(const encrt_model* model, const encrt_session_options* options,
                                  encrt_session** out_session);
ENCRT_API void encrt_session_free(encrt_session* session); /* NULL is a no-op */

/* Tuning (encrt::tune_backend_options in encrt.hpp): which of the backend's options run `model`
 * fastest on this machine at (batch, seq), each candidate checked against the defaults' hidden
 * state and timed side by side with the best so far (default iterations, rounds, gain and cosine
 * of encrt::TuneOptions). `options`: the session options to start from (its backend and
 * backend_options; max_batch and max_seq are replaced by batch and seq). Writes the backend options
 * to use, "name=value,..." as encrt_session_options.backend_options takes them ("" for the
 * defaults), NUL-terminated, to out_options[0..capacity) and their length without the NUL to
 * *length; a capacity below length + 1 is ENCRT_INVALID_ARGUMENT (*length still says how many).
 * default_ms and tuned_ms (either may be NULL): the defaults' and the result's time per run, side
 * by side (GPU time where the backend has a clock, else wall time). Creates and frees sessions. */
ENCRT_API encrt_status encrt_tune_backend_options(const encrt_model* model, const encrt_session_options* options,
                                                  int batch, int seq, char* out_options, size_t capacity,
                                                  size_t* length, double* default_ms, double* tuned_ms);

/* Text to input ids with the model's vocabulary (BERT WordPiece, as Hugging Face's
 * BertTokenizerFast): writes [CLS] pieces [SEP], at most max_length ids, to ids[0..capacity) and
 * their number to *count. ENCRT_INVALID_ARGUMENT for text that is not UTF-8 or a capacity below
 * the count (then *count still tells how many are needed); ENCRT_UNSUPPORTED when the model file
 * has no vocabulary. */
typedef struct encrt_tokenizer encrt_tokenizer;
ENCRT_API encrt_status encrt_tokenizer_create(const encrt_model* model, encrt_tokenizer** out_tokenizer);
ENCRT_API void encrt_tokenizer_free(encrt_tokenizer* tokenizer); /* NULL is a no-op */
ENCRT_API encrt_status encrt_tokenizer_encode(const encrt_tokenizer* tokenizer, const char* text, int max_length,
                                    int32_t* ids, size_t capacity, size_t* count);

/* Texts and pairs with every token's details, as Hugging Face's BertTokenizerFast gives them
 * (encrt::Tokenizer::encode / encode_pair / encode_batch in the C++ API). */
typedef enum encrt_truncation {
  ENCRT_TRUNCATION_LONGEST_FIRST = 0, /* Hugging Face's default: cut the longer text first (see encrt.hpp) */
  ENCRT_TRUNCATION_ONLY_FIRST = 1,    /* cut only the first text; an error if it would lose all its tokens */
  ENCRT_TRUNCATION_ONLY_SECOND = 2,   /* cut only the second text; an error for a single text or if it would lose all */
} encrt_truncation;

/* Set struct_size = sizeof(encrt_encode_options) (encrt_encode_options_init does). */
typedef struct encrt_encode_options {
  size_t struct_size;
  int max_length;               /* tokens per text or pair, specials included; 0 (default): the model's max_seq_len */
  int truncate;                 /* 1 (default): cut longer texts; 0: a longer text or pair is ENCRT_INVALID_ARGUMENT */
  /* An encrt_truncation value (an int, so that any value a caller stores is defined to read;
   * others are refused); default ENCRT_TRUNCATION_LONGEST_FIRST. */
  int truncation;
} encrt_encode_options;
ENCRT_API void encrt_encode_options_init(encrt_encode_options* options);

/* Caller-owned arrays that receive an encoding. ids is required; any other array may be NULL (not
 * written). Each holds `capacity` entries (offsets: 2 * capacity, a start and an end per token).
 * Set struct_size = sizeof(encrt_token_arrays) (encrt_token_arrays_init does, with all NULL). */
typedef struct encrt_token_arrays {
  size_t struct_size;
  size_t capacity;
  int32_t* ids;
  int32_t* token_type_ids;       /* 0: [CLS], the first text, its [SEP]; 1: the second text and its [SEP] */
  int32_t* attention_mask;       /* 1: token, 0: padding */
  int32_t* special_tokens_mask;  /* 1: [CLS], [SEP], [PAD] added by the tokenizer */
  int32_t* word_ids;             /* the token's word in its text from 0; -1: added special token or padding */
  int32_t* sequence_ids;         /* 0: first text, 1: second text, -1: added special token or padding */
  size_t* offsets;               /* [start, end) UTF-8 byte offsets into the token's text; (0, 0) for added tokens */
} encrt_token_arrays;
ENCRT_API void encrt_token_arrays_init(encrt_token_arrays* arrays);

/* One text (text_pair NULL) or a pair: [CLS] text [SEP] (text_pair [SEP]). options NULL: defaults.
 * Writes *count tokens; when they exceed out->capacity the arrays are untouched, *count still says
 * how many are needed and the status is ENCRT_INVALID_ARGUMENT. */
ENCRT_API encrt_status encrt_tokenizer_encode_text(const encrt_tokenizer* tokenizer, const char* text,
                                                   const char* text_pair, const encrt_encode_options* options,
                                                   encrt_token_arrays* out, size_t* count);
/* batch texts (and, when text_pairs is not NULL, batch second texts: every entry non-NULL), padded
 * with [PAD] to the longest: the arrays are [batch, seq] row-major (offsets [batch, seq, 2]), the
 * layout encrt_session_run takes, and *seq is written. When batch * seq exceeds out->capacity the
 * arrays are untouched, *seq still says the length and the status is ENCRT_INVALID_ARGUMENT. */
ENCRT_API encrt_status encrt_tokenizer_encode_batch(const encrt_tokenizer* tokenizer, const char* const* texts,
                                                    const char* const* text_pairs, size_t batch,
                                                    const encrt_encode_options* options, encrt_token_arrays* out,
                                                    size_t* seq);

/* Runs the encoder on [batch, seq] arrays owned by the caller. mask and token_type_ids may be NULL. */
ENCRT_API encrt_status encrt_session_run(encrt_session* session, int batch, int seq, const int32_t* input_ids,
                               const int32_t* attention_mask, const int32_t* token_type_ids);

/* The shape of a src mask: one [seq, seq] for every sequence, or [batch, seq, seq]. */
typedef enum encrt_src_mask_shape {
  ENCRT_SRC_MASK_SEQ_SEQ = 0,
  ENCRT_SRC_MASK_BATCH_SEQ_SEQ = 1,
} encrt_src_mask_shape;

/* All inputs of one run, for encrt_session_run_inputs. Call encrt_run_inputs_init first (it sets
 * struct_size and every pointer to NULL) so that later versions can append fields. The arrays are
 * row-major, owned by the caller and read during the call only.
 *   input_ids       [batch, seq], required
 *   attention_mask  [batch, seq] or NULL: 1 = real token, 0 = padding (the key padding mask)
 *   token_type_ids  [batch, seq] or NULL
 *   src_mask_bool   or src_mask_float (at most one; NULL = none; needs the session option
 *                   src_mask): which keys each query may attend, as nn.TransformerEncoder's
 *                   `mask`, shaped as src_mask_shape says, for every layer and head.
 *                   bool: 1 = may NOT attend (PyTorch's convention), 0 = may; other values are
 *                   an error. float: added to the scaled scores, -inf = may not attend; NaN and
 *                   +inf are errors. A query that may attend no key gets a zero attention
 *                   output (PyTorch gives NaN). */
typedef struct encrt_run_inputs {
  size_t struct_size;
  int batch;
  int seq;
  const int32_t* input_ids;
  const int32_t* attention_mask;
  const int32_t* token_type_ids;
  const uint8_t* src_mask_bool;
  const float* src_mask_float;
  int src_mask_shape; /* an encrt_src_mask_shape value (an int: others are refused, not undefined) */
} encrt_run_inputs;

ENCRT_API void encrt_run_inputs_init(encrt_run_inputs* inputs);
/* As encrt_session_run, with every input of encrt_run_inputs. */
ENCRT_API encrt_status encrt_session_run_inputs(encrt_session* session, const encrt_run_inputs* inputs);

/* Points *data at an output of the last successful run and writes its shape (up to 4 dims); the
 * output must be in host memory (else ENCRT_UNSUPPORTED: use encrt_session_copy_output). */
ENCRT_API encrt_status encrt_session_output(const encrt_session* session, encrt_output which, const float** data,
                                  int64_t shape[4], int* rank);

/* The outputs a session produces: their number, and each one's name ("hidden", "pooled",
 * "attention"). */
ENCRT_API encrt_status encrt_session_output_count(const encrt_session* session, size_t* count);
ENCRT_API encrt_status encrt_session_output_name(const encrt_session* session, size_t index, const char** name);
/* Name, dtype, shape, device and address of an output of the last successful run. */
ENCRT_API encrt_status encrt_session_output_info(const encrt_session* session, const char* name,
                                                 encrt_tensor_info* info);
/* Copies an output of the last successful run into host memory dst of capacity bytes. */
ENCRT_API encrt_status encrt_session_copy_output(const encrt_session* session, const char* name, void* dst,
                                                 size_t capacity);

/* ---- Task heads. A model converted from a checkpoint with a classifier has a head, and its
 * sessions have the outputs "logits" and "scores" (f32 [batch, num_labels] for a sequence
 * classifier, [batch, seq, num_labels] for a token classifier) and, for single-label heads,
 * "labels" (i32 [batch] or [batch, seq]: each row's best label id); read them with
 * encrt_session_output_info / encrt_session_copy_output. */
typedef enum encrt_head_kind {
  ENCRT_HEAD_SEQUENCE_CLASSIFICATION = 0, /* logits from a pooling of the last hidden state */
  ENCRT_HEAD_TOKEN_CLASSIFICATION = 1,    /* logits for every token (NER tags) */
} encrt_head_kind;

/* Set struct_size = sizeof(encrt_head_info). The strings stay valid while the model lives. */
typedef struct encrt_head_info {
  size_t struct_size;
  encrt_head_kind kind;
  const char* problem_type;   /* "single_label" | "multi_label" | "regression" */
  const char* score_function; /* how "scores" come from "logits": "softmax" | "sigmoid" | "identity" */
  const char* pooling;        /* sequence classification: the pooling the classifier reads */
  int num_labels;
} encrt_head_info;

/* *has_head = 1 when the model has a task head, else 0. */
ENCRT_API encrt_status encrt_model_has_head(const encrt_model* model, int* has_head);
/* The model's head; ENCRT_UNSUPPORTED (with a message) when it has none. */
ENCRT_API encrt_status encrt_model_head(const encrt_model* model, encrt_head_info* info);
/* The name of label `label_id` (id2label), valid while the model lives; ENCRT_INVALID_ARGUMENT for
 * an id outside 0..num_labels-1, ENCRT_UNSUPPORTED when the model has no head. */
ENCRT_API encrt_status encrt_model_head_label(const encrt_model* model, int label_id, const char** label);

/* ---- Model metadata: the file's key/value entries (`encrt inspect` lists them), e.g. "weight_type"
 * ("f32" | "f16" | "i8": what the converter's --dtype fp32 | fp16 | int8 made), "layer_weight_types" and the
 * calibration figures. Copies the value of `key`, NUL-terminated, to value[0..capacity) and its
 * length (without the NUL) to *length. ENCRT_INVALID_ARGUMENT when the file has no entry `key`, or
 * when capacity <= the length (value untouched; *length still says how long it is). value may be
 * NULL when capacity is 0. */
ENCRT_API encrt_status encrt_model_metadata(const encrt_model* model, const char* key, char* value, size_t capacity,
                                            size_t* length);
/* ---- Loading with options, and from memory. */
/* Set struct_size = sizeof(encrt_load_options) (encrt_load_options_init does, with the defaults)
 * so that later versions can append fields without breaking callers. */
typedef struct encrt_load_options {
  size_t struct_size;
  /* Nonzero: before the model is used, check every checksum its file carries (each tensor's and
   * the structure's: one pass over all of its bytes, README "Model integrity"). A mismatch is
   * ENCRT_INVALID_MODEL naming the first damaged tensor; a file without checksums (written by an
   * older converter) is refused the same way, since verification was asked for. 0 (default): the
   * checksums are not read. */
  int verify_checksums;
} encrt_load_options;
ENCRT_API void encrt_load_options_init(encrt_load_options* options);

/* As encrt_model_load, with options (NULL: the defaults, exactly encrt_model_load). */
ENCRT_API encrt_status encrt_model_load_ex(const char* path, const encrt_load_options* options,
                                           encrt_model** out_model);
/* A model over the `size` bytes of a .encrt file at `data`: the caller's memory, used in place
 * without a copy (a model received over the network needs no temporary file). The memory must stay
 * valid and unchanged until encrt_model_free of this model (free its sessions and tokenizers
 * first, as always). data must be 64-byte aligned, e.g. from aligned_alloc(64, ...) or
 * posix_memalign: the file aligns every tensor's data to 64 bytes from its start and the kernels
 * read the weights where they are. NULL data, size 0 or a misaligned buffer is
 * ENCRT_INVALID_ARGUMENT; bytes that are no valid model are ENCRT_INVALID_MODEL. options NULL: the
 * defaults. */
ENCRT_API encrt_status encrt_model_load_from_memory(const void* data, size_t size, const encrt_load_options* options,
                                                    encrt_model** out_model);

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_ENCRT_H_ */
