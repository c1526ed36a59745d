// The AVX-VNNI int8 GEMM code of emulated_kernels.h, with its emulated instruction. Compiled with AVX2
// flags (tests/CMakeLists.txt, *_avx2.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/gemm_u8s8_vnni_ymm.h"
#include "emulated_kernels.h"
#include "emulated_vpdpbusd_ymm.h"

namespace encrt::kernels::test {

void qu8s8_vnni_ymm_gemm_emulated(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                                  const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  x86::qu8s8_vnni_ymm_gemm<EmulatedDot>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
