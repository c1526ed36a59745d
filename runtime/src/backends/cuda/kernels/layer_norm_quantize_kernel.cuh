// LayerNorm (after a linear's bias and residual, as layer_norm.cu) fused with the next int8
// layer's quantization of the normalized row: a warp or a block per row (row_layout.cuh: which,
// and why), the row in registers, every value loaded before any is used. The LayerNorm
// arithmetic is layer_norm.cu's normalize_row, operation for operation (fp32 two-pass
// statistics, the same sums in the same layout), so the fp32 rows are those the unfused kernel
// writes in that layout; the quantization is quantize_row.cuh's (the reference's rule).
//
// The device code of layer_norm_quantize.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/quantize_row.cuh"
#include "backends/cuda/kernels/row_layout.cuh"

namespace encrt::cuda::layer_norm_quantize_kernels {

template <class L>
__global__ void layer_norm_quantize_kernel(LayerNormQuantizeArgs a) {
  __shared__ float sums[L::kBlockThreads / 32];
  __shared__ float ranges[kRangeScratch];
  const LayerNormArgs& n = a.norm;
  const size_t row = L::row();
  if (row >= static_cast<size_t>(n.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  const size_t first = row * n.width;
  float v[L::kPer], b[L::kPer], r[L::kPer], g[L::kPer], be[L::kPer], m[L::kPer];
  // The model's parameters (bias, gamma, beta, multipliers: no kernel writes them) are loaded
  // before waiting for the kernel ahead (dependent_launch.cuh), the rows after.
  if (n.bias) load_row_as<L>(b, n.bias, n.width, lane);
  load_row_as<L>(g, n.gamma, n.width, lane);
  load_row_as<L>(be, n.beta, n.width, lane);
  if (a.multipliers) load_row_as<L>(m, a.multipliers, n.width, lane);
  wait_for_previous_kernel();  // nothing the kernel ahead writes is read before it
  allow_next_kernel();
  load_row_as<L>(v, static_cast<const float*>(n.x) + first, n.width, lane);
  if (n.residual) load_row_as<L>(r, static_cast<const float*>(n.residual) + first, n.width, lane);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {  // x + bias, then + residual (the reference's order); 0 past the row
    if (n.bias) v[k] += b[k];
    if (n.residual) v[k] += r[k];
    const int c = L::column(lane, k);
    if (c < n.width) sum += v[k];
  }
  const float mean = L::sum(sum, sums) / static_cast<float>(n.width);
  float sq = 0.0f;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c < n.width) sq += (v[k] - mean) * (v[k] - mean);
  }
  const float var = L::sum(sq, sums) / static_cast<float>(n.width);
  const float inv = 1.0f / sqrtf(var + n.eps);
  float lo = 0.0f, hi = 0.0f;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c >= n.width) continue;
    const float y = (v[k] - mean) * inv * g[k] + be[k];
    if (n.y) static_cast<float*>(n.y)[first + c] = y;
    v[k] = a.multipliers ? int8::mul_rn(y, m[k]) : y;
    lo = int8::range_min(lo, v[k]);
    hi = int8::range_max(hi, v[k]);
  }
  store_quantized_row<L::kPer, L::kRowThreads, L::kVec>(v, n.width, lo, hi, ranges, a.shifted, a.q, row, a.scale, a.zero_point);
}

}  // namespace encrt::cuda::layer_norm_quantize_kernels
