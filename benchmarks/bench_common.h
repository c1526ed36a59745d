// Shared pieces of encrt_kernel_bench: the MiniLM GEMM shapes, the CPU's measured peaks and the
// registration entry points of each benchmark file.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "kernels/kernel_types.h"
#include "peak_probe_x86.h"
#include "peaks.h"

namespace encrt::bench {

// One linear layer of a MiniLM-L6/L12 encoder layer (hidden 384, FFN 1536) for M tokens, with
// the epilogue the runtime fuses into it.
struct GemmShape {
  int M, K, N;
  const char* layer;  // attn_out (bias + residual), ffn_up (bias + GELU), ffn_down (bias + residual)
  kernels::Activation activation;
  bool residual;
};
std::vector<GemmShape> minilm_shapes();

// Buffers on a cache line, as the runtime's operands are (the arena and the model file's tensors
// are 64-byte aligned): a kernel timed on operands off a line would be timed on split loads that
// the runtime never makes (the AMX tile loads lose 30% to them).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (void* p = std::aligned_alloc(64, bytes ? bytes : 64)) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
template <class T>
using Buffer = std::vector<T, CacheLineAllocator<T>>;
std::string shape_name(const GemmShape& s);  // e.g. "M128_K384_N1536_ffn_up"


// Repetition statistics: with --benchmark_repetitions, "min" of the time and "max" of each rate
// counter are the best-of-N values (the machine is shared and noisy).
void add_best_of_statistics(benchmark::internal::Benchmark* b);

// Sets GOPS (1e9 ops/s) and, when peak > 0, pct_peak (percent of `peak`) for `ops` per iteration.
void set_rate_counters(benchmark::State& state, double ops, double peak);

void register_peak_benchmarks();
void register_kernel_benchmarks();
void register_xnnpack_benchmarks();  // no-op when built without XNNPACK

}  // namespace encrt::bench
