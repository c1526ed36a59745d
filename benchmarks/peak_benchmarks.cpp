// Registers the register-only loops of peak_probe_x86.cpp as benchmarks of their own (the peaks
// themselves are measured by peak_probe/peaks.cpp).
#include "bench_common.h"

namespace encrt::bench {
namespace {

#if defined(__x86_64__)
void register_probe(const char* name, void (*loop)(long), int instructions, double ops_per_instruction,
                    double peak) {
  auto* b = benchmark::RegisterBenchmark(name, [=](benchmark::State& state) {
    constexpr long kIterations = 100000;
    for (auto _ : state) loop(kIterations);
    set_rate_counters(state, static_cast<double>(kIterations) * instructions * ops_per_instruction, peak);
  });
  add_best_of_statistics(b);
}
#endif

}  // namespace

void register_peak_benchmarks() {
#if defined(__x86_64__)
  const Peaks& p = measured_peaks();
  if (p.vpdpbusd_zmm_ops > 0)
    register_probe("peak/vpdpbusd_zmm", vpdpbusd_zmm_loop, kPeakChains, 16 * 4 * 2, p.vpdpbusd_zmm_ops);
  if (p.fma_zmm_flops > 0)
    register_probe("peak/vfmadd231ps_zmm", fma_zmm_loop, kPeakChains, 16 * 2, p.fma_zmm_flops);
  if (p.fma_ph_zmm_flops > 0)
    register_probe("peak/vfmadd231ph_zmm", fma_ph_zmm_loop, kPeakChains, 32 * 2, p.fma_ph_zmm_flops);
  if (p.vpdpbusd_ymm_ops > 0)
    register_probe("peak/vpdpbusd_ymm", vpdpbusd_ymm_loop, kPeakChainsYmm, 8 * 4 * 2, p.vpdpbusd_ymm_ops);
  if (p.fma_ymm_flops > 0)
    register_probe("peak/vfmadd231ps_ymm", fma_ymm_loop, kPeakChainsYmm, 8 * 2, p.fma_ymm_flops);
  if (p.i8_widened_ymm_ops > 0) {
    register_probe("peak/i8_widened_ymm", i8_widened_ymm_loop, kPeakChainsI8, 16 * 2, p.i8_widened_ymm_ops);
    register_probe("peak/i8_saturating_ymm", i8_saturating_ymm_loop, kPeakChainsI8, 32 * 2, p.i8_saturating_ymm_ops);
    register_probe("peak/i8_signed_ymm", i8_signed_ymm_loop, kPeakChainsI8, 32 * 2, p.i8_signed_ymm_ops);
  }
  if (p.i8_saturating_zmm_ops > 0)
    register_probe("peak/i8_saturating_zmm", i8_saturating_zmm_loop, kPeakChainsI8, 64 * 2, p.i8_saturating_zmm_ops);
  if (p.tdpbusd_ops > 0) register_probe("peak/tdpbusd", tdpbusd_loop, kPeakTileChains, 16 * 16 * 64 * 2, p.tdpbusd_ops);
#endif
}

}  // namespace encrt::bench
