// Adding a scaled fp16 embedding row to fp32 (AddRowF16Fn). A kernel list (kernel_lists.h): no
// include guard; define ENCRT_ADD_ROW_F16_KERNEL(features, fn) and include. From the reference to
// the most preferred; `features` are those the kernel's file is compiled for
// (runtime/CMakeLists.txt).
ENCRT_ADD_ROW_F16_KERNEL(0, ref::add_row_f16)
#if defined(ENCRT_ARCH_X86)
ENCRT_ADD_ROW_F16_KERNEL(kIsaAvx2, x86::f16_add_row__avx2)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_ADD_ROW_F16_KERNEL(kIsaNeon, arm::f16_add_row__neon)
#endif
