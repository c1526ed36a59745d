// The AVX-VNNI int8 GEMM (gemm_u8s8_vnni_ymm.h, the code of qu8s8_gemm_6x16__avxvnni) run with an
// emulated vpdpbusd: every int32 lane adds its four u8 × s8 products. This checks the kernel's
// tiling, tails, epilogue and panel addressing bit for bit against ref::gemm_u8s8 on any AVX2
// CPU, including those without AVX-VNNI where the native kernel cannot run; the native kernel is
// held to the same reference in test_simd_gemm.cpp where the CPU has AVX-VNNI. The kernel code is
// built in emulated_u8s8_vnni_avx2.cpp (emulated_kernels.h says why).
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <random>
#include <sstream>
#include <vector>

#include "kernels/isa.h"
#include "kernels/ref/ref_kernels.h"
#include "emulated_kernels.h"

using namespace encrt::kernels;

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
        test::qu8s8_vnni_ymm_gemm_emulated(M, N, K, rows, packed.data(), w_sum.data(), w_scale.data(), got.data(),
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
          test::qu8s8_vnni_ymm_gemm_emulated(M, N, K, rows, packed.data(), w_sum.data(), w_scale.data(),
                                                with_ep.data(), ldc, ep);
          for (int m = 0; m < M; ++m)
            for (int n = N; n < ldc; ++n) CHECK(with_ep[static_cast<size_t>(m) * ldc + n] == -5.0f);
        }
      }
  INFO(bad << " of " << total << " outputs differ:" << first.str());
  CHECK(bad == 0);
}

#endif  // ENCRT_ARCH_X86
