// The workspaces of the AVX2 int8 GEMMs that re-encode their rows (gemm_u8s8_rows_avx2.h). Built
// without ISA flags: the kernel table and the executor call it on any x86 CPU.
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

size_t qu8s8_encoded_rows_workspace(int K) {
  const size_t groups = K > 0 ? (static_cast<size_t>(K) + kPanelK - 1) / kPanelK : 0;
  return static_cast<size_t>(kEncodedRows) * kEncodedGroupBytes * groups;
}

size_t qu8s8_widened_workspace(int K) {
  const size_t groups = K > 0 ? (static_cast<size_t>(K) + kPanelK - 1) / kPanelK : 0;
  // The block's encoded rows, the widened half panel, and slack to put the latter on a cache line.
  return static_cast<size_t>(kWidenedBlockRows) * kEncodedGroupBytes * groups + 64 * groups + 64;
}

}  // namespace encrt::kernels::x86
