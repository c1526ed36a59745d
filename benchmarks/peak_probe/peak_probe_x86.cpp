// Register-only peak probes: loops of independent vpdpbusd / vfmadd231ps chains that never touch
// memory, to measure what one core of this machine can issue per second. Only the instruction
// loops live in this file (built with AVX-512 VNNI flags so that the asm may name zmm16-31); the
// timing and registration around them is ISA-neutral (peaks.cpp), and each loop is run only on a
// CPU for which isa_supported() says it has their instructions.
#include "peak_probe_x86.h"

namespace encrt::bench {

// Each loop body has kPeakChains (zmm) or kPeakChainsYmm independent accumulators: enough chains
// to cover latency × throughput (4-5 cycles × up to 2 per cycle on current cores), so the loop is
// bound by issue throughput alone.
#if defined(__x86_64__)
void vpdpbusd_zmm_loop(long iterations) {
  asm volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpternlogd $0xff, %%zmm17, %%zmm17, %%zmm17\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm0\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm1\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm2\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm3\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm4\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm5\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm6\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm7\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm8\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm9\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm10\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm11\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm12\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm13\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm14\n\t"
      "vpdpbusd %%zmm17, %%zmm16, %%zmm15\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

// Accumulators start at zero and the factors are zero: no denormals, no NaNs.
void fma_zmm_loop(long iterations) {
  asm volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "1:\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm0\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm1\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm2\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm3\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm4\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm5\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm6\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm7\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm8\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm9\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm10\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm11\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm12\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm13\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm14\n\t"
      "vfmadd231ps %%zmm17, %%zmm16, %%zmm15\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

// AVX512-FP16: the same loop in fp16 (32 lanes per instruction). GNU as knows the mnemonic
// whatever the compiler flags; the loop only runs where isa_supported() found AVX512-FP16.
void fma_ph_zmm_loop(long iterations) {
  asm volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
      "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
      "1:\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm0\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm1\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm2\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm3\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm4\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm5\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm6\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm7\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm8\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm9\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm10\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm11\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm12\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm13\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm14\n\t"
      "vfmadd231ph %%zmm17, %%zmm16, %%zmm15\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

// The saturating route on zmm (AVX-512 BW, the int8 route of AVX-512 CPUs without VNNI), 12
// chains with a temporary each (zmm16-27): the fastest int8 sequence such a core has, the floor of
// the avx512 level.
void i8_saturating_zmm_loop(long iterations) {
  asm volatile(
      "vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
      "vpxord %%zmm13, %%zmm13, %%zmm13\n\t"
      "vpternlogd $0xff, %%zmm14, %%zmm14, %%zmm14\n\t"
      "vpsrlw $15, %%zmm14, %%zmm14\n\t"
      "1:\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm16\n\t"
      "vpmaddwd %%zmm14, %%zmm16, %%zmm16\n\t"
      "vpaddd %%zmm16, %%zmm0, %%zmm0\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm17\n\t"
      "vpmaddwd %%zmm14, %%zmm17, %%zmm17\n\t"
      "vpaddd %%zmm17, %%zmm1, %%zmm1\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm18\n\t"
      "vpmaddwd %%zmm14, %%zmm18, %%zmm18\n\t"
      "vpaddd %%zmm18, %%zmm2, %%zmm2\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm19\n\t"
      "vpmaddwd %%zmm14, %%zmm19, %%zmm19\n\t"
      "vpaddd %%zmm19, %%zmm3, %%zmm3\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm20\n\t"
      "vpmaddwd %%zmm14, %%zmm20, %%zmm20\n\t"
      "vpaddd %%zmm20, %%zmm4, %%zmm4\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm21\n\t"
      "vpmaddwd %%zmm14, %%zmm21, %%zmm21\n\t"
      "vpaddd %%zmm21, %%zmm5, %%zmm5\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm22\n\t"
      "vpmaddwd %%zmm14, %%zmm22, %%zmm22\n\t"
      "vpaddd %%zmm22, %%zmm6, %%zmm6\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm23\n\t"
      "vpmaddwd %%zmm14, %%zmm23, %%zmm23\n\t"
      "vpaddd %%zmm23, %%zmm7, %%zmm7\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm24\n\t"
      "vpmaddwd %%zmm14, %%zmm24, %%zmm24\n\t"
      "vpaddd %%zmm24, %%zmm8, %%zmm8\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm25\n\t"
      "vpmaddwd %%zmm14, %%zmm25, %%zmm25\n\t"
      "vpaddd %%zmm25, %%zmm9, %%zmm9\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm26\n\t"
      "vpmaddwd %%zmm14, %%zmm26, %%zmm26\n\t"
      "vpaddd %%zmm26, %%zmm10, %%zmm10\n\t"
      "vpmaddubsw %%zmm13, %%zmm12, %%zmm27\n\t"
      "vpmaddwd %%zmm14, %%zmm27, %%zmm27\n\t"
      "vpaddd %%zmm27, %%zmm11, %%zmm11\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "cc");
}

// AVX-VNNI: the VEX-encoded ymm vpdpbusd (Alder Lake-class cores without AVX-512), with 14
// accumulators and two factors as in fma_ymm_loop. The {vex} prefix (written %{vex%} in extended asm) makes GNU as emit the AVX-VNNI
// encoding, not AVX512-VNNI's EVEX one that this file's flags would otherwise choose.
void vpdpbusd_ymm_loop(long iterations) {
  asm volatile(
      "vpxor %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n\t"
      "1:\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm0\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm1\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm2\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm3\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm4\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm5\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm6\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm7\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm8\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm9\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm10\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm11\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm12\n\t"
      "%{vex%} vpdpbusd %%ymm15, %%ymm14, %%ymm13\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

// ymm has 16 architectural registers: 14 accumulators and two zero factors.
void fma_ymm_loop(long iterations) {
  asm volatile(
      "vxorps %%ymm14, %%ymm14, %%ymm14\n\t"
      "vxorps %%ymm15, %%ymm15, %%ymm15\n\t"
      "1:\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm0\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm1\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm2\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm3\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm4\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm5\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm6\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm7\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm8\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm9\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm10\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm11\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm12\n\t"
      "vfmadd231ps %%ymm15, %%ymm14, %%ymm13\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

// The int8 routes of AVX2 without VNNI, as kPeakChainsI8 independent chains of one accumulator
// each (ymm0-11; ymm12 the activation operand, ymm13 the weights, ymm14 int16 ones, ymm15 each
// chain's temporary, renamed per chain). Per chain and iteration:
//   widened    vpmaddwd + vpaddd: 16 products of int16-widened u8 and s8, exact
//              (qu8s8_gemm_6x8__avx2)
//   saturating vpmaddubsw + vpmaddwd(ones) + vpaddd: 32 u8·s8 products whose int16 pair sums
//              saturate (ONNX Runtime's AVX2 kernel)
//   signed     vpsignb + vpmaddubsw + vpmaddwd(ones) + vpaddd: 32 products of |a'| (a' = q - 128,
//              |a'| <= 128) and sign(a')·w, |w| <= 127: exact (qu8s8_gemm_4x16__avx2)
// The operands are zero: these integer instructions take the same time whatever the values.
void i8_widened_ymm_loop(long iterations) {
  asm volatile(
      "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
      "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpcmpeqw %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpsrlw $15, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm0, %%ymm0\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm1, %%ymm1\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm2, %%ymm2\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm3, %%ymm3\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm4, %%ymm4\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm5, %%ymm5\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm6, %%ymm6\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm7, %%ymm7\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm8, %%ymm8\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm9, %%ymm9\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm10, %%ymm10\n\t"
      "vpmaddwd %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm11, %%ymm11\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

void i8_saturating_ymm_loop(long iterations) {
  asm volatile(
      "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
      "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpcmpeqw %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpsrlw $15, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm0, %%ymm0\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm1, %%ymm1\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm2, %%ymm2\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm3, %%ymm3\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm4, %%ymm4\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm5, %%ymm5\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm6, %%ymm6\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm7, %%ymm7\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm8, %%ymm8\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm9, %%ymm9\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm10, %%ymm10\n\t"
      "vpmaddubsw %%ymm13, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm11, %%ymm11\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

void i8_signed_ymm_loop(long iterations) {
  asm volatile(
      "vpxor %%ymm12, %%ymm12, %%ymm12\n\t"
      "vpxor %%ymm13, %%ymm13, %%ymm13\n\t"
      "vpcmpeqw %%ymm14, %%ymm14, %%ymm14\n\t"
      "vpsrlw $15, %%ymm14, %%ymm14\n\t"
      "1:\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm0, %%ymm0\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm1, %%ymm1\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm2, %%ymm2\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm3, %%ymm3\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm4, %%ymm4\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm5, %%ymm5\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm6, %%ymm6\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm7, %%ymm7\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm8, %%ymm8\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm9, %%ymm9\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm10, %%ymm10\n\t"
      "vpsignb %%ymm12, %%ymm13, %%ymm15\n\t"
      "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"
      "vpmaddwd %%ymm14, %%ymm15, %%ymm15\n\t"
      "vpaddd %%ymm15, %%ymm11, %%ymm11\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc");
}

// AMX: six independent accumulator tiles (6 × 16 cycles of the TMUL unit between two
// tdpbusd on the same tile, more than the instruction's latency), factors zero. As the fp16
// loop, GNU as knows the mnemonics whatever the compiler flags; the loop only runs where
// isa_supported() found AMX-INT8 (which includes Linux's tile-data permission).
void tdpbusd_loop(long iterations) {
  alignas(64) unsigned char config[64] = {};  // ldtilecfg: palette 1, tmm0-7 16 rows × 64 bytes
  config[0] = 1;
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64;
    config[48 + t] = 16;
  }
  asm volatile(
      "ldtilecfg %1\n\t"
      "tilezero %%tmm0\n\t"
      "tilezero %%tmm1\n\t"
      "tilezero %%tmm2\n\t"
      "tilezero %%tmm3\n\t"
      "tilezero %%tmm4\n\t"
      "tilezero %%tmm5\n\t"
      "tilezero %%tmm6\n\t"
      "tilezero %%tmm7\n\t"
      "1:\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm0\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm1\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm2\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm3\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm4\n\t"
      "tdpbusd %%tmm7, %%tmm6, %%tmm5\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      "tilerelease\n\t"
      : "+r"(iterations)
      : "m"(config)
      : "cc");
}
void read_lines_zmm(const void* p, long lines) {
  asm volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "vpxord %%zmm1, %%zmm1, %%zmm1\n\t"
      "vpxord %%zmm2, %%zmm2, %%zmm2\n\t"
      "vpxord %%zmm3, %%zmm3, %%zmm3\n\t"
      "1:\n\t"
      "vpaddq (%0), %%zmm0, %%zmm0\n\t"
      "vpaddq 64(%0), %%zmm1, %%zmm1\n\t"
      "vpaddq 128(%0), %%zmm2, %%zmm2\n\t"
      "vpaddq 192(%0), %%zmm3, %%zmm3\n\t"
      "add $256, %0\n\t"
      "sub $4, %1\n\t"
      "jg 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(p), "+r"(lines)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "cc", "memory");
}

void read_lines_ymm(const void* p, long lines) {
  asm volatile(
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"
      "vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
      "vpxor %%ymm2, %%ymm2, %%ymm2\n\t"
      "vpxor %%ymm3, %%ymm3, %%ymm3\n\t"
      "1:\n\t"
      "vpaddq (%0), %%ymm0, %%ymm0\n\t"
      "vpaddq 32(%0), %%ymm1, %%ymm1\n\t"
      "vpaddq 64(%0), %%ymm2, %%ymm2\n\t"
      "vpaddq 96(%0), %%ymm3, %%ymm3\n\t"
      "vpaddq 128(%0), %%ymm0, %%ymm0\n\t"
      "vpaddq 160(%0), %%ymm1, %%ymm1\n\t"
      "vpaddq 192(%0), %%ymm2, %%ymm2\n\t"
      "vpaddq 224(%0), %%ymm3, %%ymm3\n\t"
      "add $256, %0\n\t"
      "sub $4, %1\n\t"
      "jg 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(p), "+r"(lines)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "cc", "memory");
}
#endif

}  // namespace encrt::bench
