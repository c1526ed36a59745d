// Register-only instruction loops of peak_probe_arm.cpp: `iterations` × kPeakChainsNeon
// instructions each. Declarations only: the file that defines them is built with the extensions'
// -march flags and must not share inline code with the rest of the program.
#pragma once

namespace encrt::bench {

#if defined(__aarch64__)
constexpr int kPeakChainsNeon = 24;  // v0-v23 accumulators; v24 and v25 the factors
void sdot_loop(long iterations);     // dot product extension: 32 ops (4 lanes × 4 products × 2)
void usmmla_loop(long iterations);   // I8MM: 64 ops (2 × 2 lanes × 8 products × 2)
void fmla_4s_loop(long iterations);  // fp32: 8 flops
void fmla_8h_loop(long iterations);  // fp16 arithmetic: 16 flops
constexpr int kPeakChainsSmull = 12;  // smull_sadalp_loop: chain steps (3 instructions each) per iteration
void smull_sadalp_loop(long iterations);  // ARMv8.0 int8: 32 ops per chain step (16 products)
// Memory, not registers: `lines` 64-byte lines from p, one ld1 of four q registers per line added
// into four accumulators.
void read_lines_neon(const void* p, long lines);
#endif

}  // namespace encrt::bench
