// Canonical tensor names inside a .encrt file. The converter writes these names and the runtime
// looks them up; this header is the one place both read them from.
//
//   embeddings.word              [vocab, hidden]          F32 | F16 | I8 (per-row scales), RowMajor
//   embeddings.position          [max_seq_len, hidden]    F32 | F16, RowMajor (learned or sinusoidal)
//   embeddings.token_type        [type_vocab, hidden]     F32 | F16, RowMajor (if type_vocab_size > 0)
//   embeddings.norm.{weight,bias}[hidden]                 F32 (if embedding_norm)
//   layers.L.attention.qkv.{weight,bias}   [3*hidden, hidden], [3*hidden]   rows: Q, then K, then V
//   layers.L.attention.out.{weight,bias}   [hidden, hidden], [hidden]
//   layers.L.attention.norm.{weight,bias}  [hidden]  post-norm: after attention; pre-norm: before it
//   layers.L.ffn.up.{weight,bias}          [ffn, hidden], [ffn]
//   layers.L.ffn.down.{weight,bias}        [hidden, ffn], [hidden]
//   layers.L.ffn.norm.{weight,bias}        [hidden]
//   final_norm.{weight,bias}               [hidden]  (if final_norm)
//   pooler.{weight,bias}                   [hidden, hidden], [hidden]  (if pooling or the head's pooling == Pooler)
//   head.classifier.{weight,bias}          [num_labels, hidden], [num_labels]  (if the model has a head)
// Linear weights (*.weight of qkv/out/up/down/pooler/head.classifier) are packed: F32/F16 PanelN16, I8 PanelN16K4.
// Biases and norm parameters are always F32 RowMajor.
#pragma once

#include <string>

namespace encrt::names {

inline std::string layer(int l, const char* rest) { return "layers." + std::to_string(l) + "." + rest; }

constexpr const char* kWordEmbeddings = "embeddings.word";
constexpr const char* kPositionEmbeddings = "embeddings.position";
constexpr const char* kTokenTypeEmbeddings = "embeddings.token_type";
constexpr const char* kEmbeddingNormWeight = "embeddings.norm.weight";
constexpr const char* kEmbeddingNormBias = "embeddings.norm.bias";
constexpr const char* kQkvWeight = "attention.qkv.weight";
constexpr const char* kQkvBias = "attention.qkv.bias";
constexpr const char* kAttnOutWeight = "attention.out.weight";
constexpr const char* kAttnOutBias = "attention.out.bias";
constexpr const char* kAttnNormWeight = "attention.norm.weight";
constexpr const char* kAttnNormBias = "attention.norm.bias";
constexpr const char* kFfnUpWeight = "ffn.up.weight";
constexpr const char* kFfnUpBias = "ffn.up.bias";
constexpr const char* kFfnDownWeight = "ffn.down.weight";
constexpr const char* kFfnDownBias = "ffn.down.bias";
constexpr const char* kFfnNormWeight = "ffn.norm.weight";
constexpr const char* kFfnNormBias = "ffn.norm.bias";
constexpr const char* kFinalNormWeight = "final_norm.weight";
constexpr const char* kFinalNormBias = "final_norm.bias";
constexpr const char* kPoolerWeight = "pooler.weight";
constexpr const char* kPoolerBias = "pooler.bias";

constexpr const char* kHeadClassifierWeight = "head.classifier.weight";
constexpr const char* kHeadClassifierBias = "head.classifier.bias";

// The newest format version this build reads. The converter writes the lowest version that
// describes a file: 1 for an encoder alone (older runtimes read it as before), 2 for a file with
// a task head, max pooling or a normalized pooled output (which a version-1 runtime would
// misread or silently ignore).
constexpr unsigned kFormatVersion = 2;
constexpr unsigned kFormatVersionEncoderOnly = 1;

}  // namespace encrt::names
