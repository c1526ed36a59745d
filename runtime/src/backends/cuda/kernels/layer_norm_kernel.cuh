// LayerNorm, alone or fused with what precedes it: the embedding gather (word * scale + position
// + token type, padded or packed rows) or a linear layer's bias and residual. A warp or a block
// per row (row_layout.cuh: which, and why); the row stays in registers, every value of it loaded
// before any is added, and the statistics are fp32 two-pass, as the x86 kernels compute them:
// mean, then the mean of (x - mean)^2.
//
// The device code of layer_norm.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/row_layout.cuh"

namespace encrt::cuda::layer_norm_kernels {

// Normalizes the row held in v (columns L::column(L::lane(), k)) and stores it; gamma and beta are
// loaded before the statistics, so their loads overlap the reductions.
template <class L>
__device__ __forceinline__ void normalize_row(float (&v)[L::kPer], int width, const float* gamma, const float* beta,
                                              float eps, void* y, Elem y_type, size_t row) {
  __shared__ float scratch[L::kBlockThreads / 32];
  const int lane = L::lane();
  float g[L::kPer], b[L::kPer];
  load_row_as<L>(g, gamma, width, lane);
  load_row_as<L>(b, beta, width, lane);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c < width) sum += v[k];
  }
  const float mean = L::sum(sum, scratch) / static_cast<float>(width);
  float sq = 0.0f;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c < width) sq += (v[k] - mean) * (v[k] - mean);
  }
  const float var = L::sum(sq, scratch) / static_cast<float>(width);
  const float inv = 1.0f / sqrtf(var + eps);
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) v[k] = (v[k] - mean) * inv * g[k] + b[k];
  store_row<L>(y, y_type, row * width, v, width, lane);
}

template <class L>
__global__ void embed_kernel(EmbedArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  size_t at = row;  // the token's place in the [batch, seq] inputs
  if (a.source) {
    // A packed run: rows past the real tokens (up to the graph's bucket) become zeros (defined
    // values, though no result reads them: cuda_backend.cpp, bucket_rows); the row's threads
    // return together, before the LayerNorm's reductions.
    if (row >= static_cast<size_t>(a.offsets[a.batch])) {
      for (int c = lane; c < a.width; c += L::kRowThreads) store(a.out, a.out_type, row * a.width + c, 0.0f);
      return;
    }
    at = static_cast<size_t>(a.source[row]);
  }
  const int id = a.ids[at];
  const int position = static_cast<int>(at % static_cast<size_t>(a.seq));
  const int type = a.token_types ? a.token_types[at] : 0;
  const size_t word_row = static_cast<size_t>(id) * a.width;
  float v[L::kPer], p[L::kPer], t[L::kPer] = {};  // t: read only with a token-type table
  if (a.word_row_scales) {
    const int8_t* w = static_cast<const int8_t*>(a.word) + word_row;
#pragma unroll
    for (int k = 0; k < L::kPer; ++k) {
      const int c = L::column(lane, k);
      v[k] = c < a.width ? static_cast<float>(w[c]) : 0.0f;
    }
  } else {
    load_row<L>(v, a.word, a.word_type, word_row, a.width, lane);
  }
  load_row<L>(p, a.position, a.position_type, static_cast<size_t>(position) * a.width, a.width, lane);
  if (a.token_type_table) load_row<L>(t, a.token_type_table, a.token_type_type, static_cast<size_t>(type) * a.width, a.width, lane);
  const float word_scale = a.word_row_scales ? a.word_row_scales[id] * a.scale : a.scale;
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {
    const int c = L::column(lane, k);
    if (c >= a.width) {
      v[k] = 0.0f;
      continue;
    }
    // cpu_executor.cpp's order: 0 + word · scale (int8: q · (row scale · scale)), + position, + type.
    float x = 0.0f + v[k] * word_scale;
    x += p[k];
    if (a.token_type_table) x += t[k];
    v[k] = x;
  }
  if (a.gamma) {
    normalize_row<L>(v, a.width, a.gamma, a.beta, a.eps, a.out, a.out_type, row);
    return;
  }
  store_row<L>(a.out, a.out_type, row * a.width, v, a.width, lane);
}

template <class L>
__global__ void layer_norm_kernel(LayerNormArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  const size_t first = row * a.width;
  float v[L::kPer], b[L::kPer], r[L::kPer];
  load_row<L>(v, a.x, a.x_type, first, a.width, lane);
  if (a.bias) load_row_as<L>(b, a.bias, a.width, lane);
  if (a.residual) load_row<L>(r, a.residual, a.residual_type, first, a.width, lane);
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {  // x + bias, then + residual (the reference's order); 0 past the row
    if (a.bias) v[k] += b[k];
    if (a.residual) v[k] += r[k];
  }
  normalize_row<L>(v, a.width, a.gamma, a.beta, a.eps, a.y, a.y_type, row);
}

}  // namespace encrt::cuda::layer_norm_kernels
