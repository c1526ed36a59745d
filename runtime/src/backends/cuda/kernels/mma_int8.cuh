// The int8 tensor-core instructions the int8 kernels share (gemm_i8_mma_kernel.cuh,
// attention_i8_mma_kernel.cuh): mma.sync m16n8k32 with s32 accumulation, s8 or u8 A and s8 B, in
// the PTX ISA's fragment layout ("Matrix Fragments for mma.m16n8k32"). Under
// ENCRT_CUDA_HOST_EMULATION (tests/cuda_emulation) they compute from that table on the host. Only
// sm_80 and newer run them: the launchers refuse older GPUs, so elsewhere the device code traps.
#pragma once

#include <cstdint>

namespace encrt::cuda {

// D(16x8, s32) += A(16x32, s8, row-major) · B(32x8, s8, column-major).
__device__ __forceinline__ void mma_m16n8k32_s8s8(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_mma_m16n8k32<false>(c, a, b0, b1);
#else
  (void)c, (void)a, (void)b0, (void)b1;
  __trap();
#endif
}

// D(16x8, s32) += A(16x32, u8, row-major) · B(32x8, s8, column-major).
__device__ __forceinline__ void mma_m16n8k32_u8s8(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_mma_m16n8k32<true>(c, a, b0, b1);
#else
  (void)c, (void)a, (void)b0, (void)b1;
  __trap();
#endif
}

}  // namespace encrt::cuda
