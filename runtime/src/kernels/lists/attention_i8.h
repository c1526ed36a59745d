// int8 attention for one (sequence, head) (AttentionFn) with its scratch size
// (AttentionScratchFn). A kernel list (kernel_lists.h): no include guard; define
// ENCRT_ATTENTION_I8_KERNEL(features, fn, scratch) and include. From the reference to the most
// preferred; `features` are those the kernel's file is compiled for (runtime/CMakeLists.txt). The
// AVX-VNNI ymm kernel comes before the AVX-512 ones, as in gemm_u8s8.h.
ENCRT_ATTENTION_I8_KERNEL(0, ref::attention_i8, ref::attention_i8_scratch)
#if defined(ENCRT_ARCH_X86)
ENCRT_ATTENTION_I8_KERNEL(kIsaAvx2, x86::qs8_attention__avx2, x86::qs8_attention_scratch__avx2)
ENCRT_ATTENTION_I8_KERNEL(kIsaAvx2 | kIsaAvxVnni, x86::qs8_attention__avxvnni, x86::qs8_attention_scratch__avxvnni)
ENCRT_ATTENTION_I8_KERNEL(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni, x86::qs8_attention__avx512vnni,
                          x86::qs8_attention_scratch__avx512vnni)
ENCRT_ATTENTION_I8_KERNEL(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAmxInt8, x86::qs8_attention__amx,
                          x86::qs8_attention_scratch__amx)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_ATTENTION_I8_KERNEL(kIsaNeon, arm::qs8_attention__neon, arm::qs8_attention_scratch__neon)
ENCRT_ATTENTION_I8_KERNEL(kIsaNeon | kIsaNeonDot, arm::qs8_attention__neondot, arm::qs8_attention_scratch__neondot)
ENCRT_ATTENTION_I8_KERNEL(kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm, arm::qs8_attention__neoni8mm,
                          arm::qs8_attention_scratch__neoni8mm)
#endif
