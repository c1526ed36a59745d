// The fp16-arithmetic GEMM (gemm_f16_arith_avx512.h, the code of f16_gemm_8x48__avx512fp16) run
// with an emulated vfmadd231ph: every lane computes ref::half_fma. This checks the kernel's data
// movement (the vpermw interleave of weight rows, the pair broadcasts, block conversion, the
// even/odd split of the fp32 sums, tails and tiles) bit for bit against ref::gemm_f16_arith on any
// AVX-512 CPU, including those without AVX512-FP16 where the native kernel cannot run; the native
// kernel itself is held to the same reference in test_simd_gemm.cpp where the CPU has it. The
// kernel code is built in emulated_f16_arith_avx512.cpp (emulated_kernels.h says why).
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <random>
#include <sstream>
#include <vector>

#include "kernels/isa.h"
#include "kernels/ref/ref_kernels.h"
#include "emulated_kernels.h"

using namespace encrt::kernels;

TEST_CASE("fp16-arithmetic GEMM code with emulated vfmadd231ph matches ref::gemm_f16_arith bit for bit",
          "[x86][gemm][f16]") {
  if (!isa_supported(kIsaAvx2 | kIsaAvx512)) {
    WARN("not tested: this CPU has no AVX-512");
    return;
  }
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int bad = 0, total = 0;
  std::ostringstream first;
  for (int M : {1, 3, 8, 13, 17})
    for (int N : {1, 15, 17, 48, 100})
      for (int K : {1, 2, 3, 5, 63, 64, 65, 130, 385}) {
        const int lda = K + 5, ldc = N + 3;
        std::vector<float> a(static_cast<size_t>(M) * lda), w(static_cast<size_t>(N) * K);
        for (float& x : a) x = dist(rng);
        for (float& x : w) x = 0.5f * dist(rng);
        std::vector<uint16_t> packed(panel_f32_size(N, K));
        ref::pack_weights_f16(N, K, w.data(), packed.data());
        std::vector<float> want(static_cast<size_t>(M) * ldc, -7.0f), got(want);
        ref::gemm_f16_arith(M, N, K, a.data(), lda, packed.data(), want.data(), ldc, GemmEpilogue{});
        test::f16_arith_gemm_emulated(M, N, K, a.data(), lda, packed.data(), got.data(), ldc, GemmEpilogue{});
        for (size_t i = 0; i < want.size(); ++i) {
          ++total;
          if (got[i] != want[i] && bad++ < 3)
            first << " (M=" << M << " N=" << N << " K=" << K << " i=" << i << " got " << got[i] << " want " << want[i]
                  << ")";
        }
      }
  INFO(bad << " of " << total << " outputs differ:" << first.str());
  CHECK(bad == 0);
}

#endif  // ENCRT_ARCH_X86
