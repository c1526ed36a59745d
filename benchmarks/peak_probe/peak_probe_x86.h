// Register-only instruction loops of peak_probe_x86.cpp: `iterations` × kPeakChains (or
// kPeakChainsYmm, kPeakTileChains) instructions each. Declarations only: the file that defines them is built with
// AVX-512 VNNI flags and must not share inline code with the rest of the benchmark.
#pragma once

namespace encrt::bench {

#if defined(__x86_64__)
constexpr int kPeakChains = 16;     // zmm accumulators per iteration
constexpr int kPeakChainsYmm = 14;  // ymm accumulators per iteration (16 registers, 2 factors)
void vpdpbusd_zmm_loop(long iterations);  // AVX512-VNNI
void fma_zmm_loop(long iterations);       // AVX-512F
void fma_ph_zmm_loop(long iterations);    // AVX512-FP16
void fma_ymm_loop(long iterations);       // FMA
void vpdpbusd_ymm_loop(long iterations);  // AVX-VNNI (VEX-encoded, ymm)
constexpr int kPeakChainsI8 = 12;   // ymm accumulators of the AVX2 int8 routes (4 operand registers)
void i8_widened_ymm_loop(long iterations);     // AVX2: vpmaddwd + vpaddd
void i8_saturating_ymm_loop(long iterations);  // AVX2: vpmaddubsw + vpmaddwd + vpaddd
void i8_signed_ymm_loop(long iterations);      // AVX2: vpsignb + vpmaddubsw + vpmaddwd + vpaddd
void i8_saturating_zmm_loop(long iterations);  // AVX-512 BW: the saturating route on zmm, 12 chains
// AMX-INT8: `iterations` × kPeakTileChains tdpbusd; configures the tiles itself and releases them.
constexpr int kPeakTileChains = 6;  // C tiles (tmm0-5) per iteration; tmm6 and tmm7 the factors
void tdpbusd_loop(long iterations);
// Memory, not registers: `lines` 64-byte lines from p (64-byte aligned, `lines` a multiple of 4)
// added into 4 accumulators with one zmm (AVX-512F) or two ymm (AVX2) loads per line.
void read_lines_zmm(const void* p, long lines);
void read_lines_ymm(const void* p, long lines);
#endif

}  // namespace encrt::bench
