#include "plan/token_layout.h"

#include <cstring>

namespace encrt::plan {

TokenLayout pack_tokens(const int32_t* mask, int batch, int seq, int32_t* offsets, int32_t* source) {
  int32_t rows = 0;
  for (int b = 0; b < batch; ++b) {
    offsets[b] = rows;
    const int32_t first = b * seq;
    for (int t = 0; t < seq; ++t)
      if (!mask || mask[first + t] != 0) source[rows++] = first + t;
  }
  offsets[batch] = rows;
  TokenLayout layout;
  layout.tokens = rows;
  layout.offsets = offsets;
  layout.source = source;
  return layout;
}

size_t rows_in_run(const Graph& graph, int buffer, int batch, int seq, const TokenLayout* packed) {
  const BufferSpec& b = graph.buffers[static_cast<size_t>(buffer)];
  if (!packed || b.rows != Rows::kTokens || b.storage == Storage::kInput) return rows_of(b, batch, seq);
  if (b.mirror_of >= 0 && graph.buffers[static_cast<size_t>(b.mirror_of)].storage == Storage::kInput)
    return rows_of(b, batch, seq);
  return static_cast<size_t>(packed->tokens);
}

// Rows move from the last to the first: source[r] >= r and source increases, so a row's new place
// is never a packed row that has not moved yet.
void expand_rows(const TokenLayout& layout, int batch, int seq, size_t row_bytes, void* data) {
  unsigned char* base = static_cast<unsigned char*>(data);
  const size_t total = static_cast<size_t>(batch) * static_cast<size_t>(seq);
  size_t next = total;  // the first position already final (a moved row or zeroed padding)
  for (int r = layout.tokens; r-- > 0;) {
    const size_t to = static_cast<size_t>(layout.source[r]);
    if (to + 1 < next) std::memset(base + (to + 1) * row_bytes, 0, (next - to - 1) * row_bytes);
    if (to != static_cast<size_t>(r)) std::memmove(base + to * row_bytes, base + static_cast<size_t>(r) * row_bytes, row_bytes);
    next = to;
  }
  if (next > 0) std::memset(base, 0, next * row_bytes);
}

}  // namespace encrt::plan
