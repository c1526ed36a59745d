// The workspace size of the ARM int8 GEMMs that flip their rows once per block
// (gemm_u8s8_neon.cpp, gemm_u8s8_neondot.cpp), in a file built without ISA flags: the CPU backend
// asks for it while planning, on any ARM CPU.
#include "kernels/arm/arm_kernels.h"

namespace encrt::kernels::arm {

size_t qu8s8_encoded_rows_workspace(int K) { return static_cast<size_t>(kEncodedBlockRows) * encoded_row_bytes(K); }

}  // namespace encrt::kernels::arm
