// AVX-VNNI's vpdpbusd on ymm as the Dot policy of the kernel templates that take one
// (gemm_u8s8_vnni_ymm.h, attention_i8_avx2.h's VnniProducts). Include only from *_avxvnni.cpp
// files (AVX-VNNI flags); internal linkage.
#pragma once

#include "kernels/x86/x86_avx2_common.h"

namespace encrt::kernels::x86 {
namespace {

struct AvxVnniDot {
  // acc += Σ_4 u8(a)·s8(b) per int32 lane. As asm with acc tied in place, for the reason given at
  // dpbusd in gemm_u8s8_avx512vnni.cpp (with the intrinsic GCC 12 copies accumulators around every
  // step); {vex} (written %{vex%} in GCC asm) selects the AVX-VNNI encoding.
  static ENCRT_X86_INLINE void dpbusd(__m256i& acc, __m256i a_u8, __m256i b_s8) {
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a_u8), "x"(b_s8));
  }
};

}  // namespace
}  // namespace encrt::kernels::x86
