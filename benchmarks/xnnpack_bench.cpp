// XNNPACK's fully connected operators (Debian libxnnpack-dev, 2022-02 snapshot) on the same
// MiniLM shapes, single-threaded (no pthreadpool), for "encrt vs XNNPACK" comparisons:
//   qs8_fc/xnnpack: xnn_create_fully_connected_nc_qs8 + xnn_run_operator on int8 inputs that are
//     already quantized, with int32 bias and its requantizing int8 output: less work than
//     encrt's qu8s8_full, which also quantizes the fp32 input and writes fp32 outputs.
//   f32_fc/xnnpack: xnn_create_fully_connected_nc_f32 with bias.
// Counters as in kernel_bench.cpp (pct_peak against the vpdpbusd / vfmadd231ps zmm peaks).
#include "bench_common.h"

#if defined(ENCRT_HAVE_XNNPACK)
#include <xnnpack.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace encrt::bench {

namespace {

std::vector<int8_t> random_int8(size_t n, uint32_t seed) {
  std::vector<int8_t> v(n);
  uint32_t x = seed * 2654435761u + 1u;
  for (int8_t& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<int8_t>(static_cast<int>(x >> 24) % 255 - 127);
  }
  return v;
}

void bench_qs8_fc(benchmark::State& state, GemmShape s) {
  const std::vector<int8_t> input = random_int8(static_cast<size_t>(s.M) * s.K, 1);
  const std::vector<int8_t> kernel = random_int8(static_cast<size_t>(s.N) * s.K, 2);
  const std::vector<int32_t> bias(s.N, 100);
  std::vector<int8_t> output(static_cast<size_t>(s.M) * s.N);
  xnn_operator_t op = nullptr;
  // Scales chosen so that input_scale · kernel_scale / output_scale is a valid requantization
  // multiplier; the values do not change the amount of work.
  if (xnn_create_fully_connected_nc_qs8(s.K, s.N, s.K, s.N, /*input_zero_point=*/1, /*input_scale=*/0.02f,
                                        /*kernel_scale=*/0.01f, kernel.data(), bias.data(),
                                        /*output_zero_point=*/0, /*output_scale=*/0.5f, -128, 127, 0,
                                        &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_qs8(op, s.M, input.data(), output.data(), nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_create/setup_fully_connected_nc_qs8 failed");
    if (op) xnn_delete_operator(op);
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(op);
  set_rate_counters(state, 2.0 * s.M * s.N * s.K, measured_peaks().vpdpbusd_zmm_ops);
}

void bench_f32_fc(benchmark::State& state, GemmShape s) {
  std::vector<float> input(static_cast<size_t>(s.M) * s.K, 0.5f), kernel(static_cast<size_t>(s.N) * s.K, 0.01f);
  std::vector<float> bias(s.N, 0.1f), output(static_cast<size_t>(s.M) * s.N);
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(s.K, s.N, s.K, s.N, kernel.data(), bias.data(), -INFINITY, INFINITY, 0,
                                        &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_f32(op, s.M, input.data(), output.data(), nullptr) != xnn_status_success) {
    state.SkipWithError("xnn_create/setup_fully_connected_nc_f32 failed");
    if (op) xnn_delete_operator(op);
    return;
  }
  for (auto _ : state) {
    xnn_run_operator(op, nullptr);
    benchmark::ClobberMemory();
  }
  xnn_delete_operator(op);
  const Peaks& p = measured_peaks();
  set_rate_counters(state, 2.0 * s.M * s.N * s.K, p.fma_zmm_flops > 0 ? p.fma_zmm_flops : p.fma_ymm_flops);
}

}  // namespace

void register_xnnpack_benchmarks() {
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::printf("xnn_initialize failed: XNNPACK benchmarks skipped\n");
    return;
  }
  for (const GemmShape& s : minilm_shapes()) {
    for (auto [name, fn] : {std::pair{"qs8_fc/xnnpack/", bench_qs8_fc}, std::pair{"f32_fc/xnnpack/", bench_f32_fc}}) {
      auto* b = benchmark::RegisterBenchmark((name + shape_name(s)).c_str(), fn, s);
      b->Unit(benchmark::kMicrosecond);
      add_best_of_statistics(b);
    }
  }
}

}  // namespace encrt::bench

#else

namespace encrt::bench {
void register_xnnpack_benchmarks() {}
}  // namespace encrt::bench

#endif
