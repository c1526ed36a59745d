// Kernel code run with emulated instructions (the tests of test_x86_*_emulated.cpp), behind plain
// function declarations. The kernel code needs AVX2 or AVX-512 flags, so it is compiled only in
// emulated_u8s8_vnni_avx2.cpp, emulated_f16_arith_avx512.cpp, emulated_u8s8_amx_avx512.cpp,
// emulated_attention_i8_amx_avx512.cpp and emulated_attention_i8_vnni_avx2.cpp,
// which hold nothing else: no test case, no static initializer, no std:: template (whose one
// out-of-line copy the linker could take from them). Everything that runs before a test has checked
// the CPU (Catch2's registration, and under AddressSanitizer its instrumentation of every
// function) stays in files built without ISA flags, so an AVX2-only CPU never meets an AVX-512
// instruction before the check that skips the test.
#pragma once

#if defined(ENCRT_ARCH_X86)

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_types.h"

namespace encrt::kernels::test {

// x86::f16_arith_gemm (the code of f16_gemm_8x48__avx512fp16) with every vfmadd231ph lane computed
// by ref::half_fma. Needs AVX-512 (F, BW, VL, DQ).
void f16_arith_gemm_emulated(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                             const GemmEpilogue& ep);

// The tile operations the AMX kernels perform (x86::qu8s8_amx_gemm, x86::AmxEngine), as the
// emulation (emulated_tiles.h) implements them: tiles by number, the ldtilecfg operand as its 64
// bytes.
class TileOperations {
 public:
  virtual ~TileOperations() = default;
  virtual void load_config(const uint8_t (&config)[64]) = 0;
  virtual void load(int tile, const void* base, size_t stride) = 0;
  virtual void dpbusd(int c, int a, int b) = 0;
  virtual void dpbssd(int c, int a, int b) = 0;
  virtual void dpbsud(int c, int a, int b) = 0;
  virtual void store(int tile, void* base, size_t stride) = 0;
  virtual void zero(int tile) = 0;
  virtual void release() = 0;
};

// x86::qu8s8_amx_gemm (the code of qu8s8_gemm_32x32__amx) on `tiles`. Needs AVX-512 (its epilogue).
void qu8s8_amx_gemm_emulated(TileOperations& tiles, int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                             const int32_t* w_sum, const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);

// The int8 attention of x86::qs8_attention__amx with its AMX products (x86::AmxEngine) on `tiles`,
// for every seq and head_dim <= 64 (the native kernel hands seq < 128 to the VNNI kernel; this
// does not), with its scratch size. Needs AVX-512 (F, BW, VL, DQ).
void qs8_attention_amx_emulated(TileOperations& tiles, const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_amx_emulated_scratch(int seq, int head_dim);

// x86::qu8s8_vnni_ymm_gemm (the code of qu8s8_gemm_6x16__avxvnni) with vpdpbusd emulated. Needs AVX2.
void qu8s8_vnni_ymm_gemm_emulated(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                                  const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);

// The int8 attention of x86::qs8_attention__avxvnni (attention_i8_avx2.h on bytes,
// x86::VnniProducts) with vpdpbusd emulated, and its scratch size. Needs AVX2.
void qs8_attention_vnni_ymm_emulated(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_vnni_ymm_emulated_scratch(int seq, int head_dim);

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
