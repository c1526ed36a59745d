// The rows of a packed run: only the real tokens of a [batch, seq] batch, sequence after
// sequence, with no padding between them (what TensorRT's variable-length BERT and
// FasterTransformer's padding removal do). Row-wise ops (embedding, GEMMs, LayerNorm, quantize)
// then work on `tokens` rows instead of batch · seq; attention and pooling work per sequence on
// its own rows; token-level outputs are expanded back to [batch, seq] at the end of the run.
//
// The layout is computed once per run from the attention mask into arrays the session owns
// (sized for max_batch × max_seq at creation), and reaches the backends through
// backend::RunArgs::packed. A token keeps its original position (source % seq) for the position
// embeddings, as Hugging Face uses arange(seq) positions whatever the mask says.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/graph.h"

namespace encrt::plan {

struct TokenLayout {
  int tokens = 0;                    // real tokens in the batch: rows of every packed buffer
  const int32_t* offsets = nullptr;  // [batch + 1]: sequence b's rows are offsets[b] .. offsets[b + 1] - 1
  const int32_t* source = nullptr;   // [tokens]: each row's index b · seq + t in the [batch, seq] inputs, increasing
};

// Fills `offsets` ([batch + 1]) and `source` ([batch · seq] capacity) from a [batch, seq] 0/1
// mask (null: every token real) and returns the layout over them.
TokenLayout pack_tokens(const int32_t* mask, int batch, int seq, int32_t* offsets, int32_t* source);

// Rows of buffer `buffer` in a run of (batch, seq), packed when `packed` is set: the token rows
// of the graph's own buffers shrink to the real tokens; the caller's [batch, seq] arrays (inputs)
// and their mirrors in other memories keep batch · seq rows.
size_t rows_in_run(const Graph& graph, int buffer, int batch, int seq, const TokenLayout* packed);

// Expands `layout.tokens` packed rows of `row_bytes` each, at the start of `data`, in place to
// [batch, seq] rows: row r moves to source[r], and every padding position becomes zero bytes.
// `data` holds batch · seq rows.
void expand_rows(const TokenLayout& layout, int batch, int seq, size_t row_bytes, void* data);

}  // namespace encrt::plan
