// Builds the encoder's op graph from a loaded model: embeddings, the layers (post- or pre-norm),
// the optional final norm and the pooling, with int8 linears preceded by their quantize ops.
#pragma once

#include "plan/graph.h"

namespace encrt::detail {
class DequantizedLinears;
}

namespace encrt::plan {

struct EncoderGraphOptions {
  int max_batch = 1;
  int max_seq = 1;
  int attention_layer = -1;  // >= 0: that layer's attention writes the "attention" output
  bool src_mask = false;     // the graph takes the src mask inputs (every attention op reads them)
  // Set: the int8 linears that have an fp16 view there run as fp16 linears on the unquantized
  // activations (no quantize op before them), and a layer whose QKV linear does takes float
  // attention (model/dequantized_linears.h).
  const detail::DequantizedLinears* dequantized = nullptr;
};

Graph build_encoder_graph(const detail::ModelImpl& model, const EncoderGraphOptions& options);

}  // namespace encrt::plan
