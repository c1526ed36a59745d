// The loaded model: the mapping, the verified FlatBuffer root, and typed zero-copy views of every
// tensor the encoder graph needs. Everything here is checked once at load; later layers trust it.
// Only the loader reads FlatBuffers types: the views and the spec use the runtime's own enums.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt_generated.h"
#include "kernels/kernel_types.h"
#include "model/mapped_file.h"

namespace encrt::detail {

class DequantizedLinears;

// A linear layer y = x · Wᵀ + b with W [N, K] packed for the kernels.
struct LinearView {
  DType dtype = DType::kF32;           // kF32 | kF16 (PanelN16) or kI8 (PanelN16K4)
  const void* packed = nullptr;
  size_t packed_bytes = 0;
  const float* scales = nullptr;       // I8: [N]
  const int32_t* column_sums = nullptr;  // I8: [N]
  const float* activation_multipliers = nullptr;  // I8, optional: [K], applied before quantizing
  // I8: the largest |w|, -128 counting as 128, as the loader found it; 128 (any) unless known.
  int max_abs_weight = 128;
  const float* bias = nullptr;         // [N]
  int N = 0;
  int K = 0;
  // Set: this F16 view is the int8 linear it points to, dequantized (model/dequantized_linears.h);
  // `packed` is null until a backend that reads the panels needs them (DequantizedLinears::materialize).
  const LinearView* dequantized_from = nullptr;
};

// A row-major [rows, width] table: F32, F16, or I8 with one scale per row.
struct TableView {
  DType dtype = DType::kF32;
  const void* data = nullptr;
  const float* row_scales = nullptr;
  int rows = 0;
  int width = 0;
};

struct NormView {
  const float* gamma = nullptr;
  const float* beta = nullptr;
};

struct LayerView {
  LinearView qkv, attn_out, ffn_up, ffn_down;
  NormView attn_norm, ffn_norm;
};

enum class Pooling : uint8_t { kMean, kCls, kPooler, kMax };

// The encoder's structure in the runtime's terms (ModelConfig keeps the names for display).
struct EncoderSpec {
  int vocab_size = 0, hidden = 0, heads = 0, layers = 0, ffn = 0, max_seq = 0, type_vocab = 0;
  kernels::Activation activation = kernels::Activation::kGelu;
  bool pre_norm = false;
  bool embedding_norm = false;
  bool final_norm = false;
  Pooling pooling = Pooling::kMean;
  bool int8_attention = false;  // the file asks for int8 attention (where the layer is int8)
  float layer_norm_eps = 1e-12f;
  float embedding_scale = 1.0f;
  int attention_window = 0;  // > 0: sliding-window attention (keys within ±window)
  bool normalize = false;  // the pooled output is L2-normalized
  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

// The task head (schema Head) in the runtime's terms; kind kNone: the file has none.
enum class HeadKind : uint8_t { kNone, kSequenceClassification, kTokenClassification };
enum class ScoreFunction : uint8_t { kSoftmax, kSigmoid, kIdentity };
struct HeadView {
  HeadKind kind = HeadKind::kNone;
  ScoreFunction scores = ScoreFunction::kSoftmax;
  bool argmax_labels = false;  // single-label: the "labels" output holds each row's best label id
  Pooling pooling = Pooling::kMean;  // kSequenceClassification: what the classifier reads
  LinearView classifier;             // [num_labels, hidden]
  int num_labels() const { return classifier.N; }
};

// The tokenizer settings of the file's vocabulary (schema Vocabulary), validated.
struct TokenizerInfo {
  bool lowercase = true;
  bool strip_accents = true;  // FollowLowerCase resolved
  bool chinese_chars = true;
  int32_t unk_id = -1, cls_id = -1, sep_id = -1, pad_id = -1, mask_id = -1;
};

struct ModelImpl {
  std::unique_ptr<MappedFile> file;  // null when the caller owns the buffer
  const unsigned char* data = nullptr;
  size_t size = 0;
  const fb::Model* root = nullptr;
  ModelConfig config;
  EncoderSpec spec;
  std::vector<std::string> vocabulary;
  TokenizerInfo tokenizer;

  TableView word, position, token_type;
  NormView embedding_norm, final_norm;
  std::vector<LayerView> layers;
  LinearView pooler;
  HeadView head;
  HeadInfo head_info;  // the same for the public API (labels, names)

  // The int8 linears as fp16 ones (dequantized_linears.h), built on the first call, once for every
  // session of the model (thread-safe).
  const DequantizedLinears& dequantized_linears() const;

 private:
  mutable std::once_flag dequantized_once_;
  mutable std::shared_ptr<const DequantizedLinears> dequantized_;  // shared_ptr: the type is incomplete here
};

// Verifies `data` as a .encrt buffer and fills `impl` (everything but `file`); with
// options.verify_checksums, checks every checksum first (model/checksums.h).
Status load_model_buffer(const unsigned char* data, size_t size, const std::string& origin,
                         ModelImpl* impl, const LoadOptions& options = LoadOptions());

// The first step of loading alone: the FlatBuffers verifier and the alignment of 8-byte vectors,
// so that *root can be read safely (but nothing semantic is checked yet).
Status verify_model_buffer(const unsigned char* data, size_t size, const std::string& origin,
                           const fb::Model** root);

}  // namespace encrt::detail

namespace encrt {
struct Model::Impl : detail::ModelImpl {};
}  // namespace encrt
