// Per-row quantization on the device, shared by the quantize kernel and the int8 epilogue fused
// with the next layer's quantization: the block-wide range of a row and the bytes it stores. The
// arithmetic is int8_math.h's (the reference's, bit for bit).
#pragma once

#include "backends/cuda/kernels/cuda_common.cuh"
#include "backends/cuda/kernels/int8_math.h"

namespace encrt::cuda {

// Room for block_range's partial results: a low and a high per warp (up to 32 warps).
constexpr int kRangeScratch = 64;

// lo = min(0, lo of every thread), hi = max(0, hi of every thread), for every thread of the block.
// The values are never NaN (the running min/max skip NaN and start at 0), and min/max are exact in
// any order, so the result is the reference's. Every thread of the block must call block_range;
// warp_range is the same over one warp (a row held by a warp: row_layout.cuh), with no barrier.
__device__ __forceinline__ void warp_range(float* lo, float* hi) {
  float l = *lo, h = *hi;
  for (int o = 16; o > 0; o >>= 1) {
    l = int8::range_min(l, __shfl_xor_sync(0xffffffffu, l, o));
    h = int8::range_max(h, __shfl_xor_sync(0xffffffffu, h, o));
  }
  *lo = l, *hi = h;
}
__device__ __forceinline__ void block_range(float* lo, float* hi, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  warp_range(lo, hi);
  float l = *lo, h = *hi;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) {
    scratch[warp] = l;
    scratch[32 + warp] = h;
  }
  __syncthreads();
  l = 0.0f, h = 0.0f;
  for (int w = 0; w < warps; ++w) {
    l = int8::range_min(l, scratch[w]);
    h = int8::range_max(h, scratch[32 + w]);
  }
  *lo = l, *hi = h;
}

// The byte stored for value x of a row (x already times its multiplier): the reference's q, or
// q − 128 as int8 when `flip` is int8::kSignFlip (0: the reference's uint8).
__device__ __forceinline__ uint8_t stored_byte(float x, const int8::RowQuantization& r, uint8_t flip) {
  const uint8_t q = r.refused ? uint8_t{0} : int8::quantize_value(x, r);
  return static_cast<uint8_t>(q ^ flip);
}
// The byte of the padding columns K .. Kp − 1: the zero point (0 in a refused row).
__device__ __forceinline__ uint8_t padding_byte(const int8::RowQuantization& r, uint8_t flip) {
  return static_cast<uint8_t>(static_cast<uint8_t>(r.zero_point) ^ flip);
}

// The end of a kernel that holds a row in kThreads threads (the whole block, or a warp when
// kThreads is 32: row_layout.cuh), kPer values per thread in chunks of kVec consecutive columns
// (x[k] is column ((k / kVec) · kThreads + lane) · kVec + k % kVec: RowLayout::column), with the
// row's running range in lo/hi: the row's range, then the row's bytes at q_rows + row · Kp
// (Kp = width rounded up to 4, padding included; a chunk of 4 as one 4-byte store where the
// width is a multiple of 4), its scale and its zero point, as the quantize kernel writes them.
template <int kPer, int kThreads, int kVec = 1>
__device__ __forceinline__ void store_quantized_row(const float (&x)[kPer], int width, float lo, float hi, float* scratch,
                                                    bool shifted, void* q_rows, size_t row, float* scale,
                                                    int32_t* zero_point) {
  static_assert(kPer % kVec == 0, "whole chunks per thread");
  const int lane = static_cast<int>(threadIdx.x) % kThreads;
  if (kThreads == 32)
    warp_range(&lo, &hi);
  else
    block_range(&lo, &hi, scratch);
  const int8::RowQuantization r = int8::row_quantization(lo, hi);
  const uint8_t flip = shifted ? int8::kSignFlip : uint8_t{0};
  const int Kp = (width + 3) / 4 * 4;
  uint8_t* q = static_cast<uint8_t*>(q_rows) + row * static_cast<size_t>(Kp);
  if (kVec == 4 && width % 4 == 0 && reinterpret_cast<uintptr_t>(q_rows) % 4 == 0) {  // Kp == width: whole words
#pragma unroll
    for (int j = 0; j < kPer / 4; ++j) {
      const int c0 = (j * kThreads + lane) * 4;
      if (c0 >= width) continue;
      uint32_t word = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) word |= static_cast<uint32_t>(stored_byte(x[j * 4 + i], r, flip)) << (8 * i);
      *reinterpret_cast<uint32_t*>(q + c0) = word;  // little-endian: column c0 + i is byte i
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int c = ((k / kVec) * kThreads + lane) * kVec + k % kVec;
      if (c < width) q[c] = stored_byte(x[k], r, flip);
    }
  }
  for (int c = width + lane; c < Kp; c += kThreads) q[c] = padding_byte(r, flip);
  if (lane == 0) {
    scale[row] = r.scale;
    zero_point[row] = r.zero_point;
  }
}

}  // namespace encrt::cuda
