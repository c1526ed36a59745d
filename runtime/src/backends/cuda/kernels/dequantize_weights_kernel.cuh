// An int8 linear's weights to fp16 on the device (option int8_linears: model/dequantized_linears.h
// gives the formula and why): out[n, k] = half(float(double(q[n, k]) · s[n] · m[k])), row-major
// [N, K], the same bits as dequantized_weight() computes on the host (q · s is exact in double, the
// product with m rounds once; then round to nearest even to float and to half, as the host's
// static_cast and float_to_half). Run once, at session creation.
//
// The device code of dequantize_weights.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernel is checked without a GPU.
#pragma once

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda::dequantize_weights_kernels {

constexpr int kThreads = 256;

__global__ void dequantize_weights_kernel(DequantizeWeightsArgs a) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t n_values = static_cast<size_t>(a.N) * static_cast<size_t>(a.K);
  if (i >= n_values) return;
  const int n = static_cast<int>(i / static_cast<size_t>(a.K)), k = static_cast<int>(i % static_cast<size_t>(a.K));
  const double m = a.multipliers ? static_cast<double>(a.multipliers[k]) : 1.0;
  const float v = static_cast<float>(static_cast<double>(a.q[i]) * static_cast<double>(a.scales[n]) * m);
  static_cast<__half*>(a.out)[i] = __float2half_rn(v);
}

}  // namespace encrt::cuda::dequantize_weights_kernels
