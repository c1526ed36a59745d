// NativeTiles: the tile operations of the AMX kernels (gemm_u8s8_amx.h, attention_i8_amx.h) as
// AMX-TILE and AMX-INT8 instructions. Include only from *_amx.cpp files; the tests run the same
// kernel templates on emulated tiles instead (tests/kernels/test_x86_*_amx_emulated.cpp).
//
// The tile operations are asm with the tile number as an immediate operand ("%c"), not GCC's
// intrinsics: GCC 12's _tile_loadd, _tile_dpbusd, _tile_stored and _tile_zero are macros that
// paste their tile argument into the instruction's text (#dst), so they take a literal and not a
// template parameter; and its _tile_loadd declares no memory input, so nothing would keep the
// compiler from moving the stores that fill a staging tile past the load that reads it. Here
// every tile load and store clobbers "memory", and ldtilecfg takes the whole 64-byte configuration
// as its operand. AT&T operand order is Intel's reversed: "tdpbusd %tmmB, %tmmA, %tmmC" is
// tdpbusd tmmC, tmmA, tmmB (C += A · B), as GCC's _tile_dpbusd(C, A, B) spells it. The letters
// after tdpb give the signedness of A, then B: tdpbusd u8 × s8, tdpbssd s8 × s8, tdpbsud s8 × u8;
// each sums 4 products per int32 element, exact in int32 (Intel SDM, TDPBSSD/TDPBSUD/TDPBUSD/
// TDPBUUD).
#pragma once

#include <cstddef>

#include "kernels/x86/amx_tile_config.h"
#include "kernels/x86/x86_avx512_common.h"

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
  template <int C, int A, int B>
  static ENCRT_X86_INLINE void dpbssd() {
    asm volatile("tdpbssd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
  }
  template <int C, int A, int B>
  static ENCRT_X86_INLINE void dpbsud() {
    asm volatile("tdpbsud %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
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
}  // namespace encrt::kernels::x86
