// The fp16-arithmetic GEMM code of emulated_kernels.h with an emulated vfmadd231ph. Compiled with
// AVX-512 flags (tests/CMakeLists.txt, *_avx512.cpp); nothing here runs before a test calls it.
// (One kernel header per file: each keeps its tile constants in the same namespace.)
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/gemm_f16_arith_avx512.h"
#include "kernels/ref/ref_kernels.h"
#include "emulated_kernels.h"

namespace encrt::kernels::test {
namespace {

struct EmulatedFp16 {
  using Vec = __m512i;
  static Vec zero() { return _mm512_setzero_si512(); }
  static Vec from_bits(__m512i v) { return v; }
  static __m512i to_bits(Vec v) { return v; }
  static Vec fmadd(Vec a, Vec b, Vec c) {
    alignas(64) uint16_t av[32], bv[32], cv[32];
    _mm512_store_si512(av, a);
    _mm512_store_si512(bv, b);
    _mm512_store_si512(cv, c);
    for (int i = 0; i < 32; ++i) cv[i] = ref::half_fma(av[i], bv[i], cv[i]);
    return _mm512_load_si512(cv);
  }
};

}  // namespace

void f16_arith_gemm_emulated(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                             const GemmEpilogue& ep) {
  x86::f16_arith_gemm<EmulatedFp16>(M, N, K, A, lda, W, C, ldc, ep);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
