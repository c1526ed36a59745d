// encrt C++ API: load a .encrt model (mmap, zero-copy), create a session planned for a maximum
// batch and sequence length on a backend, run it, read the outputs by name. Errors are values
// (encrt::Status); nothing here throws, aborts or exits the host process on bad input.
//
//   std::unique_ptr<encrt::Model> model;
//   if (auto s = encrt::Model::load("minilm.encrt", &model); !s) { log(s.to_string()); return; }
//   encrt::SessionOptions opt;  opt.max_batch = 8;  opt.max_seq = 128;   // backend "auto"
//   std::unique_ptr<encrt::Session> session;
//   if (auto s = encrt::Session::create(*model, opt, &session); !s) ...
//   encrt::Inputs in{batch, seq, ids, mask, nullptr};
//   if (auto s = session->run(in); !s) ...
//   encrt::OutputInfo pooled;
//   session->output("pooled", &pooled);   // [batch, hidden] f32, valid until the next run()
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "encrt/export.h"
#include "encrt/status.hpp"

namespace encrt {

// Element types of model tensors and session outputs.
enum class DType : uint8_t { kF32 = 0, kF16 = 1, kI8 = 2, kU8 = 3, kI32 = 4 };
ENCRT_API const char* dtype_name(DType dtype);  // "f32", "f16", "i8", "u8", "i32"
ENCRT_API size_t dtype_size(DType dtype);       // bytes per element

// The encoder's configuration as stored in the model file.
struct ModelConfig {
  std::string architecture;        // "bert" | "torch_encoder"
  int vocab_size = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_layers = 0;
  int ffn_size = 0;
  std::string activation;          // "gelu" | "relu"
  bool pre_norm = false;
  float layer_norm_eps = 0.0f;
  std::string positional_encoding; // "learned" | "sinusoidal"
  float embedding_scale = 1.0f;
  int max_seq_len = 0;
  int type_vocab_size = 0;
  bool embedding_norm = false;
  bool final_norm = false;
  std::string pooling;             // "mean" | "cls" | "pooler" | "max"
  std::string attention_precision; // "float" | "int8"
  // Sliding-window (local) attention: > 0, each query attends only the keys within ±window of
  // its position (and the masks still apply); 0: every key (`encrt convert --attention-window`).
  int attention_window = 0;
  int head_dim() const { return num_heads > 0 ? hidden_size / num_heads : 0; }
  bool normalize = false;          // the pooled output is L2-normalized (sentence-transformers' Normalize)
};

// The task head of a model file: a classifier after the encoder (Model::head()). A session of a
// model with a head has the outputs "logits", "scores" and, for single-label heads, "labels".
struct HeadInfo {
  std::string kind;            // "sequence_classification" | "token_classification"
  std::string problem_type;    // "single_label" | "multi_label" | "regression"
  // How "scores" come from "logits": "softmax" (over a row's labels), "sigmoid" (each logit on
  // its own: multi-label, and one-logit relevance / cross-encoder heads) or "identity".
  std::string score_function;
  std::string pooling;         // sequence classification: the pooling the classifier reads
  std::vector<std::string> labels;  // id2label: the name of each label id
  int num_labels() const { return static_cast<int>(labels.size()); }
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;   // "f32" | "f16" | "i8" | "i32"
  std::string layout;  // "row_major" | "panel_n16" | "panel_n16k4"
  size_t bytes = 0;    // size of the data in the file
};

// How a model is loaded (the Model::load / Model::from_buffer overloads; C: encrt_load_options).
struct LoadOptions {
  // Before anything uses the file, check every checksum it carries (each tensor's and the
  // structure's; README "Model integrity"): one pass over all of its bytes. A mismatch is
  // kInvalidModel naming the first damaged tensor; a file without checksums (older converters)
  // is refused too, since the caller asked for verification. Off by default: the pass costs more
  // than the rest of loading (README gives the numbers).
  bool verify_checksums = false;
};

// Every checksum of a model file, checked (Model::verify_file / Model::verify_buffer).
struct ChecksumReport {
  struct Mismatch {
    std::string tensor;     // the tensor's name; "" for the structure checksum
    uint64_t stored = 0;    // the checksum in the file
    uint64_t computed = 0;  // what the bytes it covers hash to
    size_t bytes = 0;       // the bytes it covers
  };
  size_t tensors = 0;              // tensors in the file
  size_t tensors_checked = 0;      // of them, those that carry a checksum
  size_t bytes_checked = 0;        // bytes hashed (the whole file when every checksum is there)
  bool structure_checked = false;  // the file carries its structure checksum
  std::vector<std::string> unchecked;  // tensors without a checksum, in file order
  std::vector<Mismatch> mismatches;    // the tensors' in file order, then the structure's
  bool has_checksums() const { return tensors_checked > 0 || structure_checked; }
  // Every tensor and the structure carry a checksum, and all of them match.
  bool ok() const { return structure_checked && unchecked.empty() && mismatches.empty(); }
};

class ENCRT_API Model {
 public:
  // Maps the file read-only, runs the FlatBuffers verifier and encrt's semantic checks. Weights
  // are used in place from the mapping for the model's whole life.
  static Status load(const std::string& path, std::unique_ptr<Model>* out);
  // Same over memory the caller owns; it must stay valid and unchanged while the Model (and its
  // sessions) live, and must be 64-byte aligned.
  static Status from_buffer(const void* data, size_t size, std::unique_ptr<Model>* out);
  // The same with load options (the overloads above use LoadOptions()).
  static Status load(const std::string& path, const LoadOptions& options, std::unique_ptr<Model>* out);
  static Status from_buffer(const void* data, size_t size, const LoadOptions& options, std::unique_ptr<Model>* out);
  // Checks every checksum of a model file or buffer (64-byte aligned, as for from_buffer) and
  // fills *report: after the FlatBuffers verifier only, without load's semantic checks, so that a
  // file load refuses can still tell which tensor is damaged. A mismatch is no error (the report
  // says); an unreadable file or a buffer that is no FlatBuffers model is.
  static Status verify_file(const std::string& path, ChecksumReport* report);
  static Status verify_buffer(const void* data, size_t size, ChecksumReport* report);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const;
  std::vector<TensorInfo> tensors() const;
  std::vector<std::pair<std::string, std::string>> metadata() const;
  std::string metadata_value(const std::string& key) const;  // "" when absent
  size_t file_size() const;
  // Token strings by id, empty when the file carries no vocabulary.
  const std::vector<std::string>& vocabulary() const;
  // Whether the file has a task head, and what it is (kUnsupported, naming the model's outputs,
  // when it has none).
  bool has_head() const;
  Status head(HeadInfo* out) const;

  struct Impl;  // the library's own (opaque here)

 private:
  friend class Session;
  friend class Tokenizer;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct Inputs;

// How a text, or a pair of texts, is cut to EncodeOptions::max_length: Hugging Face's truncation
// strategies, as its fast tokenizers apply them (tokens go from the end of a text).
//   kLongestFirst  (Hugging Face's default) nothing is cut when all fits; else, if the shorter text
//                  fits in half the room, it stays whole and the longer one is cut to the rest;
//                  else each keeps half the room, the longer (the second when they tie) the odd token.
//   kOnlyFirst     only the first text is cut; an error when it would have to lose all its tokens.
//   kOnlySecond    only the second text is cut (an error for a single text, and when it would have
//                  to lose all its tokens).
enum class Truncation : uint8_t { kLongestFirst = 0, kOnlyFirst = 1, kOnlySecond = 2 };
ENCRT_API const char* truncation_name(Truncation truncation);  // "longest_first", "only_first", "only_second"
// Parses one of those names (kInvalidArgument, naming the valid ones, for anything else).
ENCRT_API Status parse_truncation(const std::string& name, Truncation* out);

struct EncodeOptions {
  // The most tokens per text or pair, special tokens included. 0: the model's max_seq_len. It must
  // leave room for the special tokens ([CLS] [SEP]: 2, a pair 3); at exactly that, the texts' tokens
  // are all cut, as Hugging Face does.
  int max_length = 0;
  // true (the default, as Hugging Face's pipelines): a longer text is cut by `truncation`. false: a
  // text or pair longer than max_length is an error (kInvalidArgument, saying how long it is).
  bool truncate = true;
  Truncation truncation = Truncation::kLongestFirst;
};

// A token's place in its text: [start, end) in UTF-8 bytes, so text.substr(start, end - start) is
// what it was made from (Hugging Face's offset_mapping counts Unicode code points of the Python
// str instead). Special tokens the tokenizer adds, and padding, are (0, 0).
struct TextSpan {
  size_t start = 0;
  size_t end = 0;
};

// One text or pair as tokens, with what Hugging Face's BatchEncoding gives for it. All vectors
// have one entry per token.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> token_type_ids;       // 0: [CLS], the first text and its [SEP]; 1: the second text and its [SEP]
  std::vector<int32_t> attention_mask;       // 1: a token; 0: padding (in a batch)
  std::vector<int32_t> special_tokens_mask;  // 1: [CLS], [SEP] and [PAD] added by the tokenizer (not those written in the text)
  std::vector<TextSpan> offsets;             // into the text the token came from (sequence_ids says which)
  std::vector<int32_t> word_ids;             // the token's word in its text, from 0; -1 for added special tokens and padding
  std::vector<int32_t> sequence_ids;         // 0: first text, 1: second text, -1: added special tokens and padding
  std::vector<std::string> tokens;           // the vocabulary's text of each token ("##ing", "[CLS]")
  size_t size() const { return ids.size(); }
};

// Texts (or pairs) padded with [PAD] to the longest, as the session's [batch, seq] inputs.
struct BatchEncoding {
  int batch = 0;
  int seq = 0;
  // [batch, seq] row-major, the layout Inputs takes; padding has mask 0 and token type 0.
  std::vector<int32_t> input_ids;
  std::vector<int32_t> attention_mask;
  std::vector<int32_t> token_type_ids;
  std::vector<Encoding> rows;  // each row's details, padded to seq
  // Inputs over the arrays above (valid while this BatchEncoding lives, unchanged).
  Inputs inputs() const;
};

// Text to input ids with the model's own vocabulary: BERT's WordPiece, giving the ids Hugging
// Face's BertTokenizerFast gives (normalization settings from the file: lowercasing, accent
// stripping, CJK handling). Thread-safe after creation.
class ENCRT_API Tokenizer {
 public:
  // An error (kUnsupported) when the model file carries no vocabulary.
  static Status create(const Model& model, std::unique_ptr<Tokenizer>* out);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // [CLS] word pieces [SEP] of `text` (UTF-8), cut to at most `max_length` ids; an error for text
  // that is not valid UTF-8.
  Status encode(const std::string& text, int max_length, std::vector<int32_t>* ids) const;
  // The word pieces alone, appended to `ids`.
  Status tokenize(const std::string& text, std::vector<int32_t>* ids) const;
  int32_t pad_id() const;  // -1 when the vocabulary has no [PAD]

  // [CLS] text [SEP] with every token's details, as BertTokenizerFast(text) gives them. An empty
  // (or all-whitespace) text gives [CLS] [SEP].
  Status encode(const std::string& text, const EncodeOptions& options, Encoding* out) const;
  // [CLS] first [SEP] second [SEP], token types 0 up to and with the first [SEP] and 1 after it, as
  // BertTokenizerFast(first, second) gives them; options.truncation chooses what is cut. Either
  // text may be empty (its side is then no tokens).
  Status encode_pair(const std::string& first, const std::string& second, const EncodeOptions& options,
                     Encoding* out) const;
  // Each text (or pair) encoded as above, then padded with [PAD] to the longest. An empty list is
  // an error; padding needs the vocabulary's [PAD] (an error without it, when lengths differ).
  Status encode_batch(const std::vector<std::string>& texts, const EncodeOptions& options, BatchEncoding* out) const;
  Status encode_pair_batch(const std::vector<std::pair<std::string, std::string>>& pairs,
                           const EncodeOptions& options, BatchEncoding* out) const;
  int32_t unk_id() const;  // -1 when the vocabulary has no [UNK]

  struct Impl;  // the library's own (opaque here)

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How a run lays out a batch whose sequences have padding (SessionOptions::padding).
//   kPacked: only the real tokens (attention_mask == 1) are computed: the session packs them,
//            sequence after sequence, each keeping its original position for the position
//            embeddings; the GEMMs, LayerNorms and quantization run on the real tokens only,
//            attention and pooling per sequence over its own real tokens. Token-level outputs
//            ("hidden", and a token classifier's "logits", "scores", "labels") are expanded back
//            to [batch, seq, ...] with every padding position all zero bytes (a padded run
//            leaves meaningless values there); sentence-level outputs are those of a padded run.
//            Real-token outputs equal the padded run's bit for bit on the CPU backend for
//            right-padded sequences (the kernels are row-independent); a mask with holes may
//            differ by a few ulps (NEON fp32 attention; README "Packed batches"). A sequence with no real token gets zero rows and the pooled output a
//            padded run gives it with mean or max pooling (zeros).
//   kPadded: every [batch, seq] position is computed, as before packing existed.
//   kAuto:   packed when the batch has padding and the session can pack, else padded (what a
//            run does never changes the real-token results).
// A session can pack when every op's backend runs packed (the CPU backend does; xnnpack and
// cuda not yet) and the model has no attention window; the attention-probabilities output
// (attention_layer) is padded too. Per run, a src mask, or first-token pooling (CLS, BERT's
// pooler) with a sequence whose position 0 is padding, needs the padded layout. kPacked where
// the session cannot pack is an error at create(); where the run cannot, an error at run()
// naming why. An observed run (run(inputs, observer)) in kAuto runs padded, so that observers
// see batch · seq rows.
enum class Padding : uint8_t { kAuto = 0, kPacked = 1, kPadded = 2 };

struct SessionOptions {
  int max_batch = 1;
  int max_seq = 128;
  int threads = 1;
  // >= 0: keep the attention probabilities of this layer (output "attention").
  int attention_layer = -1;
  // The backend that runs the ops: "cpu" (encrt's kernels), "xnnpack" (Google's XNNPACK, when
  // this library was built with it; ops XNNPACK lacks run on the CPU backend), or "auto" (the
  // fastest backend measured for each op on this kind of CPU; never fails because an optional
  // backend is missing). An unknown, unbuilt or unavailable backend is an error at create().
  std::string backend = "auto";
  // Options of the backends, by name. The CPU backend knows "isa": one of "scalar", "avx2",
  // "avx2vnni", "avx512", "avx512vnni", "avx512fp16", "amx", "neon", "neondot", "neonfp16",
  // "neoni8mm" (default: the best this CPU supports; ENCRT_ISA may force a lower one). A name
  // no backend of the session knows is an error at create().
  std::map<std::string, std::string> backend_options;
  // Optional caller-owned host arena: at least Session::arena_size() bytes, 64-byte aligned,
  // alive and untouched by the caller while the session lives. Null: the session allocates.
  void* arena = nullptr;
  size_t arena_size = 0;
  // Time every op (Session::profile()); costs two clock reads per op.
  bool profile = false;
  // Plan for a src mask (Inputs::src_mask_bool / src_mask_float) in run(). Off, a run with one
  // is an error. Attention then stays on the CPU backend (other backends do not take the mask).
  bool src_mask = false;
  // Packed or padded runs of batches with padding (Padding above).
  Padding padding = Padding::kAuto;
};

// The shape of a src mask: one [seq, seq] mask for every sequence of the batch, or one per
// sequence, [batch, seq, seq] (PyTorch's 3-D attn_mask is [batch * heads, seq, seq]: encrt's
// [batch, seq, seq] is that with each sequence's mask repeated for every head).
enum class SrcMaskShape : uint8_t { kSeqSeq = 0, kBatchSeqSeq = 1 };

// Inputs of one run. All arrays are row-major and owned by the caller; they are read during
// run() only.
struct Inputs {
  int batch = 0;
  int seq = 0;
  const int32_t* input_ids = nullptr;       // [batch, seq], required, each in [0, vocab_size)
  const int32_t* attention_mask = nullptr;  // [batch, seq], optional: 1 = real token, 0 = padding
  const int32_t* token_type_ids = nullptr;  // [batch, seq], optional (BERT): each in [0, type_vocab_size)
  // Optional, with SessionOptions::src_mask: which keys each query may attend, as the `mask`
  // argument of nn.TransformerEncoder (nn.MultiheadAttention's attn_mask) takes it: causal,
  // block, graph-adjacency masks. At most one of the two, shaped as src_mask_shape says; it
  // applies to every layer and head, together with attention_mask (the key padding mask).
  //   src_mask_bool:  1 = query i may NOT attend key j, 0 = it may (PyTorch's convention for
  //                   bool masks, the opposite of attention_mask's); other values are an error.
  //   src_mask_float: added to the scaled scores before the softmax; -inf = may not attend.
  //                   NaN and +inf are errors (they would turn the row into NaN).
  // A query that may attend no key (a fully masked row) gets a zero attention output: PyTorch
  // gives NaN there, which then spreads through the token and, by mean pooling, to the
  // sentence; zeros keep the rest of the batch usable, as for an all-padding sequence.
  const uint8_t* src_mask_bool = nullptr;
  const float* src_mask_float = nullptr;
  SrcMaskShape src_mask_shape = SrcMaskShape::kSeqSeq;
};

// An output of the last run, by name:
//   "hidden"     [batch, seq, hidden]  the last hidden state
//   "pooled"     [batch, hidden]       the model's pooling (mean, CLS, pooler or max; L2-normalized
//                                      when ModelConfig::normalize)
//   "attention"  [batch, heads, seq, seq] probabilities of SessionOptions::attention_layer
// and, for a model with a task head (HeadInfo), f32 [batch, num_labels] for a sequence classifier
// or [batch, seq, num_labels] for a token classifier:
//   "logits"     the classifier's outputs
//   "scores"     the logits through HeadInfo::score_function (softmax probabilities, sigmoids)
//   "labels"     i32 [batch] or [batch, seq], single-label heads only: each row's best label id
//                (the first of equal logits)
struct OutputInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string device;          // "host", or the device memory it lives in (e.g. "cuda:0")
  const void* data = nullptr;  // in that memory: readable by the host only when device == "host"
  size_t bytes = 0;
};

// One planned intermediate: where it lives in its memory's arena and between which ops it is
// alive.
struct PlannedBuffer {
  std::string name;
  std::string memory;  // "host", or a device memory
  size_t offset = 0;
  size_t size = 0;
  int first_op = 0;
  int last_op = 0;
};

// Which backend runs an op, and with what.
struct OpPlacement {
  std::string label;           // e.g. "layers.3.ffn.up"
  std::string kind;            // "linear", "attention", "copy", ...
  std::string backend;         // "cpu", "xnnpack", ...
  std::string implementation;  // the kernel or operator, e.g. "x86::qu8s8_gemm_8x48__avx512vnni"
};

// What each backend of a session holds.
struct BackendUsage {
  std::string name;
  std::string memory;             // where its buffers live ("host", ...)
  size_t weights_in_place = 0;    // model-file bytes it reads where they are mapped
  size_t weights_copied = 0;      // weights it copied or uploaded as they are
  size_t weights_packed = 0;      // weights it repacked into a layout of its own
  size_t arena = 0;               // the arena of its memory (shared by the backends of that memory)
  std::string summary;            // kernels or operators chosen, threads, device
};

// What an observer sees after each op of a run (for calibration and debugging tools; the
// pointers are valid only during the callback).
struct OpOutput {
  const std::string& label;   // e.g. "layers.2.ffn.up", "layers.2.attention", "embeddings"
  const char* kind;           // "linear", "attention", "layer_norm", ...
  int layer;                  // -1 outside the layers
  const float* input;         // fp32 input rows [rows, input_width], or null (int8 or in-place)
  int input_width;
  const float* output;        // fp32 output rows [rows, output_width], or null
  int output_width;
  int rows;                   // batch * seq for token ops (the real tokens in a packed run), batch for pooled ops
};
using OpObserver = std::function<void(const OpOutput&)>;

struct OpProfile {
  std::string name;  // op label, kind and the kernel it used
  double total_ms = 0.0;
  int64_t calls = 0;
};

class ENCRT_API Session {
 public:
  // Places every op on a backend, plans each memory's arena for (max_batch, max_seq) and
  // prepares the backends. Any batch <= max_batch and seq <= max_seq then runs in it without
  // re-planning or allocating.
  static Status create(const Model& model, const SessionOptions& options,
                       std::unique_ptr<Session>* out);
  // Bytes of host arena a session with these options needs (for a caller-owned arena).
  static Status arena_size(const Model& model, const SessionOptions& options, size_t* bytes);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the encoder. Performs no heap allocation. Checks shapes and every id first.
  Status run(const Inputs& inputs);
  // As run(), calling `observer` after every op (this path may allocate; it is not for serving).
  Status run(const Inputs& inputs, const OpObserver& observer);

  // The outputs this session produces ("hidden", "pooled", "attention" when asked for, and the
  // head's "logits", "scores", "labels").
  std::vector<std::string> output_names() const;
  // An output of the last successful run (kInvalidArgument for an unknown name or before a run).
  Status output(const std::string& name, OutputInfo* info) const;
  // Copies an output of the last successful run to host memory `dst` of `capacity` bytes.
  Status copy_output(const std::string& name, void* dst, size_t capacity) const;

  // Host views of the last successful run's outputs, valid until the next run() or the
  // session's end; null before a run, or when the output lives in device memory.
  const float* last_hidden_state() const;  // [batch, seq, hidden]
  const float* pooled() const;             // [batch, hidden] (the model's pooling)
  const float* attention_probs() const;    // [batch, heads, seq, seq] or null
  int batch() const;
  int seq() const;

  size_t arena_bytes() const;  // the host arena
  const std::vector<PlannedBuffer>& planned_buffers() const;
  size_t intermediates_total_bytes() const;  // the sum of all planned buffers' sizes
  std::vector<OpPlacement> placement() const;
  std::vector<BackendUsage> backends() const;
  std::string kernel_summary() const;  // the backends and the kernels they chose, in one line
  // Device time of the last successful run in ms, measured with the device's own events (a GPU
  // backend's), or -1 when no op runs on a device.
  double last_run_device_ms() const;
  // Whether the last successful run computed the real tokens only (SessionOptions::padding).
  bool last_run_packed() const;
  std::vector<OpProfile> profile() const;
  void reset_profile();

  struct Impl;  // the library's own (opaque here)

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The backends this build knows, whether each is built in and available on this machine, and
// why not. `auto` chooses among the available ones.
struct BackendStatus {
  std::string name;
  bool built = false;
  bool available = false;
  std::string detail;  // what it is, or why it cannot run here
};
ENCRT_API std::vector<BackendStatus> available_backends();

// Tuning: which of a backend's options make a model run fastest on this machine, at one shape.
// Backends offer several kernels for the same op where which is faster depends on the device (a
// Jetson's GPU and an H200 differ, as do CPUs): tune_backend_options measures them here, on the
// model and shape the application runs, and returns the options to pass to Session::create.
//
// It creates a session with `base` (the defaults: base.backend_options as given) and then, for
// each option the backend lists as tunable (BackendInterface::tuning), in the backend's order,
// a session with each other value on top of the best options so far (a greedy search: one pass,
// each option tried once, values that contradict the options taken so far are refused by the
// backend and recorded). A candidate must give the same answers: every token's hidden state of a
// run on fixed random ids (every token real) has a cosine of at least min_cosine with the
// defaults'; else it is rejected as differing, however fast. Then it is measured side by side with
// the best so far, alternately, `rounds` times `iters` runs each (the medians of each round's
// median), on the backend's own clock where it has one (device events: GPU time) and the wall
// clock otherwise, and taken when faster by at least min_gain. The defaults and the result are
// measured side by side once more at the end (where nothing was taken, the defaults are timed once
// and both times are theirs). Runs only when called: creating a session never tunes, and nothing
// is saved.
struct TuneTrial {
  std::string option;  // "key=value"
  // "taken", "not faster", "differs" (other answers), "refused" (Session::create said no), or
  // "failed" (created, but a run or the timing failed: a device error, say)
  std::string outcome;
  std::string detail;       // the refusal's or failure's message, or what differed
  double ms = -1.0;         // the candidate's time (median), when measured
  double best_ms = -1.0;    // the best options' time in the same comparison
  double min_cosine = -1.0;  // its worst token against the defaults, when it ran
};
struct TuneOptions {
  int batch = 1;
  int seq = 128;
  int iters = 20;            // runs per measurement
  int rounds = 3;            // alternating measurements per comparison
  double min_gain = 0.03;    // a candidate is taken when at least 3% faster
  double min_cosine = 0.99;  // ... and when every token's hidden state agrees with the defaults'
  // > 0: no candidate is started once this many seconds have passed since the first one began (the
  // defaults' session and the final comparison come on top; the result is the best found by then,
  // and says which candidate it stopped before); 0: no limit.
  double max_seconds = 0.0;
  std::function<void(const TuneTrial&)> progress;  // optional: called after each trial
};
struct TuneResult {
  std::string backend;                          // whose options were tuned
  std::string backend_summary;                  // that backend in the defaults' session: device, kernels (BackendUsage)
  std::map<std::string, std::string> options;  // the backend options to use (base's and those taken)
  bool device_time = false;                     // the times are the device's own (GPU time), not wall
  double default_ms = -1.0, tuned_ms = -1.0;    // base against the result, side by side at the end
  std::vector<TuneTrial> trials;
  // Where TuneOptions::max_seconds ran out: the first candidate not tried ("key=value"; it and the
  // ones after it were not tried); empty: every candidate was.
  std::string stopped_before;
};
// Every session it creates is planned for the shape it runs (max_batch = batch, max_seq = seq;
// base's are not used). Errors: the base session cannot be created or run (a shape the model does
// not take among them), a shape below 1, iters, rounds, min_gain or min_cosine out of range.
ENCRT_API Status tune_backend_options(const Model& model, const SessionOptions& base, const TuneOptions& options,
                                      TuneResult* out);

ENCRT_API const char* version();

// Named entities from a token classifier's per-token label probabilities, as Hugging Face's
// TokenClassificationPipeline aggregates them (transformers 4.40 pipelines/token_classification.py).
//   kNone     every token that is not an added special token, with its own label ("B-PER").
//   kSimple   tokens grouped into entities: a token joins the group before it when its tag (the
//             label without "B-"/"I-"; a label without a prefix is its own tag and counts as "I-")
//             is the group's tag and it is not "B-"; the group's score is the mean of its tokens'.
//   kFirst, kAverage, kMax   first the tokens of a word agree on one label: the first token's, the
//             label of the mean of the word's probabilities, or that of the word's most confident
//             token; then words are grouped as kSimple groups tokens.
// Hugging Face's pipeline defaults to none; these functions to kSimple.
enum class EntityAggregation : uint8_t { kNone = 0, kSimple = 1, kFirst = 2, kAverage = 3, kMax = 4 };
ENCRT_API const char* entity_aggregation_name(EntityAggregation aggregation);  // "none", "simple", ...
ENCRT_API Status parse_entity_aggregation(const std::string& name, EntityAggregation* out);

// Which tokens continue the word before them (for kFirst, kAverage, kMax).
enum class SubwordRule : uint8_t {
  // The pipeline's rule for WordPiece tokenizers: a token continues a word when its vocabulary text
  // is not as long (in code points) as the text it covers ("##ing" covers "ing"); an unknown token
  // never does. Where normalization changes lengths (Hangul syllables become jamo pieces, "ǅ"
  // becomes "dz") it can split or join words differently from the word ids.
  kPipeline = 0,
  // A token continues a word when its word id is the one of the token before it.
  kWordIds = 1,
};

struct EntityOptions {
  EntityAggregation aggregation = EntityAggregation::kSimple;
  // Entities with these labels (kNone: the token's label; else the group's tag) are dropped.
  std::vector<std::string> ignore_labels = {"O"};
  SubwordRule subwords = SubwordRule::kPipeline;
  // The vocabulary's unknown token (Tokenizer::unk_id()), which kPipeline never counts as a subword.
  int32_t unk_id = -1;
};

struct Entity {
  std::string label;   // kNone: the token's label ("B-PER"); else the group's tag ("PER")
  float score = 0.0f;  // the label's probability (of a group: the mean over its tokens or words)
  size_t start = 0;    // [start, end): UTF-8 byte offsets into the text
  size_t end = 0;
  std::string word;    // text.substr(start, end - start) (the pipeline's "word" is the decoded tokens)
  int first_token = 0;  // the tokens of the encoding it spans (kNone: its token, the pipeline's "index")
  int last_token = 0;
};

// The entities of `text` from `scores`: [encoding.size(), num_labels] row-major label probabilities
// (softmax of a token classifier's logits) for the tokens of `encoding`, which must be `text`'s own
// (Tokenizer::encode, or a row of a BatchEncoding: padding and added special tokens are skipped).
// `labels`: num_labels names by label index (the model's id2label), BIO/IOB2 ("B-PER", "I-PER", "O")
// or plain. Errors (kInvalidArgument): null pointers, a label count other than num_labels, scores
// that are not finite, an encoding of a pair, or offsets outside the text.
ENCRT_API Status aggregate_entities(const std::string& text, const Encoding& encoding, const float* scores,
                                    int num_labels, const std::vector<std::string>& labels,
                                    const EntityOptions& options, std::vector<Entity>* out);

}  // namespace encrt
