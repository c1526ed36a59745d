// Times the register-only loops of peak_probe_x86.cpp and peak_probe_arm.cpp: each runs only on
// a CPU for which isa_supported() says it has their instructions.
#include "peaks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "kernels/isa.h"
#include "peak_probe_arm.h"
#include "peak_probe_x86.h"

namespace encrt::bench {

namespace {

// Best rate over 30 timed runs of `loop` (after one warm-up run): instructions/s × ops per
// instruction.
[[maybe_unused]] double best_rate(void (*loop)(long), int instructions_per_iteration, double ops_per_instruction) {
  constexpr long kIterations = 200000;  // a few million instructions: about a millisecond per run
  loop(kIterations);                    // warm-up: wakes the vector units, settles the clock
  double best = 0;
  for (int run = 0; run < 30; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    loop(kIterations);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, kIterations * instructions_per_iteration * ops_per_instruction / s);
  }
  return best;
}

}  // namespace

Peaks measure_peaks(bool print) {
  using kernels::isa_supported;
  Peaks p;
#if defined(__x86_64__)
  using kernels::kIsaAmxInt8;
  using kernels::kIsaAvx2;
  using kernels::kIsaAvx512;
  using kernels::kIsaAvx512Fp16;
  using kernels::kIsaAvx512Vnni;
  using kernels::kIsaAvxVnni;
  if (isa_supported(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni))
    p.vpdpbusd_zmm_ops = best_rate(vpdpbusd_zmm_loop, kPeakChains, 16 * 4 * 2);
  if (isa_supported(kIsaAvx2 | kIsaAvxVnni))
    p.vpdpbusd_ymm_ops = best_rate(vpdpbusd_ymm_loop, kPeakChainsYmm, 8 * 4 * 2);
  if (isa_supported(kIsaAvx2 | kIsaAvx512)) p.fma_zmm_flops = best_rate(fma_zmm_loop, kPeakChains, 16 * 2);
  if (isa_supported(kIsaAvx2)) {
    p.fma_ymm_flops = best_rate(fma_ymm_loop, kPeakChainsYmm, 8 * 2);
    p.i8_widened_ymm_ops = best_rate(i8_widened_ymm_loop, kPeakChainsI8, 16 * 2);
    p.i8_saturating_ymm_ops = best_rate(i8_saturating_ymm_loop, kPeakChainsI8, 32 * 2);
    p.i8_signed_ymm_ops = best_rate(i8_signed_ymm_loop, kPeakChainsI8, 32 * 2);
  }
  if (isa_supported(kIsaAvx2 | kIsaAvx512))
    p.i8_saturating_zmm_ops = best_rate(i8_saturating_zmm_loop, kPeakChainsI8, 64 * 2);
  if (isa_supported(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16))
    p.fma_ph_zmm_flops = best_rate(fma_ph_zmm_loop, kPeakChains, 32 * 2);
  if (isa_supported(kIsaAmxInt8)) p.tdpbusd_ops = best_rate(tdpbusd_loop, kPeakTileChains, 16 * 16 * 64 * 2);
#elif defined(__aarch64__)
  using kernels::kIsaNeon;
  using kernels::kIsaNeonDot;
  using kernels::kIsaNeonFp16;
  using kernels::kIsaNeonI8mm;
  if (isa_supported(kIsaNeon)) p.fmla_4s_flops = best_rate(fmla_4s_loop, kPeakChainsNeon, 4 * 2);
  if (isa_supported(kIsaNeon)) p.smull_sadalp_ops = best_rate(smull_sadalp_loop, kPeakChainsSmull, 16 * 2);
  if (isa_supported(kIsaNeon | kIsaNeonDot)) p.sdot_ops = best_rate(sdot_loop, kPeakChainsNeon, 4 * 4 * 2);
  if (isa_supported(kIsaNeon | kIsaNeonFp16)) p.fmla_8h_flops = best_rate(fmla_8h_loop, kPeakChainsNeon, 8 * 2);
  if (isa_supported(kIsaNeon | kIsaNeonI8mm)) p.usmmla_ops = best_rate(usmmla_loop, kPeakChainsNeon, 2 * 2 * 8 * 2);
#endif
  if (print) print_peaks(p);
  return p;
}

void print_peaks(const Peaks& p) {
#if defined(__aarch64__)
  std::printf("measured single-core peaks: sdot %.1f Gop/s, usmmla %.1f Gop/s, smull+smlsl+sadalp %.1f Gop/s, "
              "fmla .4s %.1f Gflop/s, fmla .8h %.1f Gflop/s\n",
              p.sdot_ops * 1e-9, p.usmmla_ops * 1e-9, p.smull_sadalp_ops * 1e-9, p.fmla_4s_flops * 1e-9,
              p.fmla_8h_flops * 1e-9);
#else
  std::printf("measured single-core peaks: vpdpbusd zmm %.1f Gop/s, vpdpbusd ymm (AVX-VNNI) %.1f Gop/s, "
              "vfmadd231ps zmm %.1f Gflop/s, vfmadd231ps ymm %.1f Gflop/s, vfmadd231ph zmm %.1f Gflop/s, "
              "tdpbusd %.1f Gop/s\n",
              p.vpdpbusd_zmm_ops * 1e-9, p.vpdpbusd_ymm_ops * 1e-9, p.fma_zmm_flops * 1e-9, p.fma_ymm_flops * 1e-9,
              p.fma_ph_zmm_flops * 1e-9, p.tdpbusd_ops * 1e-9);
  std::printf("AVX2 int8 routes (12 chains): widened vpmaddwd %.1f Gop/s, saturating vpmaddubsw %.1f Gop/s, "
              "signed vpsignb+vpmaddubsw %.1f Gop/s; saturating on zmm %.1f Gop/s\n",
              p.i8_widened_ymm_ops * 1e-9, p.i8_saturating_ymm_ops * 1e-9, p.i8_signed_ymm_ops * 1e-9,
              p.i8_saturating_zmm_ops * 1e-9);
#endif
}

Peaks best_of(const Peaks& a, const Peaks& b) {
  Peaks p;
  p.vpdpbusd_zmm_ops = std::max(a.vpdpbusd_zmm_ops, b.vpdpbusd_zmm_ops);
  p.vpdpbusd_ymm_ops = std::max(a.vpdpbusd_ymm_ops, b.vpdpbusd_ymm_ops);
  p.fma_zmm_flops = std::max(a.fma_zmm_flops, b.fma_zmm_flops);
  p.fma_ymm_flops = std::max(a.fma_ymm_flops, b.fma_ymm_flops);
  p.fma_ph_zmm_flops = std::max(a.fma_ph_zmm_flops, b.fma_ph_zmm_flops);
  p.i8_widened_ymm_ops = std::max(a.i8_widened_ymm_ops, b.i8_widened_ymm_ops);
  p.i8_saturating_ymm_ops = std::max(a.i8_saturating_ymm_ops, b.i8_saturating_ymm_ops);
  p.i8_signed_ymm_ops = std::max(a.i8_signed_ymm_ops, b.i8_signed_ymm_ops);
  p.i8_saturating_zmm_ops = std::max(a.i8_saturating_zmm_ops, b.i8_saturating_zmm_ops);
  p.tdpbusd_ops = std::max(a.tdpbusd_ops, b.tdpbusd_ops);
  p.sdot_ops = std::max(a.sdot_ops, b.sdot_ops);
  p.usmmla_ops = std::max(a.usmmla_ops, b.usmmla_ops);
  p.fmla_4s_flops = std::max(a.fmla_4s_flops, b.fmla_4s_flops);
  p.fmla_8h_flops = std::max(a.fmla_8h_flops, b.fmla_8h_flops);
  p.smull_sadalp_ops = std::max(a.smull_sadalp_ops, b.smull_sadalp_ops);
  return p;
}

const Peaks& measured_peaks() {
  static const Peaks peaks = measure_peaks(true);
  return peaks;
}

}  // namespace encrt::bench
