// qu8s8_gemm_32x32__amx: the int8 GEMM of gemm_u8s8_amx.h with AMX's tile instructions
// (Sapphire Rapids and later). It runs only where isa_supported() found AMX-INT8, which includes
// Linux's permission for this process to use the tile data (cpu_features.cpp).
//
// The tile operations are asm with the tile number as an immediate operand ("%c"), not GCC's
// intrinsics: GCC 12's _tile_loadd, _tile_dpbusd, _tile_stored and _tile_zero are macros that
// paste their tile argument into the instruction's text (#dst), so they take a literal and not a
// template parameter; and its _tile_loadd declares no memory input, so nothing would keep the
// compiler from moving the stores that fill a staging tile past the load that reads it. Here
// every tile load and store clobbers "memory", and ldtilecfg takes the whole 64-byte configuration
// as its operand. AT&T operand order is Intel's reversed: "tdpbusd %tmmB, %tmmA, %tmmC" is
// tdpbusd tmmC, tmmA, tmmB (C += A · B, A unsigned, B signed), as GCC's _tile_dpbusd(C, A, B)
// spells it.
#include "kernels/x86/gemm_u8s8_amx.h"

namespace encrt::kernels::x86 {
namespace {

struct NativeTiles {
  static ENCRT_X86_INLINE void load_config(const amx::TileConfig& config) {
    asm volatile("ldtilecfg %0" : : "m"(config));
  }
  template <int T>
  static ENCRT_X86_INLINE void load(const void* base, size_t stride) {
    asm volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "i"(T) : "memory");
  }
  template <int C, int A, int B>
  static ENCRT_X86_INLINE void dpbusd() {
    asm volatile("tdpbusd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
  }
  template <int T>
  static ENCRT_X86_INLINE void store(void* base, size_t stride) {
    asm volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(base), "r"(stride), "i"(T) : "memory");
  }
  template <int T>
  static ENCRT_X86_INLINE void zero() {
    asm volatile("tilezero %%tmm%c0" : : "i"(T));
  }
  // Back to the init state, so that the OS need not save 8 KiB of tiles at each context switch.
  static ENCRT_X86_INLINE void release() { asm volatile("tilerelease"); }
};

}  // namespace

void qu8s8_gemm_32x32__amx(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  NativeTiles tiles;
  qu8s8_amx_gemm(tiles, M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
