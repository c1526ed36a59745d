// qu8s8_gemm_6x16__avxvnni: the int8 GEMM of gemm_u8s8_vnni_ymm.h with AVX-VNNI's VEX-encoded
// vpdpbusd (Alder Lake and later laptop and desktop cores, which have no AVX-512).
#include "kernels/x86/avx_vnni_dot.h"
#include "kernels/x86/gemm_u8s8_vnni_ymm.h"

namespace encrt::kernels::x86 {

void qu8s8_gemm_6x16__avxvnni(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                              const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  qu8s8_vnni_ymm_gemm<AvxVnniDot>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
