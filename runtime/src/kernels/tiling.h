// Row scheduling shared by the SIMD GEMM drivers of every ISA (integer code, internal linkage so
// that every kernel file keeps its own copy).
#pragma once

namespace encrt::kernels {
namespace {

// Rows for the next register tile when `remaining` rows are left and a tile holds at most `mr`.
// A remainder that would leave a thin last tile is split into two balanced ones instead (e.g.
// 8 rows left with mr = 6 → 4 + 4, not 6 + 2): thin tiles are load-bound and slow.
inline int next_tile_rows(int remaining, int mr) {
  if (remaining >= 2 * mr || remaining <= mr) return remaining < mr ? remaining : mr;
  return (remaining + 1) / 2;
}

}  // namespace
}  // namespace encrt::kernels
