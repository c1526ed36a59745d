// What the emulation tests of the fp16 tensor-core kernels share (test_gemm_f16_mma_emulated.cpp,
// test_gemm_f16_layer_norm_emulated.cpp, test_ffn_layer_norm_emulated.cpp,
// test_qkv_attention_emulated.cpp): 16-byte aligned fp16 storage, the check that no store went past
// an output, and the check of a row normalized by a fused LayerNorm against its pre-norm values in
// double.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>  // uint4

#include "core/half.h"

namespace encrt::emulation {

constexpr uint16_t kSentinel = 0x7bffu;  // 65504, fp16's largest: no correct output here is that
constexpr size_t kGuard = 64;            // values past an output that no store may touch

// 16-byte aligned fp16 storage (the kernels' 16-byte copies want aligned rows).
struct Halves {
  explicit Halves(size_t n, uint16_t fill = 0) : storage((n * 2 + 15) / 16 + 1), size(n) {
    for (size_t i = 0; i < n; ++i) data()[i] = fill;
  }
  uint16_t* data() { return reinterpret_cast<uint16_t*>(storage.data()); }
  float at(size_t i) { return half_to_float(data()[i]); }
  std::vector<uint4> storage;
  size_t size;
};

// Fails the test if any of the kGuard values after the first `end` of `out` (made with kSentinel
// past end) was written.
inline void check_no_store_past(Halves& out, size_t end) {
  for (size_t g = 0; g < kGuard; ++g)
    if (out.data()[end + g] != kSentinel) {
      FAIL_CHECK("a store past the output's end at +" << g);
      return;
    }
}

// Row `row` of a fused LayerNorm's fp16 output against the reference: z its values before the norm
// (in double), error[n] a bound on how far the kernel's fp32 z[n] may be from z[n]. The bound:
// 2^-11·|y| (the final rounding) + |gamma|·(3·max error/σ + 2^-13·|ẑ|) + 2^-24, σ = sqrt(var + eps)
// and ẑ the normalized value (the statistics over N values in fp32 within N·2^-23 relative).
// Returns the failures (at most `budget` reported).
inline int check_normalized_row(const std::vector<double>& z, const std::vector<double>& error, const float* gamma,
                                const float* beta, float eps, Halves& y, size_t row_start, int row, int budget) {
  const size_t N = z.size();
  double mean = 0.0;
  for (double v : z) mean += v;
  mean /= static_cast<double>(N);
  double var = 0.0;
  for (double v : z) var += (v - mean) * (v - mean);
  var /= static_cast<double>(N);
  const double sigma = std::sqrt(var + eps);
  const double e_max = *std::max_element(error.begin(), error.end());
  int failures = 0;
  for (size_t n = 0; n < N && failures < budget; ++n) {
    const double normalized = (z[n] - mean) / sigma;
    const double want = normalized * gamma[n] + beta[n];
    const float got = y.at(row_start + n);
    const double bound = std::ldexp(std::fabs(want), -11) +
                         std::fabs(gamma[n]) * (3.0 * e_max / sigma + std::ldexp(std::fabs(normalized), -13)) +
                         std::ldexp(1.0, -24);
    if (!(std::fabs(got - want) <= bound)) {
      ++failures;
      FAIL_CHECK("row " << row << " column " << n << ": kernel " << got << " want " << want << " (bound " << bound << ")");
    }
  }
  return failures;
}

}  // namespace encrt::emulation
