// What the emulation tests of the LayerNorm kernels (layer_norm_kernel.cuh,
// layer_norm_quantize_kernel.cuh) share: rows in either element type, and the bound that holds
// a kernel's normalized rows to kernels::ref::layer_norm.
//
// The kernels' statistics are fp32 block sums, the reference's double; the bound, per value,
// with u = 2^-24, z = (x − μ)/σ and A = the row's mean |x|:
//   the mean's sum runs through at most 16 serial adds per thread, 5 shuffle levels and 8 warp
//   partials (29 roundings): |Δμ| ≤ 29u·A, so z moves by ≤ 29u·A/σ; the variance's sum (29 more,
//   plus the squares) and 1/sqrt (2) give ≤ 32u relative on 1/σ, so z moves by ≤ 32u·|z|; then
//   · γ and + β (2 roundings, and the reference's own float rounding of z).
// Hence |Δy| ≤ 128u·(|γ|·(|z| + A/σ + 1) + |β|), a factor two above the sum of the terms. An fp16
// output adds its own rounding: half an ulp of fp16, ≤ 2^-11·|y| + 2^-25.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cuda/kernels/cuda_kernels.h"
#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::emulation {

using cuda::Elem;

// A table or row of values in either element type, with its values as the kernel reads them.
struct Values {
  Elem type = Elem::kF32;
  std::vector<float> f32;
  std::vector<uint16_t> f16;
  const void* data() const { return type == Elem::kF16 ? static_cast<const void*>(f16.data()) : f32.data(); }
  void* data() { return type == Elem::kF16 ? static_cast<void*>(f16.data()) : f32.data(); }
  float at(size_t i) const { return type == Elem::kF16 ? half_to_float(f16[i]) : f32[i]; }
  size_t size() const { return type == Elem::kF16 ? f16.size() : f32.size(); }
};

// Compares a kernel's normalized rows (rows first_row.. of `got`) with kernels::ref::layer_norm's
// of the same fp32 rows x, within the bound above; returns the number of values outside it.
inline int layer_norm_outside_bound(const std::vector<float>& x, int rows, int width, const std::vector<float>& gamma,
                                    const std::vector<float>& beta, float eps, const Values& got, size_t first_row = 0) {
  std::vector<float> want(static_cast<size_t>(rows) * width);
  kernels::ref::layer_norm(rows, width, x.data(), width, gamma.data(), beta.data(), eps, want.data(), width);
  int bad = 0;
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    const float* row = x.data() + static_cast<size_t>(r) * width;
    double mean = 0, mean_abs = 0, var = 0;
    for (int c = 0; c < width; ++c) mean += row[c], mean_abs += std::fabs(row[c]);
    mean /= width, mean_abs /= width;
    for (int c = 0; c < width; ++c) var += (row[c] - mean) * (row[c] - mean);
    const double sigma = std::sqrt(var / width + eps);
    for (int c = 0; c < width; ++c) {
      const size_t i = static_cast<size_t>(r) * width + c;
      const double z = (row[c] - mean) / sigma, y = want[i];
      double tol = 128.0 * 0x1p-24 * (std::fabs(gamma[static_cast<size_t>(c)]) * (std::fabs(z) + mean_abs / sigma + 1.0) +
                                      std::fabs(beta[static_cast<size_t>(c)]));
      if (got.type == Elem::kF16) tol += 0x1p-11 * std::fabs(y) + 0x1p-25;
      const double err = std::fabs(static_cast<double>(got.at((first_row + static_cast<size_t>(r)) * width + c)) - y);
      worst = std::max(worst, err / tol);
      if (!(err <= tol)) ++bad;
    }
  }
  INFO("worst error / bound " << worst);
  CHECK(worst <= 1.0);
  return bad;
}

}  // namespace encrt::emulation
