// fp32 GEMMs (GemmF32Fn). A kernel list (kernel_lists.h): no include guard; define
// ENCRT_GEMM_F32_KERNEL(features, fn) and include. From the reference to the most preferred;
// `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt).
ENCRT_GEMM_F32_KERNEL(0, ref::gemm_f32)
#if defined(ENCRT_ARCH_X86)
ENCRT_GEMM_F32_KERNEL(kIsaAvx2, x86::f32_gemm_6x16__avx2)
ENCRT_GEMM_F32_KERNEL(kIsaAvx2 | kIsaAvx512, x86::f32_gemm_6x64__avx512)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_GEMM_F32_KERNEL(kIsaNeon, arm::f32_gemm_6x16__neon)
#endif
