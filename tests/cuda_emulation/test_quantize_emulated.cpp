// quantize.cu's and layer_norm_quantize.cu's kernels (quantize_kernel.cuh,
// layer_norm_quantize_kernel.cuh) run on the host under warp_emulation.h, with the launchers'
// grids, against kernels::ref::quantize_rows_u8 bit for bit: the bytes (the reference's q, or
// q ^ 0x80 shifted), the padding bytes K .. Kp − 1, the scales' bits and the zero points, on rows
// that are random, all zero, with NaN and ±Inf, with a range too small for 1/s or too wide for
// fp32, with and without multipliers. The fused LayerNorm's fp32 rows are held to
// kernels::ref::layer_norm within layer_norm_bound.h's bound, and its bytes must be the
// reference's quantization of exactly those rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "cuda_emulation/warp_emulation.h"
#include "cuda_emulation/layer_norm_bound.h"
#include "backends/cuda/kernels/layer_norm_quantize_kernel.cuh"
#include "backends/cuda/kernels/quantize_kernel.cuh"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::Elem;
using encrt::cuda::LayerNormQuantizeArgs;
using encrt::cuda::QuantizeArgs;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

int padded(int K) { return (K + 3) / 4 * 4; }

// Rows of K values: random ones, then the cases the formula treats apart.
std::vector<float> test_rows(int K, int* rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::vector<float>> r;
  for (int i = 0; i < 2; ++i) {
    r.emplace_back(static_cast<size_t>(K));
    for (float& v : r.back()) v = u(rng);
  }
  r.emplace_back(static_cast<size_t>(K), 0.0f);             // all zero: no range
  r.emplace_back(static_cast<size_t>(K), 1e-38f);           // 1 / s overflows: refused
  r.emplace_back(static_cast<size_t>(K), -2.5f);            // negatives only: zp 255
  std::vector<float> special = r[0];
  special[static_cast<size_t>(K / 2)] = nan;                // skipped by the range, q 0
  special[static_cast<size_t>(K - 1)] = K > 1 ? inf : nan;  // an infinite range: refused
  r.push_back(special);
  std::vector<float> with_nan = r[1];
  with_nan[0] = nan;
  r.push_back(with_nan);
  std::vector<float> wide(static_cast<size_t>(K), 1.0f);
  wide[0] = 3e38f, wide[static_cast<size_t>(K - 1)] = -3e38f;  // hi − lo overflows (K 1: a 3e38 range)
  r.push_back(wide);
  *rows = static_cast<int>(r.size());
  std::vector<float> flat;
  for (const auto& row : r) flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

// The reference's quantization of `x` [rows, K], and how many bytes, scales and zero points of the
// kernel's differ from it.
int quantization_mismatches(const std::vector<float>& x, int rows, int K, const float* multipliers, bool shifted,
                            const std::vector<uint8_t>& q, const std::vector<float>& scale, const std::vector<int32_t>& zp) {
  const int Kp = padded(K);
  std::vector<uint8_t> want_q(static_cast<size_t>(rows) * Kp, 0xee);
  std::vector<float> want_scale(static_cast<size_t>(rows));
  std::vector<int32_t> want_zp(static_cast<size_t>(rows));
  encrt::kernels::ref::quantize_rows_u8(rows, K, x.data(), K, multipliers, want_q.data(), Kp, want_scale.data(), want_zp.data());
  int mismatches = 0;
  for (int r = 0; r < rows; ++r) {
    const size_t m = static_cast<size_t>(r);
    const bool same_scale = std::isnan(want_scale[m]) ? std::isnan(scale[m]) : bits(scale[m]) == bits(want_scale[m]);
    mismatches += same_scale ? 0 : 1;
    mismatches += zp[m] == want_zp[m] ? 0 : 1;
    for (int k = 0; k < Kp; ++k) {
      const size_t i = m * Kp + k;
      const uint8_t want = shifted ? static_cast<uint8_t>(want_q[i] ^ 0x80u) : want_q[i];
      if (q[i] != want) {
        if (mismatches < 5) UNSCOPED_INFO("row " << r << " byte " << k << ": " << int{q[i]} << ", want " << int{want});
        ++mismatches;
      }
    }
  }
  return mismatches;
}

}  // namespace

TEST_CASE("quantize (emulated): the reference's bytes, padding, scales and zero points, bit for bit", "[cuda_emulation]") {
  for (int K : {1, 3, 37, 260})
    for (int variant = 0; variant < 4; ++variant) {
      const bool with_multipliers = variant & 1, shifted = variant & 2;
      int rows = 0;
      const std::vector<float> x = test_rows(K, &rows, static_cast<uint32_t>(K * 4 + variant));
      std::mt19937 rng(static_cast<uint32_t>(K));
      std::uniform_real_distribution<float> m(0.25f, 4.0f);
      std::vector<float> multipliers(static_cast<size_t>(K));
      for (float& v : multipliers) v = m(rng);
      std::vector<uint8_t> q(static_cast<size_t>(rows) * padded(K), 0xee);
      std::vector<float> scale(static_cast<size_t>(rows), -1.0f);
      std::vector<int32_t> zp(static_cast<size_t>(rows), -1);
      QuantizeArgs a;
      a.rows = rows;
      a.K = K;
      a.x = x.data();
      a.multipliers = with_multipliers ? multipliers.data() : nullptr;
      a.q = q.data();
      a.shifted = shifted;
      a.scale = scale.data();
      a.zero_point = zp.data();
      using encrt::cuda::QuantizeBlockRows;
      using encrt::cuda::WarpRows;
      using encrt::cuda::quantize_kernels::quantize_kernel;
      // A warp per row (rows=warp), then the launcher's default, a block of 128 threads per row.
      encrt::emulation::launch_blocks({encrt::cuda::row_blocks<WarpRows>(rows), 1, 1}, WarpRows::kBlockThreads,
                                      [&] { quantize_kernel<WarpRows>(a); });
      INFO("K " << K << (with_multipliers ? " with multipliers" : "") << (shifted ? " shifted" : " unshifted"));
      CHECK(quantization_mismatches(x, rows, K, a.multipliers, shifted, q, scale, zp) == 0);
      std::fill(q.begin(), q.end(), uint8_t{0xee});
      std::fill(scale.begin(), scale.end(), -1.0f);
      std::fill(zp.begin(), zp.end(), -1);
      encrt::emulation::launch_blocks({encrt::cuda::row_blocks<QuantizeBlockRows>(rows), 1, 1}, QuantizeBlockRows::kBlockThreads,
                                      [&] { quantize_kernel<QuantizeBlockRows>(a); });
      CHECK(quantization_mismatches(x, rows, K, a.multipliers, shifted, q, scale, zp) == 0);
    }
}

TEST_CASE("layer_norm_quantize (emulated): LayerNorm rows within the bound, their bytes the reference's", "[cuda_emulation]") {
  for (int width : {1, 37, 384, 700, 1100})  // 700: 32 values per lane; 1100: past a warp's 1024, a block per row
    for (int variant = 0; variant < 8; ++variant) {
      // Variants 4-7: rows=warp (the launcher's default is a block per row).
      const bool warp = variant >= 4 && width <= encrt::cuda::kWarpRowWidth;
      const bool with_multipliers = variant & 1, shifted = variant & 2, with_bias_residual = (variant & 3) != 1;
      const int rows = warp ? 11 : 3;  // 11: a block of 8 warp rows and a part of one
      const size_t n = static_cast<size_t>(rows) * width;
      std::mt19937 rng(static_cast<uint32_t>(width * 8 + variant));
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::vector<float> x(n), residual(n), bias(static_cast<size_t>(width)), gamma(static_cast<size_t>(width)),
          beta(static_cast<size_t>(width)), multipliers(static_cast<size_t>(width));
      for (float& v : x) v = 0.5f + u(rng);
      for (float& v : residual) v = u(rng);
      for (int c = 0; c < width; ++c) {
        const size_t i = static_cast<size_t>(c);
        bias[i] = 0.5f * u(rng), gamma[i] = 1.0f + 0.5f * u(rng), beta[i] = 0.5f * u(rng), multipliers[i] = 1.5f + u(rng);
      }
      encrt::emulation::Values y;
      y.f32.assign(n, 12345.0f);
      std::vector<uint8_t> q(static_cast<size_t>(rows) * padded(width), 0xee);
      std::vector<float> scale(static_cast<size_t>(rows), -1.0f);
      std::vector<int32_t> zp(static_cast<size_t>(rows), -1);
      LayerNormQuantizeArgs a;
      a.norm.rows = rows;
      a.norm.width = width;
      a.norm.x = x.data();
      a.norm.bias = with_bias_residual ? bias.data() : nullptr;
      a.norm.residual = with_bias_residual ? residual.data() : nullptr;
      a.norm.gamma = gamma.data();
      a.norm.beta = beta.data();
      a.norm.eps = 1e-5f;
      a.norm.y = y.f32.data();
      a.multipliers = with_multipliers ? multipliers.data() : nullptr;
      a.q = q.data();
      a.shifted = shifted;
      a.scale = scale.data();
      a.zero_point = zp.data();
      // As layer_norm_quantize.cu launches it (a block per row unless rows=warp).
      a.norm.layout = warp ? encrt::cuda::RowKernels::kWarp : encrt::cuda::RowKernels::kAuto;
      const auto launch = [&] {
        using namespace encrt::cuda::layer_norm_quantize_kernels;
        encrt::cuda::with_row_layout(a.norm.layout, rows, width, INT_MAX, [&](auto layout) {
          using L = decltype(layout);
          encrt::emulation::launch_blocks({encrt::cuda::row_blocks<L>(rows), 1, 1}, L::kBlockThreads,
                                          [&] { layer_norm_quantize_kernel<L>(a); });
        });
      };
      launch();
      INFO("width " << width << (with_multipliers ? " with multipliers" : "") << (shifted ? " shifted" : " unshifted")
                    << (with_bias_residual ? " with bias and residual" : "") << (warp ? ", rows=warp" : ""));
      std::vector<float> in(n);
      for (size_t i = 0; i < n; ++i) {
        float v = x[i];
        if (with_bias_residual) v += bias[i % static_cast<size_t>(width)], v += residual[i];
        in[i] = v;
      }
      CHECK(encrt::emulation::layer_norm_outside_bound(in, rows, width, gamma, beta, a.norm.eps, y) == 0);
      CHECK(quantization_mismatches(y.f32, rows, width, a.multipliers, shifted, q, scale, zp) == 0);
      // Without the fp32 rows (norm.y null): the same bytes.
      std::vector<uint8_t> q2(q.size(), 0xee);
      a.norm.y = nullptr;
      a.q = q2.data();
      launch();
      CHECK(q2 == q);
    }
}
