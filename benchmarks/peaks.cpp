// Measures the single-core peaks with the register-only loops of peak_probe_x86.cpp, and
// registers those loops as benchmarks of their own.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench_common.h"
#include "kernels/isa.h"

namespace encrt::bench {
namespace {

using kernels::isa_supported;
using kernels::kIsaAvx2;
using kernels::kIsaAvx512;
using kernels::kIsaAvx512Fp16;
using kernels::kIsaAvx512Vnni;
using kernels::kIsaAmxInt8;

// Best rate over several timed runs of `loop`: instructions/s × ops per instruction.
double best_rate(void (*loop)(long), int instructions_per_iteration, double ops_per_instruction) {
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

Peaks measure_peaks() {
  Peaks p;
#if defined(__x86_64__)
  if (isa_supported(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni))
    p.vpdpbusd_zmm_ops = best_rate(vpdpbusd_zmm_loop, kPeakChains, 16 * 4 * 2);
  if (isa_supported(kIsaAvx2 | kIsaAvx512)) p.fma_zmm_flops = best_rate(fma_zmm_loop, kPeakChains, 16 * 2);
  if (isa_supported(kIsaAvx2)) {
    p.fma_ymm_flops = best_rate(fma_ymm_loop, kPeakChainsYmm, 8 * 2);
    p.i8_widened_ymm_ops = best_rate(i8_widened_ymm_loop, kPeakChainsI8, 16 * 2);
    p.i8_saturating_ymm_ops = best_rate(i8_saturating_ymm_loop, kPeakChainsI8, 32 * 2);
    p.i8_signed_ymm_ops = best_rate(i8_signed_ymm_loop, kPeakChainsI8, 32 * 2);
  }
  if (isa_supported(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16))
    p.fma_ph_zmm_flops = best_rate(fma_ph_zmm_loop, kPeakChains, 32 * 2);
  if (isa_supported(kIsaAmxInt8)) p.tdpbusd_ops = best_rate(tdpbusd_loop, kPeakTileChains, 16 * 16 * 64 * 2);
#endif
  std::printf("measured single-core peaks: vpdpbusd zmm %.1f Gop/s, vfmadd231ps zmm %.1f Gflop/s, "
              "vfmadd231ps ymm %.1f Gflop/s, vfmadd231ph zmm %.1f Gflop/s, tdpbusd %.1f Gop/s\n",
              p.vpdpbusd_zmm_ops * 1e-9, p.fma_zmm_flops * 1e-9, p.fma_ymm_flops * 1e-9,
              p.fma_ph_zmm_flops * 1e-9, p.tdpbusd_ops * 1e-9);
  std::printf("AVX2 int8 routes (12 chains): widened vpmaddwd %.1f Gop/s, saturating vpmaddubsw %.1f Gop/s, "
              "signed vpsignb+vpmaddubsw %.1f Gop/s\n",
              p.i8_widened_ymm_ops * 1e-9, p.i8_saturating_ymm_ops * 1e-9, p.i8_signed_ymm_ops * 1e-9);
  return p;
}

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

const Peaks& measured_peaks() {
  static const Peaks peaks = measure_peaks();
  return peaks;
}

void register_peak_benchmarks() {
#if defined(__x86_64__)
  const Peaks& p = measured_peaks();
  if (p.vpdpbusd_zmm_ops > 0)
    register_probe("peak/vpdpbusd_zmm", vpdpbusd_zmm_loop, kPeakChains, 16 * 4 * 2, p.vpdpbusd_zmm_ops);
  if (p.fma_zmm_flops > 0)
    register_probe("peak/vfmadd231ps_zmm", fma_zmm_loop, kPeakChains, 16 * 2, p.fma_zmm_flops);
  if (p.fma_ph_zmm_flops > 0)
    register_probe("peak/vfmadd231ph_zmm", fma_ph_zmm_loop, kPeakChains, 32 * 2, p.fma_ph_zmm_flops);
  if (p.fma_ymm_flops > 0)
    register_probe("peak/vfmadd231ps_ymm", fma_ymm_loop, kPeakChainsYmm, 8 * 2, p.fma_ymm_flops);
  if (p.i8_widened_ymm_ops > 0) {
    register_probe("peak/i8_widened_ymm", i8_widened_ymm_loop, kPeakChainsI8, 16 * 2, p.i8_widened_ymm_ops);
    register_probe("peak/i8_saturating_ymm", i8_saturating_ymm_loop, kPeakChainsI8, 32 * 2, p.i8_saturating_ymm_ops);
    register_probe("peak/i8_signed_ymm", i8_signed_ymm_loop, kPeakChainsI8, 32 * 2, p.i8_signed_ymm_ops);
  }
  if (p.tdpbusd_ops > 0) register_probe("peak/tdpbusd", tdpbusd_loop, kPeakTileChains, 16 * 16 * 64 * 2, p.tdpbusd_ops);
#endif
}

}  // namespace encrt::bench
