// The encoder as a flat list of typed ops over numbered buffers, in the runtime's own terms: no
// backend, no FlatBuffers type, no config string. Each op lists the buffers it reads and the
// buffers it writes; everything about memory (lifetimes, copies between backends, arena
// offsets) is derived from those lists. Buffers are sized for the session's maximum shape
// (max_batch * max_seq rows); a smaller run uses a prefix of each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "encrt/encrt.hpp"
#include "kernels/kernel_types.h"
#include "model/model_impl.h"

namespace encrt::plan {

enum class OpKind : uint8_t {
  kEmbed,      // ids (+ token types) -> hidden rows: gather, scale, add positions (+ LayerNorm)
  kLayerNorm,  // rows -> rows (in place allowed)
  kQuantize,   // fp32 rows -> uint8 rows + per-row scale and zero point (for int8 linears)
  kLinear,     // rows [M, K] -> rows [M, N] with bias, activation and residual epilogue
  kAttention,  // fused QKV rows -> context rows (+ probabilities)
  kPoolMean,   // hidden rows -> [batch, hidden], mean over real tokens
  kPoolFirst,  // hidden rows -> [batch, hidden], the first token of each sequence
  kTanh,       // in place
  kCopy,       // a buffer into its mirror in another memory (inserted by placement)
  kPoolMax,    // hidden rows -> [batch, hidden], per channel the largest over real tokens
  kL2Normalize,  // rows -> rows divided by their L2 norm (at least 1e-12)
  kScores,     // logit rows -> scores (softmax, sigmoid or identity) + optional argmax label ids
};
constexpr int kOpKindCount = 12;
const char* op_kind_name(OpKind kind);

// How many rows of a buffer a run uses, as a function of its (batch, seq). kPairs: one row per
// (sequence, query, key), batch · seq · seq (the src masks; a mask shared by the batch uses the
// first seq · seq of them).
enum class Rows : uint8_t { kTokens, kSequences, kFixed, kPairs };

// kArena: planned in its memory's arena. kInput: the caller's array, bound at run() (may be
// null for an optional input).
enum class Storage : uint8_t { kArena, kInput };

// Memory spaces. 0 is the host; placement adds one per device backend.
constexpr int kHostMemory = 0;

struct BufferSpec {
  std::string name;
  DType dtype = DType::kF32;
  Rows rows = Rows::kTokens;
  size_t row_bytes = 0;  // bytes per row (kTokens / kSequences); bytes in all for kFixed
  size_t max_bytes = 0;  // planned size
  size_t pad_bytes = 0;  // readable bytes after the data (a backend's read overrun)
  Storage storage = Storage::kArena;
  int memory = kHostMemory;
  int mirror_of = -1;    // a copy of this buffer in another memory (placement's mirrors)
};

// A symbolic dimension of a graph input or output.
struct Dim {
  enum Kind : uint8_t { kBatch, kSeq, kFixed } kind = kFixed;
  int64_t value = 0;  // kFixed
};

// A named graph input or output.
struct NamedTensor {
  std::string name;
  int buffer = -1;
  std::vector<Dim> shape;
};

// ---- Parameters per op kind.
struct EmbedParams {
  const detail::TableView* word = nullptr;
  const detail::TableView* position = nullptr;
  const detail::TableView* token_type = nullptr;  // null: the model has no token types
  float scale = 1.0f;                             // applied to the word embedding
  const detail::NormView* norm = nullptr;         // null: no LayerNorm after the sum
  float eps = 0.0f;
  int width = 0;
};
struct LayerNormParams {
  const detail::NormView* norm = nullptr;
  float eps = 0.0f;
  int width = 0;
};
struct QuantizeParams {
  const detail::LinearView* linear = nullptr;  // the linear it feeds: K and activation multipliers
};
struct LinearParams {
  const detail::LinearView* weights = nullptr;
  kernels::Activation activation = kernels::Activation::kNone;
};
struct AttentionParams {
  int heads = 0;
  int head_dim = 0;
  float scale = 1.0f;  // 1 / sqrt(head_dim)
  bool int8 = false;
  int window = 0;      // > 0: sliding-window attention, keys within ±window of the query
};
struct RowsParams {  // pooling and tanh
  int width = 0;
};
struct CopyParams {
  int from_memory = kHostMemory;
  int to_memory = kHostMemory;
};
struct ScoresParams {
  int width = 0;  // labels per row
  detail::ScoreFunction function = detail::ScoreFunction::kSoftmax;
};
using OpParams = std::variant<EmbedParams, LayerNormParams, QuantizeParams, LinearParams, AttentionParams,
                              RowsParams, CopyParams, ScoresParams>;

// Operand slots of each kind (-1 in a slot: an optional operand that is absent):
//   kEmbed      in: [ids, token_types]                 out: [x]
//   kLayerNorm  in: [x]                                out: [y]  (y may be x)
//   kQuantize   in: [x]                                out: [q, scale, zero_point]
//   kLinear     in: [x, residual, x_scale, x_zp]       out: [y]  (int8: x is the quantized rows)
//   kAttention  in: [qkv, mask, src_mask_bool, src_mask_float]  out: [context, probs]
//   kPoolMean   in: [x, mask]                          out: [pooled]
//   kPoolFirst  in: [x]                                out: [pooled]
//   kTanh       in: [x]                                out: [x]
//   kCopy       in: [src]                              out: [dst]
//   kPoolMax    in: [x, mask]                          out: [pooled]
//   kL2Normalize in: [x]                               out: [y]
//   kScores     in: [logits]                           out: [scores, labels]  (labels: i32, optional)
namespace slot {
constexpr int kX = 0;
constexpr int kEmbedTokenTypes = 1;
constexpr int kLinearResidual = 1, kLinearScale = 2, kLinearZeroPoint = 3;
constexpr int kQuantizeScale = 1, kQuantizeZeroPoint = 2;
constexpr int kAttentionMask = 1, kAttentionProbs = 1;
constexpr int kAttentionSrcMaskBool = 2, kAttentionSrcMaskFloat = 3;
constexpr int kPoolMask = 1;
constexpr int kScoresLabels = 1;
}  // namespace slot

struct Op {
  OpKind kind = OpKind::kEmbed;
  std::string label;  // e.g. "layers.3.ffn.up"
  int layer = -1;
  std::vector<int> inputs;
  std::vector<int> outputs;
  int scratch = -1;  // workspace the op's backend asked for at plan time (kFixed bytes)
  OpParams params;
  bool head = false;  // an op of the task head (after the encoder's hidden and pooled outputs)

  int in(int s) const { return s < static_cast<int>(inputs.size()) ? inputs[static_cast<size_t>(s)] : -1; }
  int out(int s) const { return s < static_cast<int>(outputs.size()) ? outputs[static_cast<size_t>(s)] : -1; }
  template <typename P>
  const P& p() const { return std::get<P>(params); }
};

struct Graph {
  std::vector<BufferSpec> buffers;
  std::vector<Op> ops;
  std::vector<NamedTensor> inputs;   // "input_ids", "attention_mask", "token_type_ids",
                                     // "src_mask_bool", "src_mask_float" (SessionOptions::src_mask)
  std::vector<NamedTensor> outputs;  // "hidden", "pooled", "attention", "logits", "scores", "labels"

  const NamedTensor* input(const std::string& name) const;
  const NamedTensor* output(const std::string& name) const;
  int add_buffer(BufferSpec spec);
};

// Rows of a buffer in a run of (batch, seq).
inline size_t rows_of(const BufferSpec& b, int batch, int seq) {
  switch (b.rows) {
    case Rows::kTokens: return static_cast<size_t>(batch) * static_cast<size_t>(seq);
    case Rows::kSequences: return static_cast<size_t>(batch);
    case Rows::kFixed: return 1;
    case Rows::kPairs: return static_cast<size_t>(batch) * static_cast<size_t>(seq) * static_cast<size_t>(seq);
  }
  return 0;
}
// Bytes of a buffer in use in a run of (batch, seq).
inline size_t bytes_of(const BufferSpec& b, int batch, int seq) { return rows_of(b, batch, seq) * b.row_bytes; }

// A buffer's rows at the session's maximum shape.
size_t max_rows(Rows rows, int max_batch, int max_seq);

}  // namespace encrt::plan
