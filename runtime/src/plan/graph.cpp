#include "plan/graph.h"

namespace encrt::plan {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbed: return "embed";
    case OpKind::kLayerNorm: return "layer_norm";
    case OpKind::kQuantize: return "quantize";
    case OpKind::kLinear: return "linear";
    case OpKind::kAttention: return "attention";
    case OpKind::kPoolMean: return "pool_mean";
    case OpKind::kPoolFirst: return "pool_first";
    case OpKind::kTanh: return "tanh";
    case OpKind::kCopy: return "copy";
    case OpKind::kPoolMax: return "pool_max";
    case OpKind::kL2Normalize: return "l2_normalize";
    case OpKind::kScores: return "scores";
  }
  return "unknown";
}

const NamedTensor* Graph::input(const std::string& name) const {
  for (const NamedTensor& t : inputs)
    if (t.name == name) return &t;
  return nullptr;
}

const NamedTensor* Graph::output(const std::string& name) const {
  for (const NamedTensor& t : outputs)
    if (t.name == name) return &t;
  return nullptr;
}

int Graph::add_buffer(BufferSpec spec) {
  buffers.push_back(std::move(spec));
  return static_cast<int>(buffers.size()) - 1;
}

size_t max_rows(Rows rows, int max_batch, int max_seq) {
  switch (rows) {
    case Rows::kTokens: return static_cast<size_t>(max_batch) * static_cast<size_t>(max_seq);
    case Rows::kSequences: return static_cast<size_t>(max_batch);
    case Rows::kFixed: return 1;
    case Rows::kPairs: return static_cast<size_t>(max_batch) * static_cast<size_t>(max_seq) * static_cast<size_t>(max_seq);
  }
  return 0;
}

}  // namespace encrt::plan
