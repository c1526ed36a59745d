// The epilogue of an int8 linear layer after cuBLASLt's D = Σ (q − 128)·w (int32, [rows, ld_d]):
//   acc = D + (128 − zp)·Σw (mod 2^32), value = float(acc) · s_x · s_w (+ bias), activation,
//   (+ residual), fp32 out
// as kernels/ref/gemm_ref.cpp's gemm_u8s8 and its epilogue store compute it (each operation rounded
// once: int8_math.h). Two kernels:
//   - elementwise, four columns per thread (int4 / float4 loads where the row width and the
//     pointers allow);
//   - one block per row with the row in registers, fused with the next int8 layer's quantization
//     of that row (its kQuantize op): the row's bytes, scale and zero point, and the fp32 row only
//     when something else reads it.
//
// The device code of int8_epilogue.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/int8_epilogue_value.cuh"
#include "backends/cuda/kernels/quantize_row.cuh"

namespace encrt::cuda::int8_epilogue_kernels {

// Column n of row `row`, everything but the residual (int8_epilogue_value.cuh: the same
// operations as the tensor-core GEMM's epilogue).
__device__ __forceinline__ float value_of(const Int8EpilogueArgs& a, int32_t d, int32_t zp, float sx, int n) {
  return int8::epilogue_value(d, zp, sx, a.w_sum[n], a.w_scale[n], a.bias, n, a.activation);
}

// The elementwise kernel's block size (int8_epilogue.cu's launcher).
constexpr int kElementwiseThreads = 256;

template <bool kVector>
__global__ void int8_epilogue_kernel(Int8EpilogueArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const size_t groups = static_cast<size_t>(a.ld_d / 4);
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(a.rows) * groups) return;
  const size_t row = i / groups;
  const int n0 = static_cast<int>(i % groups) * 4;
  const float sx = a.x_scale[row];
  const int32_t zp = a.x_zero_point[row];
  const int32_t* d = a.d + row * static_cast<size_t>(a.ld_d) + n0;
  const size_t out = row * static_cast<size_t>(a.N) + n0;
  if constexpr (kVector) {  // N % 4 == 0 and every pointer 16-byte aligned (checked by the launcher)
    const int4 dv = *reinterpret_cast<const int4*>(d);
    const int32_t ds[4] = {dv.x, dv.y, dv.z, dv.w};
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = value_of(a, ds[j], zp, sx, n0 + j);
    if (a.residual) {
      const float4 r = *reinterpret_cast<const float4*>(a.residual + out);
      v[0] = int8::add_rn(v[0], r.x), v[1] = int8::add_rn(v[1], r.y);
      v[2] = int8::add_rn(v[2], r.z), v[3] = int8::add_rn(v[3], r.w);
    }
    *reinterpret_cast<float4*>(a.y + out) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (n0 + j >= a.N) break;
      float v = value_of(a, d[j], zp, sx, n0 + j);
      if (a.residual) v = int8::add_rn(v, a.residual[out + j]);
      a.y[out + j] = v;
    }
  }
}

constexpr int kRowThreads = 256;
constexpr int kRowPerThread = kMaxRowWidth / kRowThreads;

__global__ void int8_epilogue_quantize_kernel(Int8EpilogueArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  __shared__ float scratch[kRangeScratch];
  const size_t row = blockIdx.x;
  const float sx = a.x_scale[row];
  const int32_t zp = a.x_zero_point[row];
  const int32_t* d = a.d + row * static_cast<size_t>(a.ld_d);
  const size_t out = row * static_cast<size_t>(a.N);
  float x[kRowPerThread];  // the next layer's input: the value times its multiplier
  float lo = 0.0f, hi = 0.0f;
#pragma unroll
  for (int k = 0; k < kRowPerThread; ++k) {
    const int c = threadIdx.x + k * kRowThreads;
    x[k] = 0.0f;
    if (c >= a.N) continue;
    float v = value_of(a, d[c], zp, sx, c);
    if (a.residual) v = int8::add_rn(v, a.residual[out + c]);
    if (a.y) a.y[out + c] = v;
    x[k] = a.next_multipliers ? int8::mul_rn(v, a.next_multipliers[c]) : v;
    lo = int8::range_min(lo, x[k]);
    hi = int8::range_max(hi, x[k]);
  }
  store_quantized_row<kRowPerThread, kRowThreads>(x, a.N, lo, hi, scratch, a.next_shifted, a.next_q, row, a.next_scale,
                                                  a.next_zero_point);
}

}  // namespace encrt::cuda::int8_epilogue_kernels
