// Elementwise epilogues (activation + residual, tanh) and pooling (padded or packed rows).
//
// The device code of elementwise.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda::elementwise_kernels {

// The launchers' block sizes (elementwise.cu): one thread per value, and one block per sequence.
constexpr int kThreads = 256;
constexpr int kPoolThreads = 128;

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float relu(float x) { return isnan(x) ? x : x > 0.0f ? x : 0.0f; }

__global__ void activation_kernel(ActivationArgs a) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.n) return;
  float v = load(a.y, a.y_type, i);
  if (a.activation == 1) v = relu(v);
  if (a.activation == 2) v = gelu(v);
  if (a.residual) v += load(a.residual, a.residual_type, i);
  store(a.y, a.y_type, i, v);
}

__global__ void tanh_kernel(size_t n, void* y, Elem type) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) store(y, type, i, tanhf(load(y, type, i)));
}

// One block per sequence; each thread owns columns c, c + blockDim.x, ... Sequence b's rows are
// row0 .. row0 + rows - 1 (packed: its own rows, every one real, so the mask is not read).
__global__ void pool_kernel(PoolArgs a) {
  const int b = blockIdx.x;
  size_t row0 = static_cast<size_t>(b) * a.seq;
  int rows = a.seq;
  if (a.offsets) {
    row0 = static_cast<size_t>(a.offsets[b]);
    rows = a.offsets[b + 1] - a.offsets[b];
  }
  const int32_t* mask = a.offsets ? nullptr : a.mask;
  for (int c = threadIdx.x; c < a.width; c += blockDim.x) {
    float v = 0.0f;
    if (a.mean) {
      int count = 0;
      for (int t = 0; t < rows; ++t) {
        if (mask && mask[row0 + t] == 0) continue;
        v += load(a.x, a.x_type, (row0 + t) * a.width + c);
        ++count;
      }
      if (count > 0) v *= 1.0f / static_cast<float>(count);
    } else if (rows > 0) {
      v = load(a.x, a.x_type, row0 * a.width + c);
    }
    store(a.out, a.out_type, static_cast<size_t>(b) * a.width + c, v);
  }
}

}  // namespace encrt::cuda::elementwise_kernels
