// encrt_kernel_bench: every kernel of the GEMM, quantize and LayerNorm lists (kernel_lists.h)
// that this CPU supports, the references aside, on MiniLM shapes; XNNPACK's fully connected
// operators on the same shapes, and register-only peak probes.
//
//   encrt_kernel_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Names are <kind>/<implementation>/<shape>, the implementation being the kernel's name from its
// list ("x86::qu8s8_gemm_8x48__avx512vnni"; for the qu8s8 kinds the int8 GEMM's):
//   qu8s8_full   quantize the fp32 activations per row + int8 GEMM + dequantize + bias
//   qu8s8_fused  the same with the layer's whole fused epilogue (GELU for ffn_up, + residual for
//                attn_out / ffn_down), as the runtime runs it
//   qu8s8_gemm   the int8 GEMM + dequantize + bias alone, on already quantized rows
//   f32, f16w    fp32 / fp16-weight GEMM with the layer's fused epilogue (f16: a fp16-weight
//                GEMM that computes in fp16 arithmetic)
//   quantize, layer_norm  the row-wise kernels around the GEMMs
//   attention_f32, attention_i8  one MiniLM layer's attention (12 heads of 32 dims, one sequence
//                of 16, 32, 64, 128 or 512 real tokens, the fused QKV layout), every head one
//                call as the runtime makes it; Gop/s counts the two products, 4·S²·D per head
//   qs8_fc/xnnpack, f32_fc/xnnpack: XNNPACK single-threaded (xnnpack_bench.cpp)
// Counters: GOPS = 2·M·N·K / CPU time in 1e9 ops/s; pct_peak = that as a percentage of the
// single-core peak of the instruction the kernel is built on (tdpbusd for the AMX int8 kernel,
// vpdpbusd ymm for the AVX-VNNI one, vpdpbusd zmm for the other int8 kernels with VNNI, the route's
// probe for the AVX2 int8 kernels without it (int8_peak), vfmadd231ps zmm for the AVX-512 float
// kernels, vfmadd231ps ymm for AVX2, vfmadd231ph zmm for AVX512-FP16), measured by register-only
// loops at start-up of the same run (peak_probe/peaks.cpp). With repetitions, read "_min" for time and "_max" for
// the rate counters (best-of-N on a noisy machine). A summary at the end puts the best-of-N
// results side by side: percent of peak, and encrt's speed relative to XNNPACK's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench_common.h"
#include "kernels/isa.h"
#include "kernels/kernel_lists.h"
#include "kernels/kernel_table.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::bench {

using kernels::Activation;
using kernels::GemmEpilogue;
using kernels::IsaFeatures;
using kernels::KernelTable;

std::vector<GemmShape> minilm_shapes() {
  std::vector<GemmShape> shapes;
  for (int M : {128, 16}) {
    shapes.push_back({M, 384, 384, "attn_out", Activation::kNone, true});
    shapes.push_back({M, 384, 1536, "ffn_up", Activation::kGelu, false});
    shapes.push_back({M, 1536, 384, "ffn_down", Activation::kNone, true});
  }
  return shapes;
}

void add_best_of_statistics(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  b->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
}

void set_rate_counters(benchmark::State& state, double ops, double peak) {
  state.counters["GOPS"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (peak > 0)
    state.counters["pct_peak"] = benchmark::Counter(100.0 * ops / peak, benchmark::Counter::kIsIterationInvariantRate);
}

std::string shape_name(const GemmShape& s) {
  return "M" + std::to_string(s.M) + "_K" + std::to_string(s.K) + "_N" + std::to_string(s.N) + "_" + s.layer;
}

namespace {

Buffer<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  Buffer<float> v(n);
  uint32_t x = seed * 2654435761u + 1u;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = lo + (hi - lo) * static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
  }
  return v;
}

// Inputs and packed weights of one linear layer, built once per benchmark run, each on a cache
// line as in the runtime.
struct Layer {
  GemmShape shape;
  Buffer<float> x, w, bias, residual, c;
  Buffer<float> w_f32;
  Buffer<uint16_t> w_f16;
  Buffer<int8_t> w_i8;
  Buffer<float> w_scale;
  Buffer<int32_t> w_sum;
  Buffer<uint8_t> q;
  Buffer<float> q_scale;
  Buffer<int32_t> q_zp;
  mutable Buffer<uint8_t> workspace;  // the int8 GEMMs' (kernel_types.h)
  int ldq = 0;
  GemmEpilogue ep;

  // int8_levels: the int8 weights' largest |q|, 127, or 63 for a kernel that needs 7-bit
  // weights (int8_levels_for).
  explicit Layer(const GemmShape& s, int int8_levels = 127) : shape(s) {
    const int M = s.M, K = s.K, N = s.N;
    x = random_floats(static_cast<size_t>(M) * K, 1, -2.0f, 2.0f);
    w = random_floats(static_cast<size_t>(N) * K, 2, -0.1f, 0.1f);
    bias = random_floats(N, 3, -0.5f, 0.5f);
    residual = random_floats(static_cast<size_t>(M) * N, 4, -1.0f, 1.0f);
    c.assign(static_cast<size_t>(M) * N, 0.0f);
    w_f32.resize(kernels::panel_f32_size(N, K));
    kernels::ref::pack_weights_f32(N, K, w.data(), w_f32.data());
    w_f16.resize(kernels::panel_f32_size(N, K));
    kernels::ref::pack_weights_f16(N, K, w.data(), w_f16.data());
    w_i8.resize(kernels::panel_i8_size(N, K));
    w_scale.resize(N);
    w_sum.resize(N);
    kernels::ref::quantize_pack_weights_i8(N, K, w.data(), w_i8.data(), w_scale.data(), w_sum.data(), int8_levels);
    ldq = kernels::round_up(K, kernels::kPanelK);
    q.resize(static_cast<size_t>(M) * ldq);
    q_scale.resize(M);
    q_zp.resize(M);
    kernels::ref::quantize_rows_u8(M, K, x.data(), K, nullptr, q.data(), ldq, q_scale.data(), q_zp.data());
    workspace.resize(kernels::max_gemm_u8s8_workspace(K));
    ep.bias = bias.data();
    ep.activation = s.activation;
    if (s.residual) {
      ep.residual = residual.data();
      ep.ldr = N;
    }
  }
  kernels::QuantizedRows rows() const { return {q.data(), ldq, q_scale.data(), q_zp.data(), workspace.data()}; }
};

double gemm_ops(const GemmShape& s) { return 2.0 * s.M * s.N * s.K; }

// The int8 weights a table's GEMM runs on: the converter's 8-bit ones, or 7-bit ones for a
// kernel that needs them (kernel_lists.h's kNarrowWeights).
int int8_levels_for(const KernelTable& t) { return t.gemm_u8s8_weight_bound < 127 ? t.gemm_u8s8_weight_bound : 127; }

// The FMA peak of a float kernel that requires `features`.
double fma_peak(IsaFeatures features) {
  const Peaks& p = measured_peaks();
  if (features & kernels::kIsaAvx512Fp16) return p.fma_ph_zmm_flops;  // the fp16-arithmetic GEMM
  return features & kernels::kIsaAvx512 ? p.fma_zmm_flops : p.fma_ymm_flops;
}

// The peak of the int8 route a kernel takes: tdpbusd's for the AMX kernel; the AVX2 kernels
// without VNNI against their own route's register-only probe (widened vpmaddwd, signed vpsignb +
// vpmaddubsw, and for 7-bit weights the saturating probe's vpmaddubsw + vpmaddwd + vpaddd, which
// cannot saturate on them); the AVX-VNNI kernel against vpdpbusd ymm; the others against vpdpbusd
// zmm (the AVX-512 kernel without VNNI too: it has no probe of its own, and that says how far it is
// from the best path).
double int8_peak(kernels::GemmU8S8Fn fn) {
  const Peaks& p = measured_peaks();
#if defined(ENCRT_ARCH_X86)
  if (fn == kernels::x86::qu8s8_gemm_32x32__amx) return p.tdpbusd_ops;
  if (fn == kernels::x86::qu8s8_gemm_6x8__avx2) return p.i8_widened_ymm_ops;
  if (fn == kernels::x86::qu8s8_gemm_4x16__avx2) return p.i8_signed_ymm_ops;
  if (fn == kernels::x86::qu8s7_gemm_6x16__avx2) return p.i8_saturating_ymm_ops;
  if (fn == kernels::x86::qu8s8_gemm_6x16__avxvnni) return p.vpdpbusd_ymm_ops;
#endif
  (void)fn;
  return p.vpdpbusd_zmm_ops;
}
const char* int8_peak_name(kernels::GemmU8S8Fn fn) {
#if defined(ENCRT_ARCH_X86)
  if (fn == kernels::x86::qu8s8_gemm_32x32__amx) return "tdpbusd";
  if (fn == kernels::x86::qu8s8_gemm_6x8__avx2) return "the widened AVX2 route";
  if (fn == kernels::x86::qu8s8_gemm_4x16__avx2) return "the signed AVX2 route";
  if (fn == kernels::x86::qu8s7_gemm_6x16__avx2) return "the 7-bit weights' AVX2 route";
  if (fn == kernels::x86::qu8s8_gemm_6x16__avxvnni) return "vpdpbusd ymm";
#endif
  (void)fn;
  return "vpdpbusd zmm";
}

// The layer's epilogue reduced to dequantize + bias (what qu8s8_full and qu8s8_gemm time).
GemmEpilogue bias_only(const Layer& L) {
  GemmEpilogue ep;
  ep.bias = L.bias.data();
  return ep;
}

void bench_qu8s8_full(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s, int8_levels_for(t));
  const GemmEpilogue ep = bias_only(L);
  for (auto _ : state) {
    t.quantize_rows_u8(s.M, s.K, L.x.data(), s.K, nullptr, L.q.data(), L.ldq, L.q_scale.data(), L.q_zp.data());
    t.gemm_u8s8(s.M, s.N, s.K, L.rows(), L.w_i8.data(), L.w_sum.data(), L.w_scale.data(), L.c.data(), s.N, ep);
    benchmark::ClobberMemory();
  }
  set_rate_counters(state, gemm_ops(s), int8_peak(t.gemm_u8s8));
}

void bench_qu8s8_fused(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s, int8_levels_for(t));
  for (auto _ : state) {
    t.quantize_rows_u8(s.M, s.K, L.x.data(), s.K, nullptr, L.q.data(), L.ldq, L.q_scale.data(), L.q_zp.data());
    t.gemm_u8s8(s.M, s.N, s.K, L.rows(), L.w_i8.data(), L.w_sum.data(), L.w_scale.data(), L.c.data(), s.N, L.ep);
    benchmark::ClobberMemory();
  }
  set_rate_counters(state, gemm_ops(s), int8_peak(t.gemm_u8s8));
}

void bench_qu8s8_gemm(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s, int8_levels_for(t));
  const GemmEpilogue ep = bias_only(L);
  for (auto _ : state) {
    t.gemm_u8s8(s.M, s.N, s.K, L.rows(), L.w_i8.data(), L.w_sum.data(), L.w_scale.data(), L.c.data(), s.N, ep);
    benchmark::ClobberMemory();
  }
  set_rate_counters(state, gemm_ops(s), int8_peak(t.gemm_u8s8));
}

void bench_f32(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s);
  for (auto _ : state) {
    t.gemm_f32(s.M, s.N, s.K, L.x.data(), s.K, L.w_f32.data(), L.c.data(), s.N, L.ep);
    benchmark::ClobberMemory();
  }
  set_rate_counters(state, gemm_ops(s), fma_peak(t.features));
}

void bench_f16w(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s);
  for (auto _ : state) {
    t.gemm_f16(s.M, s.N, s.K, L.x.data(), s.K, L.w_f16.data(), L.c.data(), s.N, L.ep);
    benchmark::ClobberMemory();
  }
  set_rate_counters(state, gemm_ops(s), fma_peak(t.features));
}

// The two row-wise kernels around the GEMMs, on MiniLM rows: Gelem/s = M·K / time in 1e9/s.
// quantize_smooth: with per-channel activation multipliers (SmoothQuant), as the converter's int8
// models have them.
void bench_quantize_rows(benchmark::State& state, const KernelTable& t, GemmShape s, bool smooth) {
  Layer L(s);
  const Buffer<float> multipliers = random_floats(static_cast<size_t>(s.K), 5, 0.25f, 4.0f);
  const float* mul = smooth ? multipliers.data() : nullptr;
  for (auto _ : state) {
    t.quantize_rows_u8(s.M, s.K, L.x.data(), s.K, mul, L.q.data(), L.ldq, L.q_scale.data(), L.q_zp.data());
    benchmark::ClobberMemory();
  }
  state.counters["Gelem"] = benchmark::Counter(1e-9 * s.M * s.K, benchmark::Counter::kIsIterationInvariantRate);
}
void bench_quantize(benchmark::State& state, const KernelTable& t, GemmShape s) {
  bench_quantize_rows(state, t, s, false);
}
void bench_quantize_smooth(benchmark::State& state, const KernelTable& t, GemmShape s) {
  bench_quantize_rows(state, t, s, true);
}

void bench_layer_norm(benchmark::State& state, const KernelTable& t, GemmShape s) {
  Layer L(s);  // LayerNorm of the [M, K] activations, gamma/beta taken from bias/w
  Buffer<float> y(L.x.size());
  for (auto _ : state) {
    t.layer_norm(s.M, s.K, L.x.data(), s.K, L.w.data(), L.bias.data(), 1e-12f, y.data(), s.K);
    benchmark::ClobberMemory();
  }
  state.counters["Gelem"] = benchmark::Counter(1e-9 * s.M * s.K, benchmark::Counter::kIsIterationInvariantRate);
}

// One layer's attention of MiniLM: heads × (one call per head), inputs uniform in [-2, 2] in the fused
// QKV layout ([S, 3·H·D]); the counter is the two products' 4·S²·D per head.
void bench_attention(benchmark::State& state, const kernels::AttentionKernel& k, int S) {
  constexpr int kHeads = 12, kDim = 32;
  const Buffer<float> qkv = random_floats(static_cast<size_t>(S) * 3 * kHeads * kDim, 7, -2.0f, 2.0f);
  Buffer<float> out(static_cast<size_t>(S) * kHeads * kDim);
  Buffer<unsigned char> scratch(k.scratch(S, kDim));
  kernels::AttentionArgs a;
  a.seq = S;
  a.heads = kHeads;
  a.head_dim = kDim;
  a.qkv = qkv.data();
  a.ld_qkv = 3 * kHeads * kDim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  a.out = out.data();
  a.ld_out = kHeads * kDim;
  for (auto _ : state) {
    for (int h = 0; h < kHeads; ++h) k.fn(a, 0, h, scratch.data());
    benchmark::ClobberMemory();
  }
  state.counters["GOPS"] = benchmark::Counter(1e-9 * 4.0 * S * S * kDim * kHeads, benchmark::Counter::kIsIterationInvariantRate);
}

using BenchFn = void (*)(benchmark::State&, const KernelTable&, GemmShape);

void add(const std::string& name, BenchFn fn, const KernelTable& t, const GemmShape& s) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [fn, t, s](benchmark::State& state) { fn(state, t, s); });
  b->Unit(benchmark::kMicrosecond);
  add_best_of_statistics(b);
}

// Whether entry `k` of a kernel list is timed: a SIMD kernel (the reference is the oracle of the
// tests, not a contender) that this CPU runs.
template <typename Entry>
bool timed(const Entry& k) {
  return k.features != 0 && kernels::isa_supported(k.features);
}

}  // namespace

// Each kernel runs from the table for its own required features, make_kernel_table(k.features):
// that table holds k (kernel_lists.h: a list's every entry is the one chosen for its features)
// and, for qu8s8_full, the quantize kernel of the same ISA.
void register_kernel_benchmarks() {
  const KernelTable best = kernels::make_kernel_table(kernels::cpu_isa_features());
  // With AMX, the vpdpbusd kernel it replaces is timed on the GEMM alone too (the AMX table).
  const kernels::GemmU8S8Fn below_amx = best.features & kernels::kIsaAmxInt8
                                            ? kernels::make_kernel_table(best.features & ~kernels::kIsaAmxInt8).gemm_u8s8
                                            : nullptr;
  for (const auto& k : kernels::kGemmU8S8Kernels) {
    if (!timed(k)) continue;
    const KernelTable t = kernels::make_kernel_table(k.features);
    for (const GemmShape& s : minilm_shapes()) {
      const std::string tail = std::string(k.name) + "/" + shape_name(s);
      add("qu8s8_full/" + tail, bench_qu8s8_full, t, s);
      if (k.fn == best.gemm_u8s8) add("qu8s8_fused/" + tail, bench_qu8s8_fused, t, s);
      if (k.fn == best.gemm_u8s8 || k.fn == below_amx) add("qu8s8_gemm/" + tail, bench_qu8s8_gemm, t, s);
    }
  }
  // One row-wise run per (M, K): attn_out's and ffn_down's rows.
  for (const auto& k : kernels::kQuantizeRowsU8Kernels) {
    if (!timed(k)) continue;
    const KernelTable t = kernels::make_kernel_table(k.features);
    for (const GemmShape& s : minilm_shapes()) {
      if (!(s.N == 384 && s.K == 384) && s.K != 1536) continue;
      const std::string tail = std::string(k.name) + "/M" + std::to_string(s.M) + "_K" + std::to_string(s.K);
      add("quantize/" + tail, bench_quantize, t, s);
      add("quantize_smooth/" + tail, bench_quantize_smooth, t, s);
    }
  }
  for (const auto& k : kernels::kLayerNormKernels) {
    if (!timed(k)) continue;
    const KernelTable t = kernels::make_kernel_table(k.features);
    for (const GemmShape& s : minilm_shapes())
      if (s.N == 384 && s.K == 384)
        add("layer_norm/" + std::string(k.name) + "/M" + std::to_string(s.M) + "_N384", bench_layer_norm, t, s);
  }
  const auto add_attention = [&](const std::string& kind, const kernels::AttentionKernel& k) {
    if (!timed(k)) return;
    for (int S : {512, 128, 64, 32, 16}) {
      auto* b = benchmark::RegisterBenchmark((kind + k.name + "/S" + std::to_string(S) + "_H12_D32").c_str(),
                                             [k, S](benchmark::State& state) { bench_attention(state, k, S); });
      b->Unit(benchmark::kMicrosecond);
      add_best_of_statistics(b);
    }
  };
  for (const auto& k : kernels::kAttentionF32Kernels) add_attention("attention_f32/", k);
  for (const auto& k : kernels::kAttentionI8Kernels) add_attention("attention_i8/", k);
  for (const auto& k : kernels::kGemmF32Kernels) {
    if (!timed(k)) continue;
    const KernelTable t = kernels::make_kernel_table(k.features);
    for (const GemmShape& s : minilm_shapes()) add("f32/" + std::string(k.name) + "/" + shape_name(s), bench_f32, t, s);
  }
  for (const auto& k : kernels::kGemmF16Kernels) {
    if (!timed(k)) continue;
    const KernelTable t = kernels::make_kernel_table(k.features);
    const std::string kind = k.arith ? "f16/" : "f16w/";
    for (const GemmShape& s : minilm_shapes()) add(kind + k.name + "/" + shape_name(s), bench_f16w, t, s);
  }
}

// Console output as usual, plus a summary of the best-of-N results at the end.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter() : ConsoleReporter(OO_Tabular) {}  // no colour codes: the output goes to logs

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      // Individual repetitions, or the "min" aggregate when only aggregates are reported.
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "min") continue;
      const double seconds = r.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
      auto [it, inserted] = best_.emplace(r.run_name.function_name, seconds);
      if (!inserted) it->second = std::min(it->second, seconds);
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    const Peaks& p = measured_peaks();
    // The kernels this CPU runs by default.
    const KernelTable best = kernels::make_kernel_table(kernels::cpu_isa_features());
    const std::string int8 = best.gemm_u8s8_name, f32_kernel = best.gemm_f32_name;
    const double fma_peak = p.fma_zmm_flops > 0 ? p.fma_zmm_flops : p.fma_ymm_flops;
    const double best_int8_peak = int8_peak(best.gemm_u8s8);
    const char* best_int8_instruction = int8_peak_name(best.gemm_u8s8);
    // Formatted cells; "-" where a benchmark was filtered out or could not run.
    auto pct = [&](const std::string& name, const GemmShape& s, double peak) {
      auto it = best_.find(name);
      return it == best_.end() || peak <= 0 ? std::string("-") : format("%.1f", 100.0 * gemm_ops(s) / it->second / peak);
    };
    auto speedup = [&](const std::string& ours, const std::string& theirs) {
      auto a = best_.find(ours), b = best_.find(theirs);
      return a == best_.end() || b == best_.end() ? std::string("-") : format("%.2fx", b->second / a->second);
    };
    std::printf("\nSummary, best of the repetitions (CPU time). %% = percent of the measured single-core peak "
                "(%s %.1f Gop/s for int8%s, vfmadd231ps %.1f Gflop/s for fp32); "
                "'vs xnn' = XNNPACK's time / encrt's time.\n",
                best_int8_instruction, best_int8_peak * 1e-9,
                best_int8_peak != p.vpdpbusd_zmm_ops ? ", XNNPACK's qs8 against vpdpbusd zmm's" : "", fma_peak * 1e-9);
    std::printf("%-26s %11s %12s %11s %10s %12s | %7s %10s %11s\n", "shape", "int8 full %", "int8 fused %",
                "int8 gemm %", "xnn qs8 %", "full vs xnn", "f32 %", "xnn f32 %", "f32 vs xnn");
    for (const GemmShape& s : minilm_shapes()) {
      const std::string shape = shape_name(s);
      const std::string full = "qu8s8_full/" + int8 + "/" + shape;
      const std::string f32 = "f32/" + f32_kernel + "/" + shape;
      std::printf("%-26s %11s %12s %11s %10s %12s | %7s %10s %11s\n", shape.c_str(),
                  pct(full, s, best_int8_peak).c_str(),
                  pct("qu8s8_fused/" + int8 + "/" + shape, s, best_int8_peak).c_str(),
                  pct("qu8s8_gemm/" + int8 + "/" + shape, s, best_int8_peak).c_str(),
                  pct("qs8_fc/xnnpack/" + shape, s, p.vpdpbusd_zmm_ops).c_str(),
                  speedup(full, "qs8_fc/xnnpack/" + shape).c_str(), pct(f32, s, fma_peak).c_str(),
                  pct("f32_fc/xnnpack/" + shape, s, fma_peak).c_str(), speedup(f32, "f32_fc/xnnpack/" + shape).c_str());
    }
#if defined(ENCRT_ARCH_X86)
    if (p.i8_widened_ymm_ops > 0) {
      // Issue 10's bar at the avx2 level: each exact route against its own probe, and the two
      // side by side (the CPU backend's choice: isa.h's prefer_signed_madd).
      const std::string widened = kernels::make_kernel_table(kernels::kIsaAvx2).gemm_u8s8_name;
      const std::string signed_route =
          kernels::make_kernel_table(kernels::kIsaAvx2 | kernels::kPreferSignedMadd).gemm_u8s8_name;
      const std::string narrow =
          kernels::make_kernel_table(kernels::kIsaAvx2 | kernels::kNarrowInt8Weights).gemm_u8s8_name;
      std::printf("\nint8 at the avx2 level, quantize + GEMM + dequantize (qu8s8_full): %% of each route's probe "
                  "(widened %.1f Gop/s, signed %.1f Gop/s, 7-bit weights' %.1f Gop/s); ratio = signed's time / "
                  "widened's time; 7-bit = the faster 8-bit route's time / the 7-bit weights' route's time.\n",
                  p.i8_widened_ymm_ops * 1e-9, p.i8_signed_ymm_ops * 1e-9, p.i8_saturating_ymm_ops * 1e-9);
      std::printf("%-26s %10s %9s %8s %9s %8s\n", "shape", "widened %", "signed %", "ratio", "7-bit %", "7-bit");
      for (const GemmShape& s : minilm_shapes()) {
        const std::string shape = shape_name(s);
        const std::string w = "qu8s8_full/" + widened + "/" + shape, g = "qu8s8_full/" + signed_route + "/" + shape;
        const std::string n7 = "qu8s8_full/" + narrow + "/" + shape;
        const auto gi = best_.find(g), wi = best_.find(w);
        const std::string faster = gi != best_.end() && (wi == best_.end() || gi->second < wi->second) ? g : w;
        std::printf("%-26s %10s %9s %8s %9s %8s\n", shape.c_str(), pct(w, s, p.i8_widened_ymm_ops).c_str(),
                    pct(g, s, p.i8_signed_ymm_ops).c_str(), speedup(w, g).c_str(),
                    pct(n7, s, p.i8_saturating_ymm_ops).c_str(), speedup(n7, faster).c_str());
      }
    }
#endif
    if (kernels::isa_supported(kernels::kIsaAvx2 | kernels::kIsaAvxVnni)) {
      const std::string avx2 = kernels::make_kernel_table(kernels::kIsaAvx2).gemm_u8s8_name;
      const std::string vnni = kernels::make_kernel_table(kernels::kIsaAvx2 | kernels::kIsaAvxVnni).gemm_u8s8_name;
      std::printf("\nint8 on AVX2-class cores: avx2 widens to int16 for vpmaddwd (%% of its widened probe, %.1f "
                  "Gop/s), avx2vnni uses AVX-VNNI's ymm vpdpbusd (%% of the vpdpbusd ymm probe, %.1f Gop/s); "
                  "ratio = avx2's time / avx2vnni's time.\n",
                  p.i8_widened_ymm_ops * 1e-9, p.vpdpbusd_ymm_ops * 1e-9);
      std::printf("%-26s %10s %14s %8s\n", "shape", "avx2 %", "avx2vnni %", "ratio");
      for (const GemmShape& s : minilm_shapes()) {
        const std::string shape = shape_name(s);
        const std::string a = "qu8s8_full/" + avx2 + "/" + shape, v = "qu8s8_full/" + vnni + "/" + shape;
        std::printf("%-26s %10s %14s %8s\n", shape.c_str(), pct(a, s, p.i8_widened_ymm_ops).c_str(),
                    pct(v, s, p.vpdpbusd_ymm_ops).c_str(), speedup(v, a).c_str());
      }
    }
    if (best.features & kernels::kIsaAmxInt8) {
      // The vpdpbusd kernel on the same CPU.
      const std::string amx = best.gemm_u8s8_name;
      const std::string vnni = kernels::make_kernel_table(best.features & ~kernels::kIsaAmxInt8).gemm_u8s8_name;
      std::printf("\nint8 with AMX, quantize + GEMM + dequantize (qu8s8_full): %% of the tdpbusd peak (%.1f Gop/s), "
                  "and of the vpdpbusd zmm peak (%%v); ratio = avx512vnni's time / amx's time; the same for the "
                  "GEMM + dequantize alone (qu8s8_gemm).\n",
                  p.tdpbusd_ops * 1e-9);
      std::printf("%-26s %8s %8s %14s %8s %11s %11s\n", "shape", "amx %", "amx %v", "avx512vnni %v", "ratio",
                  "gemm amx %", "gemm ratio");
      for (const GemmShape& s : minilm_shapes()) {
        const std::string shape = shape_name(s);
        const std::string a = "qu8s8_full/" + amx + "/" + shape, v = "qu8s8_full/" + vnni + "/" + shape;
        const std::string ga = "qu8s8_gemm/" + amx + "/" + shape, gv = "qu8s8_gemm/" + vnni + "/" + shape;
        std::printf("%-26s %8s %8s %14s %8s %11s %11s\n", shape.c_str(), pct(a, s, p.tdpbusd_ops).c_str(),
                    pct(a, s, p.vpdpbusd_zmm_ops).c_str(), pct(v, s, p.vpdpbusd_zmm_ops).c_str(),
                    speedup(a, v).c_str(), pct(ga, s, p.tdpbusd_ops).c_str(), speedup(ga, gv).c_str());
      }
    }
    if (best.gemm_f16_arith) {
      // The fp16-weight GEMM that widens to fp32 on the same CPU.
      const std::string f16w =
          kernels::make_kernel_table(best.features & ~(kernels::kIsaAvx512Fp16 | kernels::kIsaNeonFp16)).gemm_f16_name;
      std::printf("\nfp16 weights: f16w = F16C widening + vfmadd231ps (%% of its peak); f16 = fp16 arithmetic, "
                  "vfmadd231ph (%% of its peak, %.1f Gflop/s); ratios = the other kernel's time / f16's time.\n",
                  p.fma_ph_zmm_flops * 1e-9);
      std::printf("%-26s %8s %8s %12s %11s\n", "shape", "f16w %", "f16 %", "f16 vs f16w", "f16 vs f32");
      for (const GemmShape& s : minilm_shapes()) {
        const std::string shape = shape_name(s);
        const std::string f16 = "f16/" + std::string(best.gemm_f16_name) + "/" + shape;
        const std::string widened = "f16w/" + f16w + "/" + shape, f32 = "f32/" + f32_kernel + "/" + shape;
        std::printf("%-26s %8s %8s %12s %11s\n", shape.c_str(), pct(widened, s, fma_peak).c_str(),
                    pct(f16, s, p.fma_ph_zmm_flops).c_str(), speedup(f16, widened).c_str(), speedup(f16, f32).c_str());
      }
    }
  }

 private:
  static std::string format(const char* fmt, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
  }

  std::map<std::string, double> best_;  // benchmark name → best CPU seconds per iteration
};

}  // namespace encrt::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const encrt::kernels::KernelTable best = encrt::kernels::make_kernel_table(encrt::kernels::cpu_isa_features());
  std::printf("ISA: %s; kernels: %s, %s, %s\n", encrt::kernels::isa_features_name(best.features).c_str(),
              best.gemm_u8s8_name, best.gemm_f32_name, best.gemm_f16_name);
  encrt::bench::measured_peaks();
  encrt::bench::register_peak_benchmarks();
  encrt::bench::register_kernel_benchmarks();
  encrt::bench::register_xnnpack_benchmarks();
  encrt::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
