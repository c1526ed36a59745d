// The single-core instruction peaks of this CPU, measured by the register-only loops of
// peak_probe_x86.cpp. Used by encrt_kernel_bench (each kernel as a percentage of its peak) and by
// encrt_model_floor (a whole model's time against the floor those peaks set). No Google Benchmark
// here: the library builds wherever the runtime does.
#pragma once

namespace encrt::bench {

// Operations per second of one core; zero where the CPU lacks the instruction (every field on a
// CPU that is not x86-64).
struct Peaks {
  double vpdpbusd_zmm_ops = 0;  // int ops/s: 16 lanes × 4 u8·s8 products × 2 (multiply + add)
  double vpdpbusd_ymm_ops = 0;  // the same for AVX-VNNI's VEX-encoded ymm vpdpbusd (8 lanes)
  double fma_zmm_flops = 0;     // flop/s of vfmadd231ps zmm (16 lanes × 2)
  double fma_ymm_flops = 0;     // flop/s of vfmadd231ps ymm (8 lanes × 2)
  double fma_ph_zmm_flops = 0;  // flop/s of vfmadd231ph zmm (32 fp16 lanes × 2), AVX512-FP16 only
  // int ops/s (products × 2) of the AVX2 int8 routes without VNNI (peak_probe_x86.h)
  double i8_widened_ymm_ops = 0;     // vpmaddwd + vpaddd: 16 products
  double i8_saturating_ymm_ops = 0;  // vpmaddubsw + vpmaddwd + vpaddd: 32 products
  double i8_signed_ymm_ops = 0;      // vpsignb + vpmaddubsw + vpmaddwd + vpaddd: 32 products
  double i8_saturating_zmm_ops = 0;  // the saturating route on zmm (AVX-512 BW): 64 products
  double tdpbusd_ops = 0;       // int ops/s of tdpbusd (16 × 16 int32 × 64 u8·s8 products × 2), AMX-INT8 only
  // aarch64 (peak_probe_arm.h)
  double sdot_ops = 0;          // sdot .4s: 4 lanes × 4 s8·s8 products × 2 (the dot product extension)
  double usmmla_ops = 0;        // usmmla: 2 × 2 lanes × 8 u8·s8 products × 2 (I8MM)
  double fmla_4s_flops = 0;     // fmla .4s: 4 lanes × 2
  double fmla_8h_flops = 0;     // fmla .8h: 8 fp16 lanes × 2 (half-precision arithmetic)
  double smull_sadalp_ops = 0;  // smull + smlsl + sadalp: 16 int8 products × 2 (ARMv8.0, no dot product)
};

// Runs every probe this CPU can run (a few tenths of a second), prints one line of the results
// when `print` is set, and returns them.
Peaks measure_peaks(bool print);
// The line(s) measure_peaks(true) prints.
void print_peaks(const Peaks& p);
// Field by field the larger of two measurements (a shared machine's noise only ever lowers a rate).
Peaks best_of(const Peaks& a, const Peaks& b);
// measure_peaks(true) once per process; later calls return the same values.
const Peaks& measured_peaks();

}  // namespace encrt::bench
