// The AMX int8 GEMM code of emulated_kernels.h on the tests' emulated tiles. Compiled with AVX-512
// flags (tests/CMakeLists.txt, *_avx512.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/gemm_u8s8_amx.h"
#include "emulated_kernels.h"
#include "forwarded_tiles.h"

namespace encrt::kernels::test {

void qu8s8_amx_gemm_emulated(TileOperations& tiles, int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                             const int32_t* w_sum, const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  ForwardedTiles forwarded(tiles);
  x86::qu8s8_amx_gemm(forwarded, M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
