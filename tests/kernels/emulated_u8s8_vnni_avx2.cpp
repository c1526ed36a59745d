// The AVX-VNNI int8 GEMM code of emulated_kernels.h, with its emulated instruction. Compiled with AVX2
// flags (tests/CMakeLists.txt, *_avx2.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/gemm_u8s8_vnni_ymm.h"
#include "emulated_kernels.h"

namespace encrt::kernels::test {
namespace {

struct EmulatedDot {
  static void dpbusd(__m256i& acc, __m256i a_u8, __m256i w_s8) {
    alignas(32) uint8_t a[32];
    alignas(32) int8_t w[32];
    alignas(32) int32_t c[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(a), a_u8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w), w_s8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c), acc);
    for (int lane = 0; lane < 8; ++lane) {
      uint32_t sum = static_cast<uint32_t>(c[lane]);  // vpdpbusd wraps modulo 2^32
      for (int j = 0; j < 4; ++j) sum += static_cast<uint32_t>(a[4 * lane + j] * w[4 * lane + j]);
      c[lane] = static_cast<int32_t>(sum);
    }
    acc = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
  }
};

}  // namespace

void qu8s8_vnni_ymm_gemm_emulated(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                                  const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  x86::qu8s8_vnni_ymm_gemm<EmulatedDot>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
