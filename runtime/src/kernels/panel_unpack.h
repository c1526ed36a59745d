// PanelN16 weights (kernel_types.h) back to row-major [N, K], for backends whose GEMMs take their
// own layouts (XNNPACK repacks them; cuBLASLt reads [N, K] directly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kernel_types.h"

namespace encrt::kernels {

template <typename T>
void unpack_panel_n16(int N, int K, const T* packed, T* rowmajor) {
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) rowmajor[static_cast<size_t>(n) * K + k] = packed[panel_f32_index(n, k, K)];
}

// PanelN16K4 int8 weights (panel_i8_index) back to row-major rows: row n < N, column k < K of
// `rowmajor` [rows, ld] is weight (n, k); the rest (rows N .. rows − 1, columns K .. ld − 1) is 0, so
// a GEMM over the padded shape adds nothing for them. rows >= N, ld >= K.
inline void unpack_panel_n16k4(int N, int K, const int8_t* packed, int rows, int ld, int8_t* rowmajor) {
  std::memset(rowmajor, 0, static_cast<size_t>(rows) * static_cast<size_t>(ld));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) rowmajor[static_cast<size_t>(n) * ld + k] = packed[panel_i8_index(n, k, K)];
}

}  // namespace encrt::kernels
