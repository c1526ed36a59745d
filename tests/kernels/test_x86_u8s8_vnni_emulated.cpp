// The AVX-VNNI int8 GEMM (gemm_u8s8_vnni_ymm.h, the code of qu8s8_gemm_6x16__avxvnni) run with an
// emulated vpdpbusd: every int32 lane adds its four u8 × s8 products. This checks the kernel's
// tiling, tails, epilogue and panel addressing bit for bit against ref::gemm_u8s8 on any AVX2
// CPU, including those without AVX-VNNI where the native kernel cannot run; the native kernel is
// held to the same reference in test_simd_gemm.cpp where the CPU has AVX-VNNI.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <random>
#include <sstream>
#include <vector>

#include "kernels/isa.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/x86/gemm_u8s8_vnni_ymm.h"

namespace {

using namespace encrt::kernels;

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

TEST_CASE("AVX-VNNI int8 GEMM code with emulated vpdpbusd matches ref::gemm_u8s8 bit for bit",
          "[x86][gemm][u8s8]") {
  if (!isa_supported(kIsaAvx2)) {
    WARN("not tested: this CPU has no AVX2");
    return;
  }
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int bad = 0, total = 0;
  std::ostringstream first;
  const Activation acts[] = {Activation::kNone, Activation::kGelu, Activation::kRelu};
  int variant = 0;
  for (int M : {1, 5, 6, 7, 13, 128})
    for (int N : {1, 7, 8, 9, 16, 17, 100})
      for (int K : {1, 3, 4, 5, 64, 385}) {
        const int lda = K + 3, ldc = N + 2;
        std::vector<float> a(static_cast<size_t>(M) * lda), w(static_cast<size_t>(N) * K), bias(N);
        for (float& x : a) x = dist(rng);
        for (float& x : w) x = dist(rng);
        for (float& x : bias) x = dist(rng);
        const int ldq = round_up(K, kPanelK) + 4;
        std::vector<uint8_t> q(static_cast<size_t>(M) * ldq);
        std::vector<float> scale(M), w_scale(N);
        std::vector<int32_t> zp(M), w_sum(N);
        ref::quantize_rows_u8(M, K, a.data(), lda, nullptr, q.data(), ldq, scale.data(), zp.data());
        std::vector<int8_t> packed(panel_i8_size(N, K));
        ref::quantize_pack_weights_i8(N, K, w.data(), packed.data(), w_scale.data(), w_sum.data());
        const QuantizedRows rows{q.data(), ldq, scale.data(), zp.data()};
        GemmEpilogue ep;  // every third problem plain, the others with bias and an activation
        if (variant % 3) {
          ep.bias = bias.data();
          ep.activation = acts[variant % 3];
        }
        ++variant;
        std::vector<float> want(static_cast<size_t>(M) * ldc, -5.0f), got(want);
        ref::gemm_u8s8(M, N, K, rows, packed.data(), w_sum.data(), w_scale.data(), want.data(), ldc, GemmEpilogue{});
        std::vector<float> plain(want);
        x86::qu8s8_vnni_ymm_gemm<EmulatedDot>(M, N, K, rows, packed.data(), w_sum.data(), w_scale.data(), got.data(),
                                              ldc, GemmEpilogue{});
        for (size_t i = 0; i < want.size(); ++i) {
          ++total;
          if (got[i] != want[i] && bad++ < 3)
            first << " (M=" << M << " N=" << N << " K=" << K << " i=" << i << " got " << got[i] << " want "
                  << want[i] << ")";
        }
        // With an epilogue: the same kernel code path as the native one, checked for running
        // and for the padding past N (the values themselves are held to the reference with
        // tolerances in test_simd_gemm.cpp).
        if (ep.bias) {
          std::vector<float> with_ep(static_cast<size_t>(M) * ldc, -5.0f);
          x86::qu8s8_vnni_ymm_gemm<EmulatedDot>(M, N, K, rows, packed.data(), w_sum.data(), w_scale.data(),
                                                with_ep.data(), ldc, ep);
          for (int m = 0; m < M; ++m)
            for (int n = N; n < ldc; ++n) CHECK(with_ep[static_cast<size_t>(m) * ldc + n] == -5.0f);
        }
      }
  INFO(bad << " of " << total << " outputs differ:" << first.str());
  CHECK(bad == 0);
}

#endif  // ENCRT_ARCH_X86
