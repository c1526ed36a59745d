// qu8s8_gemm_6x16__avxvnni: the int8 GEMM of gemm_u8s8_vnni_ymm.h with AVX-VNNI's VEX-encoded
// vpdpbusd (Alder Lake and later laptop and desktop cores, which have no AVX-512).
#include "kernels/x86/gemm_u8s8_vnni_ymm.h"

namespace encrt::kernels::x86 {
namespace {

struct AvxVnniDot {
  // acc += Σ_4 u8(a)·s8(w) per int32 lane. As asm with acc tied in place, for the reason given
  // at dpbusd in gemm_u8s8_avx512vnni.cpp; {vex} (written %{vex%} in GCC asm) selects
  // the AVX-VNNI encoding.
  static ENCRT_X86_INLINE void dpbusd(__m256i& acc, __m256i a_u8, __m256i w_s8) {
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a_u8), "x"(w_s8));
  }
};

}  // namespace

void qu8s8_gemm_6x16__avxvnni(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                              const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  qu8s8_vnni_ymm_gemm<AvxVnniDot>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
