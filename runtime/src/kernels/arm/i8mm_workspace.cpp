// The workspace size of the usmmla int8 GEMM (gemm_u8s8_neoni8mm.cpp), in a file built without ISA
// flags: the CPU backend asks for it while planning, on any ARM CPU.
#include "kernels/arm/arm_kernels.h"

namespace encrt::kernels::arm {

// One panel's whole steps of 4 k-groups (K4 = ceil(K / 4) groups, the last one zero-padded):
// 16 columns × 16 bytes each.
size_t qu8s8_i8mm_workspace(int K) { return K > 0 ? static_cast<size_t>((K + 3) / 4 / 4) * 256 : 0; }

}  // namespace encrt::kernels::arm
