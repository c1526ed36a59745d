// qu8s8_gemm_32x32__amx: the int8 GEMM of gemm_u8s8_amx.h with AMX's tile instructions
// (Sapphire Rapids and later). It runs only where isa_supported() found AMX-INT8, which includes
// Linux's permission for this process to use the tile data (cpu_features.cpp).
#include "kernels/x86/amx_native_tiles.h"
#include "kernels/x86/gemm_u8s8_amx.h"

namespace encrt::kernels::x86 {

void qu8s8_gemm_32x32__amx(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  NativeTiles tiles;
  qu8s8_amx_gemm(tiles, M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
