// LayerNorm over fp32 rows (LayerNormFn). A kernel list (kernel_lists.h): no include guard;
// define ENCRT_LAYER_NORM_KERNEL(features, fn) and include. From the reference to the most
// preferred; `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt).
ENCRT_LAYER_NORM_KERNEL(0, ref::layer_norm)
#if defined(ENCRT_ARCH_X86)
ENCRT_LAYER_NORM_KERNEL(kIsaAvx2, x86::f32_layer_norm__avx2)
ENCRT_LAYER_NORM_KERNEL(kIsaAvx2 | kIsaAvx512, x86::f32_layer_norm__avx512)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_LAYER_NORM_KERNEL(kIsaNeon, arm::f32_layer_norm__neon)
#endif
