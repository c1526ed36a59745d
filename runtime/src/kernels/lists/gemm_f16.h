// GEMMs with fp16 weights (GemmF16Fn). A kernel list (kernel_lists.h): no include guard; define
// ENCRT_GEMM_F16_KERNEL(features, fn, arith) and include. From the reference to the most
// preferred; `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt).
// `arith` says how it computes (kernel_types.h): kWidensToF32 (ref::gemm_f16: weights widened to
// fp32, fp32 products and sums) or kFp16Arith (ref::gemm_f16_arith's fp16 arithmetic in blocks).
ENCRT_GEMM_F16_KERNEL(0, ref::gemm_f16, kWidensToF32)
#if defined(ENCRT_ARCH_X86)
ENCRT_GEMM_F16_KERNEL(kIsaAvx2, x86::f16w_gemm_6x16__avx2, kWidensToF32)
ENCRT_GEMM_F16_KERNEL(kIsaAvx2 | kIsaAvx512, x86::f16w_gemm_6x64__avx512, kWidensToF32)
ENCRT_GEMM_F16_KERNEL(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16, x86::f16_gemm_8x48__avx512fp16,
                      kFp16Arith)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_GEMM_F16_KERNEL(kIsaNeon, arm::f16w_gemm_6x16__neon, kWidensToF32)
ENCRT_GEMM_F16_KERNEL(kIsaNeon | kIsaNeonDot | kIsaNeonFp16, arm::f16_gemm_6x16__neonfp16, kFp16Arith)
#endif
