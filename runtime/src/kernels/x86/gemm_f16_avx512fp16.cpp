// f16_gemm_8x48__avx512fp16: the fp16-arithmetic GEMM of gemm_f16_arith_avx512.h with the native
// AVX512-FP16 instructions (vfmadd231ph).
#include "kernels/x86/gemm_f16_arith_avx512.h"

namespace encrt::kernels::x86 {
namespace {

struct NativeFp16 {
  using Vec = __m512h;
  static ENCRT_X86_INLINE Vec zero() { return _mm512_setzero_ph(); }
  static ENCRT_X86_INLINE Vec from_bits(__m512i v) { return _mm512_castsi512_ph(v); }
  static ENCRT_X86_INLINE __m512i to_bits(Vec v) { return _mm512_castph_si512(v); }
  static ENCRT_X86_INLINE Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ph(a, b, c); }
};

}  // namespace

void f16_gemm_8x48__avx512fp16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C,
                               int ldc, const GemmEpilogue& ep) {
  f16_arith_gemm<NativeFp16>(M, N, K, A, lda, W, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
