// fp32 attention for one (sequence, head) (AttentionFn) with its scratch size
// (AttentionScratchFn). A kernel list (kernel_lists.h): no include guard; define
// ENCRT_ATTENTION_F32_KERNEL(features, fn, scratch) and include. From the reference to the most
// preferred; `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt).
ENCRT_ATTENTION_F32_KERNEL(0, ref::attention_f32, ref::attention_f32_scratch)
#if defined(ENCRT_ARCH_X86)
ENCRT_ATTENTION_F32_KERNEL(kIsaAvx2, x86::f32_attention__avx2, x86::f32_attention_scratch__avx2)
ENCRT_ATTENTION_F32_KERNEL(kIsaAvx2 | kIsaAvx512, x86::f32_attention__avx512, x86::f32_attention_scratch__avx512)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_ATTENTION_F32_KERNEL(kIsaNeon, arm::f32_attention__neon, arm::f32_attention_scratch__neon)
#endif
