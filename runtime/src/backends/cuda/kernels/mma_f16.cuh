// The 16-bit floating-point tensor-core instruction the kernels share (attention_mma_kernel.cuh,
// gemm_f16_mma_kernel.cuh): mma.sync m16n8k16 with fp32 accumulation, fp16 or bf16 operands, in
// the PTX ISA's fragment layout ("Matrix Fragments for mma.m16n8k16 with floating point type").
// Under ENCRT_CUDA_HOST_EMULATION (tests/cuda_emulation) they compute from that table on the host.
// Only sm_80 and newer run them: the launchers refuse older GPUs, so elsewhere the device code traps.
#pragma once

#include <cstdint>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace encrt::cuda {

// D(16x8, fp32) += A(16x16, row-major) · B(16x8, column-major), A and B of type T (fp16 or bf16:
// the PTX ISA gives both one fragment layout for m16n8k16).
template <typename T>
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma_m16n8k16<__half>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_mma_m16n8k16(c, a, b0, b1);  // tests/cuda_emulation: the PTX fragment table on the host
#else
  (void)c, (void)a, (void)b0, (void)b1;
  __trap();  // the launchers refuse GPUs below sm_80
#endif
}
template <>
__device__ __forceinline__ void mma_m16n8k16<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                                            uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_mma_m16n8k16_bf16(c, a, b0, b1);
#else
  (void)c, (void)a, (void)b0, (void)b1;
  __trap();
#endif
}

}  // namespace encrt::cuda
