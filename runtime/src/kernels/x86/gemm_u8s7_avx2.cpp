// qu8s7_gemm_6x16__avx2: uint8 activations × 7-bit int8 weights (every |w| <= 63,
// kNarrowInt8Weight; the converter's --weight-bits 7) on AVX2 without VNNI, exact.
// vpmaddubsw multiplies unsigned by signed bytes and adds adjacent pairs into int16 with
// saturation; with |w| <= 63 a pair is at most 255·63·2 = 32130 < 32767, so nothing saturates
// and the activations need no re-encoding (the 8-bit weights' routes, gemm_u8s8_rows_avx2.h,
// centre them or widen them to int16 for that). vpmaddwd against ones then adds the pairs into
// int32 and vpaddd accumulates: three instructions per 32 products where the signed route takes
// four (vpsignb first) and the widened one four per 32 (two vpmaddwd, two vpaddd). On an AMD Zen
// 3 register-only: the saturating probe (these three) against the signed one's four.
//
// The tile, loop order and epilogue are the AVX-VNNI kernel's (gemm_u8s8_vnni_ymm.h: 6 rows × 16
// columns, panels outside and row tiles inside, a panel's weights in L1), with vpdpbusd replaced
// by the three instructions. Twelve accumulators, two weight vectors, the broadcast activations
// and the product leave no register for the ones: vpmaddwd reads them from memory (a load
// port, not an ALU one). The integers are the reference's bit for bit, as are the floats.
#include "kernels/x86/gemm_u8s8_vnni_ymm.h"

namespace encrt::kernels::x86 {
namespace {

alignas(32) constexpr int16_t kOnes[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

struct NarrowWeightsMadd {
  // acc += Σ_4 u8(a)·s8(w) per int32 lane, exact for |w| <= 63: vpmaddubsw into int16 pairs,
  // vpmaddwd(ones) into int32, vpaddd. One asm block with acc tied in place and an
  // early-clobbered temporary, so that GCC keeps the accumulators in registers.
  static ENCRT_X86_INLINE void dpbusd(__m256i& acc, __m256i a_u8, __m256i w_s7) {
    __m256i t;
    asm("vpmaddubsw %3, %2, %1\n\t"
        "vpmaddwd %4, %1, %1\n\t"
        "vpaddd %1, %0, %0"
        : "+x"(acc), "=&x"(t)
        : "x"(a_u8), "x"(w_s7), "m"(*reinterpret_cast<const __m256i*>(kOnes)));
  }
};

}  // namespace

void qu8s7_gemm_6x16__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  qu8s8_vnni_ymm_gemm<NarrowWeightsMadd>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
