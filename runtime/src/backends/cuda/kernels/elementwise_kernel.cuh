// Elementwise epilogues (activation + residual, tanh) and pooling (padded or packed rows).
//
// The device code of elementwise.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/row_layout.cuh"  // ChunkBits

namespace encrt::cuda::elementwise_kernels {

// The launchers' block sizes (elementwise.cu): one thread per value or chunk; pooling, blocks of 32 columns
// of one sequence, each warp of the block summing every kPoolWarps-th row.
constexpr int kThreads = 256;
constexpr int kPoolColumns = 32;
constexpr int kPoolWarps = 16;
constexpr int kPoolThreads = 32 * kPoolWarps;
inline unsigned pool_blocks(int batch, int width) {
  return static_cast<unsigned>(batch) * static_cast<unsigned>((width + kPoolColumns - 1) / kPoolColumns);
}

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float relu(float x) { return isnan(x) ? x : x > 0.0f ? x : 0.0f; }

__device__ __forceinline__ float activated(const ActivationArgs& a, float v, size_t i) {
  if (a.activation == 1) v = relu(v);
  if (a.activation == 2) v = gelu(v);
  if (a.residual) v += load(a.residual, a.residual_type, i);
  return v;
}

// One value per thread, any type, alignment and length.
__global__ void activation_kernel(ActivationArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.n) return;
  store(a.y, a.y_type, i, activated(a, load(a.y, a.y_type, i), i));
}

// kChunk values of type T per thread, read and written as one 16-byte access: the launcher's
// choice where n is a multiple of kChunk and y 16-byte aligned (8 fp16 or 4 fp32 values; the
// GELU after MiniLM's first feed-forward layer at batch 32 is 6.3 M values, 20 µs of an H200's
// time per layer one value per thread).
template <typename T, int kChunk>
__global__ void activation_chunk_kernel(ActivationArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  using Bits = typename ChunkBits<sizeof(T) * kChunk>::type;
  const size_t i0 = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kChunk;
  if (i0 >= a.n) return;
  T* y = static_cast<T*>(a.y) + i0;
  Bits bits = *reinterpret_cast<const Bits*>(y);
  T e[kChunk];
  memcpy(e, &bits, sizeof(bits));
#pragma unroll
  for (int j = 0; j < kChunk; ++j) e[j] = from_float<T>(activated(a, to_float(e[j]), i0 + j));
  memcpy(&bits, e, sizeof(bits));
  *reinterpret_cast<Bits*>(y) = bits;
}

__global__ void tanh_kernel(size_t n, void* y, Elem type) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) store(y, type, i, tanhf(load(y, type, i)));
}

// Block (b, chunk) pools columns chunk · 32 .. + 31 of sequence b; sequence b's rows are row0 ..
// row0 + rows - 1 (packed: its own rows, every one real, so the mask is not read). Warp w sums
// rows w, w + 16, ... (in that order, from 0), then warp 0 adds the 16 partial sums in warp
// order and scales by 1 / (real rows): the same bits whatever the GPU, and many rows in flight
// at once. A row's value and its mask word are loaded whether or not the row is real and then
// selected (not multiplied: a padded row's NaN stays out), so the loads of the unrolled rows are
// independent: a `continue` on the mask made each row wait for its mask word before loading its
// value, two round trips a row, 16 rows a warp at seq 128 (7.4 µs of an H200's time at batch 1,
// build D). (The first version gave each sequence one block whose threads walked all its rows
// one after another: 84 µs, at batch 1 as at 32.)
__global__ void pool_kernel(PoolArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  __shared__ float partial[kPoolWarps][kPoolColumns];
  __shared__ int counts[kPoolWarps];
  const int chunks = (a.width + kPoolColumns - 1) / kPoolColumns;
  const int b = static_cast<int>(blockIdx.x) / chunks;
  const int lane = static_cast<int>(threadIdx.x) % 32, w = static_cast<int>(threadIdx.x) / 32;
  const int c = (static_cast<int>(blockIdx.x) % chunks) * kPoolColumns + lane;
  size_t row0 = static_cast<size_t>(b) * a.seq;
  int rows = a.seq;
  if (a.offsets) {
    row0 = static_cast<size_t>(a.offsets[b]);
    rows = a.offsets[b + 1] - a.offsets[b];
  }
  const int32_t* mask = a.offsets ? nullptr : a.mask;
  float v = 0.0f;
  int count = 0;
  if (a.mean) {
#pragma unroll 8
    for (int t = w; t < rows; t += kPoolWarps) {
      const bool real = !mask || mask[row0 + t] != 0;
      const float x = c < a.width ? load(a.x, a.x_type, (row0 + t) * a.width + c) : 0.0f;
      if (real) {
        v += x;
        ++count;
      }
    }
  } else if (w == 0 && rows > 0 && c < a.width) {
    v = load(a.x, a.x_type, row0 * a.width + c);
  }
  partial[w][lane] = v;
  if (lane == 0) counts[w] = count;
  __syncthreads();
  if (w != 0 || c >= a.width) return;
  float total = partial[0][lane];
  if (a.mean) {
    total = 0.0f;
    int real = 0;
    for (int g = 0; g < kPoolWarps; ++g) {
      total += partial[g][lane];
      real += counts[g];
    }
    if (real > 0) total *= 1.0f / static_cast<float>(real);
  }
  store(a.out, a.out_type, static_cast<size_t>(b) * a.width + c, total);
}

}  // namespace encrt::cuda::elementwise_kernels
