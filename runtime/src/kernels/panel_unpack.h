// PanelN16 weights (kernel_types.h) back to row-major [N, K], for backends whose GEMMs take their
// own layouts (XNNPACK repacks them; cuBLASLt reads [N, K] directly).
#pragma once

#include <cstddef>

#include "kernels/kernel_types.h"

namespace encrt::kernels {

template <typename T>
void unpack_panel_n16(int N, int K, const T* packed, T* rowmajor) {
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) rowmajor[static_cast<size_t>(n) * K + k] = packed[panel_f32_index(n, k, K)];
}

}  // namespace encrt::kernels
