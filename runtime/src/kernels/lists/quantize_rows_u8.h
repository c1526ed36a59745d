// Per-row uint8 quantization of activations (QuantizeRowsU8Fn). A kernel list (kernel_lists.h):
// no include guard; define ENCRT_QUANTIZE_ROWS_U8_KERNEL(features, fn) and include. From the
// reference to the most preferred; `features` are those the kernel's file is compiled for
// (runtime/CMakeLists.txt).
ENCRT_QUANTIZE_ROWS_U8_KERNEL(0, ref::quantize_rows_u8)
#if defined(ENCRT_ARCH_X86)
ENCRT_QUANTIZE_ROWS_U8_KERNEL(kIsaAvx2, x86::qu8_quantize_rows__avx2)
ENCRT_QUANTIZE_ROWS_U8_KERNEL(kIsaAvx2 | kIsaAvx512, x86::qu8_quantize_rows__avx512)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_QUANTIZE_ROWS_U8_KERNEL(kIsaNeon, arm::qu8_quantize_rows__neon)
#endif
