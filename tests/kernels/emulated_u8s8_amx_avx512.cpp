// The AMX int8 GEMM code of emulated_kernels.h on the tests' emulated tiles. Compiled with AVX-512
// flags (tests/CMakeLists.txt, *_avx512.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/gemm_u8s8_amx.h"
#include "emulated_kernels.h"

namespace encrt::kernels::test {
namespace {

// The Tiles class the AMX kernel template calls, forwarding to the emulation's virtual functions.
class ForwardedTiles {
 public:
  explicit ForwardedTiles(TileOperations& ops) : ops_(ops) {}
  void load_config(const x86::amx::TileConfig& config) {
    uint8_t raw[64];
    std::memcpy(raw, &config, sizeof raw);
    ops_.load_config(raw);
  }
  template <int T>
  void load(const void* base, size_t stride) {
    ops_.load(T, base, stride);
  }
  template <int C, int A, int B>
  void dpbusd() {
    ops_.dpbusd(C, A, B);
  }
  template <int T>
  void store(void* base, size_t stride) {
    ops_.store(T, base, stride);
  }
  template <int T>
  void zero() {
    ops_.zero(T);
  }
  void release() { ops_.release(); }

 private:
  TileOperations& ops_;
};

}  // namespace

void qu8s8_amx_gemm_emulated(TileOperations& tiles, int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                             const int32_t* w_sum, const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  ForwardedTiles forwarded(tiles);
  x86::qu8s8_amx_gemm(forwarded, M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
