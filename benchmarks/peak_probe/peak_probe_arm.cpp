// Register-only peak probes for aarch64: loops of kPeakChainsNeon independent accumulators of one
// instruction that never touch memory (the x86 loops' counterpart, peak_probe_x86.cpp). Built with
// -march=armv8.2-a+dotprod+fp16+i8mm (peak_probe/CMakeLists.txt) so that the assembler takes every
// mnemonic; each loop runs only on a CPU for which isa_supported() says it has the instruction.
// 24 chains cover latency × throughput (3-4 cycles × up to 4 pipes on current cores).
#include "peak_probe_arm.h"

namespace encrt::bench {

#if defined(__aarch64__)
// The dot product extension: sdot .4s (4 lanes × 4 s8·s8 products).
void sdot_loop(long iterations) {
  asm volatile(
      "movi v24.16b, #1\n\t"
      "movi v25.16b, #1\n\t"
      "1:\n\t"
      "sdot v0.4s, v24.16b, v25.16b\n\t"
      "sdot v1.4s, v24.16b, v25.16b\n\t"
      "sdot v2.4s, v24.16b, v25.16b\n\t"
      "sdot v3.4s, v24.16b, v25.16b\n\t"
      "sdot v4.4s, v24.16b, v25.16b\n\t"
      "sdot v5.4s, v24.16b, v25.16b\n\t"
      "sdot v6.4s, v24.16b, v25.16b\n\t"
      "sdot v7.4s, v24.16b, v25.16b\n\t"
      "sdot v8.4s, v24.16b, v25.16b\n\t"
      "sdot v9.4s, v24.16b, v25.16b\n\t"
      "sdot v10.4s, v24.16b, v25.16b\n\t"
      "sdot v11.4s, v24.16b, v25.16b\n\t"
      "sdot v12.4s, v24.16b, v25.16b\n\t"
      "sdot v13.4s, v24.16b, v25.16b\n\t"
      "sdot v14.4s, v24.16b, v25.16b\n\t"
      "sdot v15.4s, v24.16b, v25.16b\n\t"
      "sdot v16.4s, v24.16b, v25.16b\n\t"
      "sdot v17.4s, v24.16b, v25.16b\n\t"
      "sdot v18.4s, v24.16b, v25.16b\n\t"
      "sdot v19.4s, v24.16b, v25.16b\n\t"
      "sdot v20.4s, v24.16b, v25.16b\n\t"
      "sdot v21.4s, v24.16b, v25.16b\n\t"
      "sdot v22.4s, v24.16b, v25.16b\n\t"
      "sdot v23.4s, v24.16b, v25.16b\n\t"
      "subs %0, %0, #1\n\t"
      "b.ne 1b\n\t"
      : "+r"(iterations)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "cc");
}

// I8MM: usmmla (a 2 × 2 int32 tile of 8 u8·s8 products each).
void usmmla_loop(long iterations) {
  asm volatile(
      "movi v24.16b, #1\n\t"
      "movi v25.16b, #1\n\t"
      "1:\n\t"
      "usmmla v0.4s, v24.16b, v25.16b\n\t"
      "usmmla v1.4s, v24.16b, v25.16b\n\t"
      "usmmla v2.4s, v24.16b, v25.16b\n\t"
      "usmmla v3.4s, v24.16b, v25.16b\n\t"
      "usmmla v4.4s, v24.16b, v25.16b\n\t"
      "usmmla v5.4s, v24.16b, v25.16b\n\t"
      "usmmla v6.4s, v24.16b, v25.16b\n\t"
      "usmmla v7.4s, v24.16b, v25.16b\n\t"
      "usmmla v8.4s, v24.16b, v25.16b\n\t"
      "usmmla v9.4s, v24.16b, v25.16b\n\t"
      "usmmla v10.4s, v24.16b, v25.16b\n\t"
      "usmmla v11.4s, v24.16b, v25.16b\n\t"
      "usmmla v12.4s, v24.16b, v25.16b\n\t"
      "usmmla v13.4s, v24.16b, v25.16b\n\t"
      "usmmla v14.4s, v24.16b, v25.16b\n\t"
      "usmmla v15.4s, v24.16b, v25.16b\n\t"
      "usmmla v16.4s, v24.16b, v25.16b\n\t"
      "usmmla v17.4s, v24.16b, v25.16b\n\t"
      "usmmla v18.4s, v24.16b, v25.16b\n\t"
      "usmmla v19.4s, v24.16b, v25.16b\n\t"
      "usmmla v20.4s, v24.16b, v25.16b\n\t"
      "usmmla v21.4s, v24.16b, v25.16b\n\t"
      "usmmla v22.4s, v24.16b, v25.16b\n\t"
      "usmmla v23.4s, v24.16b, v25.16b\n\t"
      "subs %0, %0, #1\n\t"
      "b.ne 1b\n\t"
      : "+r"(iterations)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "cc");
}

// fp32: fmla .4s. Accumulators and factors zero: no denormals, no NaNs.
void fmla_4s_loop(long iterations) {
  asm volatile(
      "movi v24.16b, #0\n\t"
      "movi v25.16b, #0\n\t"
      "1:\n\t"
      "fmla v0.4s, v24.4s, v25.4s\n\t"
      "fmla v1.4s, v24.4s, v25.4s\n\t"
      "fmla v2.4s, v24.4s, v25.4s\n\t"
      "fmla v3.4s, v24.4s, v25.4s\n\t"
      "fmla v4.4s, v24.4s, v25.4s\n\t"
      "fmla v5.4s, v24.4s, v25.4s\n\t"
      "fmla v6.4s, v24.4s, v25.4s\n\t"
      "fmla v7.4s, v24.4s, v25.4s\n\t"
      "fmla v8.4s, v24.4s, v25.4s\n\t"
      "fmla v9.4s, v24.4s, v25.4s\n\t"
      "fmla v10.4s, v24.4s, v25.4s\n\t"
      "fmla v11.4s, v24.4s, v25.4s\n\t"
      "fmla v12.4s, v24.4s, v25.4s\n\t"
      "fmla v13.4s, v24.4s, v25.4s\n\t"
      "fmla v14.4s, v24.4s, v25.4s\n\t"
      "fmla v15.4s, v24.4s, v25.4s\n\t"
      "fmla v16.4s, v24.4s, v25.4s\n\t"
      "fmla v17.4s, v24.4s, v25.4s\n\t"
      "fmla v18.4s, v24.4s, v25.4s\n\t"
      "fmla v19.4s, v24.4s, v25.4s\n\t"
      "fmla v20.4s, v24.4s, v25.4s\n\t"
      "fmla v21.4s, v24.4s, v25.4s\n\t"
      "fmla v22.4s, v24.4s, v25.4s\n\t"
      "fmla v23.4s, v24.4s, v25.4s\n\t"
      "subs %0, %0, #1\n\t"
      "b.ne 1b\n\t"
      : "+r"(iterations)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "cc");
}

// Half-precision arithmetic: fmla .8h.
void fmla_8h_loop(long iterations) {
  asm volatile(
      "movi v24.16b, #0\n\t"
      "movi v25.16b, #0\n\t"
      "1:\n\t"
      "fmla v0.8h, v24.8h, v25.8h\n\t"
      "fmla v1.8h, v24.8h, v25.8h\n\t"
      "fmla v2.8h, v24.8h, v25.8h\n\t"
      "fmla v3.8h, v24.8h, v25.8h\n\t"
      "fmla v4.8h, v24.8h, v25.8h\n\t"
      "fmla v5.8h, v24.8h, v25.8h\n\t"
      "fmla v6.8h, v24.8h, v25.8h\n\t"
      "fmla v7.8h, v24.8h, v25.8h\n\t"
      "fmla v8.8h, v24.8h, v25.8h\n\t"
      "fmla v9.8h, v24.8h, v25.8h\n\t"
      "fmla v10.8h, v24.8h, v25.8h\n\t"
      "fmla v11.8h, v24.8h, v25.8h\n\t"
      "fmla v12.8h, v24.8h, v25.8h\n\t"
      "fmla v13.8h, v24.8h, v25.8h\n\t"
      "fmla v14.8h, v24.8h, v25.8h\n\t"
      "fmla v15.8h, v24.8h, v25.8h\n\t"
      "fmla v16.8h, v24.8h, v25.8h\n\t"
      "fmla v17.8h, v24.8h, v25.8h\n\t"
      "fmla v18.8h, v24.8h, v25.8h\n\t"
      "fmla v19.8h, v24.8h, v25.8h\n\t"
      "fmla v20.8h, v24.8h, v25.8h\n\t"
      "fmla v21.8h, v24.8h, v25.8h\n\t"
      "fmla v22.8h, v24.8h, v25.8h\n\t"
      "fmla v23.8h, v24.8h, v25.8h\n\t"
      "subs %0, %0, #1\n\t"
      "b.ne 1b\n\t"
      : "+r"(iterations)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "cc");
}

// ARMv8.0 without the dot product: the int8 route of qu8s8_gemm_2x16__neon, 12 chains of
// smull + smlsl (16 int8 products into int16 lanes) + sadalp (pairwise into int32), a temporary
// each (v12-v23): 32 ops per chain step.
void smull_sadalp_loop(long iterations) {
  asm volatile(
      "movi v24.16b, #1\n\t"
      "movi v25.16b, #1\n\t"
      "movi v26.16b, #1\n\t"
      "movi v27.16b, #1\n\t"
      "1:\n\t"
      "smull v12.8h, v24.8b, v25.8b\n\t"
      "smlsl v12.8h, v26.8b, v27.8b\n\t"
      "sadalp v0.4s, v12.8h\n\t"
      "smull v13.8h, v24.8b, v25.8b\n\t"
      "smlsl v13.8h, v26.8b, v27.8b\n\t"
      "sadalp v1.4s, v13.8h\n\t"
      "smull v14.8h, v24.8b, v25.8b\n\t"
      "smlsl v14.8h, v26.8b, v27.8b\n\t"
      "sadalp v2.4s, v14.8h\n\t"
      "smull v15.8h, v24.8b, v25.8b\n\t"
      "smlsl v15.8h, v26.8b, v27.8b\n\t"
      "sadalp v3.4s, v15.8h\n\t"
      "smull v16.8h, v24.8b, v25.8b\n\t"
      "smlsl v16.8h, v26.8b, v27.8b\n\t"
      "sadalp v4.4s, v16.8h\n\t"
      "smull v17.8h, v24.8b, v25.8b\n\t"
      "smlsl v17.8h, v26.8b, v27.8b\n\t"
      "sadalp v5.4s, v17.8h\n\t"
      "smull v18.8h, v24.8b, v25.8b\n\t"
      "smlsl v18.8h, v26.8b, v27.8b\n\t"
      "sadalp v6.4s, v18.8h\n\t"
      "smull v19.8h, v24.8b, v25.8b\n\t"
      "smlsl v19.8h, v26.8b, v27.8b\n\t"
      "sadalp v7.4s, v19.8h\n\t"
      "smull v20.8h, v24.8b, v25.8b\n\t"
      "smlsl v20.8h, v26.8b, v27.8b\n\t"
      "sadalp v8.4s, v20.8h\n\t"
      "smull v21.8h, v24.8b, v25.8b\n\t"
      "smlsl v21.8h, v26.8b, v27.8b\n\t"
      "sadalp v9.4s, v21.8h\n\t"
      "smull v22.8h, v24.8b, v25.8b\n\t"
      "smlsl v22.8h, v26.8b, v27.8b\n\t"
      "sadalp v10.4s, v22.8h\n\t"
      "smull v23.8h, v24.8b, v25.8b\n\t"
      "smlsl v23.8h, v26.8b, v27.8b\n\t"
      "sadalp v11.4s, v23.8h\n\t"
      "subs %0, %0, #1\n\t"
      "b.ne 1b\n\t"
      : "+r"(iterations)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "cc");
}
void read_lines_neon(const void* p, long lines) {
  asm volatile(
      "movi v4.16b, #0\n\t"
      "movi v5.16b, #0\n\t"
      "movi v6.16b, #0\n\t"
      "movi v7.16b, #0\n\t"
      "1:\n\t"
      "ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%0], #64\n\t"
      "add v4.2d, v4.2d, v0.2d\n\t"
      "add v5.2d, v5.2d, v1.2d\n\t"
      "add v6.2d, v6.2d, v2.2d\n\t"
      "add v7.2d, v7.2d, v3.2d\n\t"
      "subs %1, %1, #1\n\t"
      "b.gt 1b\n\t"
      : "+r"(p), "+r"(lines)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "cc", "memory");
}
#endif

}  // namespace encrt::bench
