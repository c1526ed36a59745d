// int8 GEMMs, uint8 activations × int8 weights (GemmU8S8Fn). A kernel list (kernel_lists.h): no
// include guard; define ENCRT_GEMM_U8S8_KERNEL(features, fn, weights, workspace, min_task_rows,
// min_rows_per_thread) and include.
// From the reference to the most preferred; `features` are those the kernel's file is compiled
// for (runtime/CMakeLists.txt), plus the preference (isa.h) under which it is chosen; `weights`
// kAnyWeights, kSymmetricWeights or kNarrowWeights; `workspace` the bytes of
// QuantizedRows::workspace it needs (nullptr: none). How the CPU backend cuts a linear across
// threads: by rows where each thread gets at least `min_rows_per_thread` rows (0: the backend's
// default, 8), else by weight panels; and by rows, no task with fewer than `min_task_rows` while
// every thread still gets one (0: any). The AMX kernel's are one and two of its 16-row tiles' worth:
// a task of 8 rows costs the tiles as much as one of 16, and two 32-row blocks per task overlap
// better. On a 2-core Xeon VM with AMX, MiniLM int8 on 2 threads: b1 s128 7% faster with 64-row
// tasks than with 32-row ones (min 1.39 against 1.49 ms, three interleaved rounds); b1 s16 1.42×
// faster split by panels than by 8-row blocks (0.335 against 0.475 ms, three rounds). The avx512vnni
// kernel's 8-row tile: b1 s16 on 2 threads 1.33× faster with tasks of 8 rows than of 4 (0.427
// against 0.567 ms); for the 6-row tiles of the ymm kernels the same rule made no difference (1%).
// Panels below 16 rows per thread for the AVX-VNNI ymm kernel (b1 s16 on 2 threads 0.695-0.733
// against 0.820-0.848 ms, three rounds) and the widened avx2 one (1.344-1.349 against 1.421-1.427);
// not for the signed avx2 route (1.325-1.358 against 1.289-1.310: rows stay) nor the avx512 one
// (within 2%).
// The AVX-VNNI ymm kernel comes before the AVX-512 ones, so that a CPU with
// AVX-512 runs the zmm kernels whether or not it also has AVX-VNNI. The AMX kernel needs
// AVX512-VNNI's features (its epilogue is the avx512vnni kernel's) and AMX-INT8, not AVX512-FP16.
ENCRT_GEMM_U8S8_KERNEL(0, ref::gemm_u8s8, kAnyWeights, nullptr, 0, 0)
#if defined(ENCRT_ARCH_X86)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2, x86::qu8s8_gemm_6x8__avx2, kAnyWeights, x86::qu8s8_widened_workspace, 0, 16)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kPreferSignedMadd, x86::qu8s8_gemm_4x16__avx2, kSymmetricWeights,
                       x86::qu8s8_encoded_rows_workspace, 0, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kNarrowInt8Weights, x86::qu8s7_gemm_6x16__avx2, kNarrowWeights, nullptr, 0, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kIsaAvxVnni, x86::qu8s8_gemm_6x16__avxvnni, kAnyWeights, nullptr, 0, 16)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kIsaAvx512, x86::qu8s8_gemm_6x32__avx512, kAnyWeights,
                       x86::qu8s8_encoded_rows_workspace, 0, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni, x86::qu8s8_gemm_8x48__avx512vnni, kAnyWeights, nullptr, 8, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAmxInt8, x86::qu8s8_gemm_32x32__amx, kAnyWeights,
                       nullptr, 64, 16)
#elif defined(ENCRT_ARCH_ARM64)
ENCRT_GEMM_U8S8_KERNEL(kIsaNeon, arm::qu8s8_gemm_2x16__neon, kAnyWeights, arm::qu8s8_encoded_rows_workspace, 0, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaNeon | kIsaNeonDot, arm::qu8s8_gemm_4x16__neondot, kAnyWeights,
                       arm::qu8s8_encoded_rows_workspace, 0, 0)
ENCRT_GEMM_U8S8_KERNEL(kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm, arm::qu8s8_gemm_4x16__neoni8mm, kAnyWeights,
                       arm::qu8s8_i8mm_workspace, 0, 0)
#endif
