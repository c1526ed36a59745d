// kQuantize: fp32 rows (times the optional SmoothQuant multipliers) to asymmetric 8-bit rows with a
// per-row scale and zero point, exactly as kernels/ref/quantize_ref.cpp (kernel_types.h's rule).
// A block of 128 threads per row, or a warp per row (row_layout.cuh: which, and why): a pass for
// the range, a second (from L1/L2) for the bytes, four columns per thread and step (16-byte loads
// where the row allows, one 4-byte store); both passes unrolled so that several loads are in flight.
//
// The device code of quantize.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/quantize_row.cuh"
#include "backends/cuda/kernels/row_layout.cuh"

namespace encrt::cuda::quantize_kernels {

__device__ __forceinline__ float scaled(const float* x, const float* multipliers, int k) {
  return multipliers ? int8::mul_rn(x[k], multipliers[k]) : x[k];
}

// Columns 4g .. 4g + 3 of the row (times their multipliers) into v, and how many are in the row
// (4, or fewer in the last group): one 16-byte load each of x and the multipliers where `vector`
// (K a multiple of 4, x's rows and the multipliers 16-byte aligned).
__device__ __forceinline__ int group_values(float (&v)[4], const float* x, const float* multipliers, int K, int g,
                                            bool vector) {
  const int k0 = 4 * g;
  if (vector) {
    const float4 xv = *reinterpret_cast<const float4*>(x + k0);
    v[0] = xv.x, v[1] = xv.y, v[2] = xv.z, v[3] = xv.w;
    if (multipliers) {
      const float4 m = *reinterpret_cast<const float4*>(multipliers + k0);
      v[0] = int8::mul_rn(v[0], m.x), v[1] = int8::mul_rn(v[1], m.y);
      v[2] = int8::mul_rn(v[2], m.z), v[3] = int8::mul_rn(v[3], m.w);
    }
    return 4;
  }
  const int n = K - k0 < 4 ? K - k0 : 4;
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = j < n ? scaled(x, multipliers, k0 + j) : 0.0f;
  return n;
}

template <class L>
__global__ void quantize_kernel(QuantizeArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  __shared__ float scratch[kRangeScratch];
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  const float* x = a.x + row * static_cast<size_t>(a.K);
  const bool vector = a.K % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(a.multipliers) % 16 == 0;
  const int groups = (a.K + 3) / 4;  // Kp / 4
  float lo = 0.0f, hi = 0.0f;
#pragma unroll 2
  for (int g = lane; g < groups; g += L::kRowThreads) {
    float v[4];
    const int n = group_values(v, x, a.multipliers, a.K, g, vector);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (j >= n) break;
      lo = int8::range_min(lo, v[j]);
      hi = int8::range_max(hi, v[j]);
    }
  }
  if (L::kWarp)
    warp_range(&lo, &hi);
  else
    block_range(&lo, &hi, scratch);
  const int8::RowQuantization r = int8::row_quantization(lo, hi);
  const uint8_t flip = a.shifted ? int8::kSignFlip : uint8_t{0};
  // Kp is a multiple of 4 and the buffer 4-byte aligned (the launcher checks), so each row's words are.
  uint32_t* q = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(a.q) + row * static_cast<size_t>(groups) * 4);
#pragma unroll 2
  for (int g = lane; g < groups; g += L::kRowThreads) {
    float v[4];
    const int n = group_values(v, x, a.multipliers, a.K, g, vector);
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint8_t b = j < n ? stored_byte(v[j], r, flip) : padding_byte(r, flip);
      word |= static_cast<uint32_t>(b) << (8 * j);  // little-endian: byte j at address 4g + j
    }
    q[g] = word;
  }
  if (lane == 0) {
    a.scale[row] = r.scale;
    a.zero_point[row] = r.zero_point;
  }
}

}  // namespace encrt::cuda::quantize_kernels
