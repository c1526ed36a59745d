// Pieces of the inline-assembly loops of the ARM GEMMs (gemm_u8s8_neondot.cpp,
// gemm_u8s8_neoni8mm.cpp, gemm_f32_neon.cpp, gemm_f16_neonfp16.cpp): each keeps its tile's
// accumulators in the fixed registers v0, v1, ... for the whole loop, taken from and given back to
// an array of 16-byte vectors in order at the asm operand %[acc], and declares every vector register
// clobbered. (g++ cannot be handed 16 or 24 accumulators as operands: asm takes 30 at most, an
// in-out operand counting twice.)
#pragma once

#define ENCRT_ASM_LOAD_ACC_0_15                                          \
  "ldp q0, q1, [%[acc]]\n ldp q2, q3, [%[acc], #32]\n"                   \
  "ldp q4, q5, [%[acc], #64]\n ldp q6, q7, [%[acc], #96]\n"              \
  "ldp q8, q9, [%[acc], #128]\n ldp q10, q11, [%[acc], #160]\n"          \
  "ldp q12, q13, [%[acc], #192]\n ldp q14, q15, [%[acc], #224]\n"
#define ENCRT_ASM_LOAD_ACC_16_23                                         \
  "ldp q16, q17, [%[acc], #256]\n ldp q18, q19, [%[acc], #288]\n"        \
  "ldp q20, q21, [%[acc], #320]\n ldp q22, q23, [%[acc], #352]\n"
#define ENCRT_ASM_STORE_ACC_0_15                                         \
  "stp q0, q1, [%[acc]]\n stp q2, q3, [%[acc], #32]\n"                   \
  "stp q4, q5, [%[acc], #64]\n stp q6, q7, [%[acc], #96]\n"              \
  "stp q8, q9, [%[acc], #128]\n stp q10, q11, [%[acc], #160]\n"          \
  "stp q12, q13, [%[acc], #192]\n stp q14, q15, [%[acc], #224]\n"
#define ENCRT_ASM_STORE_ACC_16_23                                        \
  "stp q16, q17, [%[acc], #256]\n stp q18, q19, [%[acc], #288]\n"        \
  "stp q20, q21, [%[acc], #320]\n stp q22, q23, [%[acc], #352]\n"
#define ENCRT_ASM_ZERO_ACC_0_15                                          \
  "movi v0.16b, #0\n movi v1.16b, #0\n movi v2.16b, #0\n movi v3.16b, #0\n"     \
  "movi v4.16b, #0\n movi v5.16b, #0\n movi v6.16b, #0\n movi v7.16b, #0\n"     \
  "movi v8.16b, #0\n movi v9.16b, #0\n movi v10.16b, #0\n movi v11.16b, #0\n"   \
  "movi v12.16b, #0\n movi v13.16b, #0\n movi v14.16b, #0\n movi v15.16b, #0\n"
#define ENCRT_ASM_ZERO_ACC_16_23                                         \
  "movi v16.16b, #0\n movi v17.16b, #0\n movi v18.16b, #0\n movi v19.16b, #0\n" \
  "movi v20.16b, #0\n movi v21.16b, #0\n movi v22.16b, #0\n movi v23.16b, #0\n"
// The clobber list: every vector register, the flags (subs) and memory (the loops read operands
// through their pointers and write the accumulator array).
#define ENCRT_ASM_CLOBBER_ALL_VECTORS                                                                        \
  "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", \
      "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",  \
      "cc", "memory"

// The loop of the int8 4-row tiles (gemm_u8s8_neondot.cpp, gemm_u8s8_neoni8mm.cpp): accumulators
// v0-v15 from and back to %[acc]; `prologue` runs once before the loop; per step, `body` reads 16 bytes of each row through the
// post-indexed pointers a0-a3 and the panel's 256 bytes at %[w]; `steps` >= 1 steps. In a function
// with the variables a0, a1, a2, a3 (const uint8_t*), w (const int8_t*), steps (size_t) and acc.
// volatile: the outputs (the advanced pointers) are unused, and g++ deletes a non-volatile asm whose
// outputs are unused, "memory" clobber or not.
#define ENCRT_ASM_U8S8_4ROW_STEPS(prologue, body)                                                             \
  asm volatile(ENCRT_ASM_LOAD_ACC_0_15 prologue "1:\n" body                                             \
               "add %[w], %[w], #256\n subs %[steps], %[steps], #1\n b.ne 1b\n" ENCRT_ASM_STORE_ACC_0_15 \
               : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w), [steps] "+r"(steps) \
               : [acc] "r"(&acc[0][0])                                                                  \
               : ENCRT_ASM_CLOBBER_ALL_VECTORS)
