// GELU over an array of fp32 (GeluFn). A kernel list (kernel_lists.h): no include guard;
// define ENCRT_GELU_KERNEL(features, fn) and include. From the reference to the most preferred;
// `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt).
ENCRT_GELU_KERNEL(0, ref::gelu_rows)
#if defined(ENCRT_ARCH_X86)
ENCRT_GELU_KERNEL(kIsaAvx2, x86::f32_gelu__avx2)
ENCRT_GELU_KERNEL(kIsaAvx2 | kIsaAvx512, x86::f32_gelu__avx512)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_GELU_KERNEL(kIsaNeon, arm::f32_gelu__neon)
#endif
