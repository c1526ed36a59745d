// Device helpers shared by the kernels: element loads and stores as fp32, warp and block sums.
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: warp_emulation.h
// defines __half and the intrinsics), as is every kernel header that includes it.
#pragma once

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}

// Loads element i of an array of either type.
__device__ __forceinline__ float load(const void* p, Elem e, size_t i) {
  return e == Elem::kF16 ? __half2float(static_cast<const __half*>(p)[i]) : static_cast<const float*>(p)[i];
}
__device__ __forceinline__ void store(void* p, Elem e, size_t i, float v) {
  if (e == Elem::kF16)
    static_cast<__half*>(p)[i] = __float2half_rn(v);
  else
    static_cast<float*>(p)[i] = v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
// fmaxf ignores NaN, as the reference's running max (`s > max`) does.
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The sum of v over the block (every thread gets it); `scratch` holds one float per warp.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += scratch[w];
  return total;
}

inline unsigned blocks_for(size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace encrt::cuda
