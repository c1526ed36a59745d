// kQuantize: fp32 rows (times the optional SmoothQuant multipliers) to asymmetric 8-bit rows with a
// per-row scale and zero point, exactly as kernels/ref/quantize_ref.cpp (kernel_types.h's rule).
// A block of 128 threads per row, or a warp per row under rows=warp (row_layout.cuh: which, and
// why): a pass for the range, a second (from L1/L2) for the bytes, four bytes per thread and
// store; both passes unrolled so that several loads are in flight.
//
// The device code of quantize.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/quantize_row.cuh"
#include "backends/cuda/kernels/row_layout.cuh"

namespace encrt::cuda::quantize_kernels {

__device__ __forceinline__ float scaled(const float* x, const float* multipliers, int k) {
  return multipliers ? int8::mul_rn(x[k], multipliers[k]) : x[k];
}

template <class L>
__global__ void quantize_kernel(QuantizeArgs a) {
  __shared__ float scratch[kRangeScratch];
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  const float* x = a.x + row * static_cast<size_t>(a.K);
  float lo = 0.0f, hi = 0.0f;
#pragma unroll 4
  for (int k = lane; k < a.K; k += L::kRowThreads) {
    const float v = scaled(x, a.multipliers, k);
    lo = int8::range_min(lo, v);
    hi = int8::range_max(hi, v);
  }
  if (L::kWarp)
    warp_range(&lo, &hi);
  else
    block_range(&lo, &hi, scratch);
  const int8::RowQuantization r = int8::row_quantization(lo, hi);
  const uint8_t flip = a.shifted ? int8::kSignFlip : uint8_t{0};
  const int groups = (a.K + 3) / 4;  // Kp / 4
  // Kp is a multiple of 4 and the buffer 4-byte aligned (arena alignment), so each row's words are.
  uint32_t* q = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(a.q) + row * static_cast<size_t>(groups) * 4);
#pragma unroll 2
  for (int g = lane; g < groups; g += L::kRowThreads) {
    uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int k = 4 * g + j;
      const uint8_t b = k < a.K ? stored_byte(scaled(x, a.multipliers, k), r, flip) : padding_byte(r, flip);
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
