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

// Whether a kernel loads the model's parameters (gamma, beta, a fused linear's bias) before waiting
// for the kernel ahead (dependent_launch.cuh: no kernel writes them, so their loads may overlap that
// kernel's end): with a block per row, the layout of few rows (MiniLM at batch 1), where a row's
// chain of loads is the kernel's time; a warp per row (many rows) loads them after the row, as
// before, since holding them from the start cost registers (ptxas sm_90, 384-wide rows in the
// 512-wide warp layout: 79 → 108) and so resident warps.
template <class L>
constexpr bool kParametersFirst = L::kRowThreads > 32;

// Normalizes the row held in v (columns L::column(L::lane(), k)) with gamma g and beta b (held
// the same way) and stores it. The kernels load g and b first, before waiting for the kernel ahead
// (dependent_launch.cuh: the model's parameters, which no kernel writes), so that their loads
// overlap that kernel's end and the row's own loads.
template <class L>
__device__ __forceinline__ void normalize_row(float (&v)[L::kPer], int width, const float (&g)[L::kPer],
                                              const float (&b)[L::kPer], float eps, void* y, Elem y_type, size_t row) {
  __shared__ float scratch[L::kBlockThreads / 32];
  const int lane = L::lane();
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
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  float gamma[L::kPer] = {}, beta[L::kPer] = {};  // read only with a LayerNorm
  if (kParametersFirst<L> && a.gamma) {
    load_row_as<L>(gamma, a.gamma, a.width, lane);
    load_row_as<L>(beta, a.beta, a.width, lane);
  }
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing the kernel ahead writes is read before it
  allow_next_kernel();
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
    if constexpr (!kParametersFirst<L>) {
      load_row_as<L>(gamma, a.gamma, a.width, lane);
      load_row_as<L>(beta, a.beta, a.width, lane);
    }
    normalize_row<L>(v, a.width, gamma, beta, a.eps, a.out, a.out_type, row);
    return;
  }
  store_row<L>(a.out, a.out_type, row * a.width, v, a.width, lane);
}

template <class L>
__global__ void layer_norm_kernel(LayerNormArgs a) {
  const size_t row = L::row();
  if (row >= static_cast<size_t>(a.rows)) return;  // a warp's row past the end (never a block's)
  const int lane = L::lane();
  const size_t first = row * a.width;
  float v[L::kPer], b[L::kPer], r[L::kPer], gamma[L::kPer], beta[L::kPer];
  if constexpr (kParametersFirst<L>) {
    if (a.bias) load_row_as<L>(b, a.bias, a.width, lane);
    load_row_as<L>(gamma, a.gamma, a.width, lane);
    load_row_as<L>(beta, a.beta, a.width, lane);
  }
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing the kernel ahead writes is read before it
  allow_next_kernel();
  load_row<L>(v, a.x, a.x_type, first, a.width, lane);
  if (!kParametersFirst<L> && a.bias) load_row_as<L>(b, a.bias, a.width, lane);
  if (a.residual) load_row<L>(r, a.residual, a.residual_type, first, a.width, lane);
#pragma unroll
  for (int k = 0; k < L::kPer; ++k) {  // x + bias, then + residual (the reference's order); 0 past the row
    if (a.bias) v[k] += b[k];
    if (a.residual) v[k] += r[k];
  }
  if constexpr (!kParametersFirst<L>) {
    load_row_as<L>(gamma, a.gamma, a.width, lane);
    load_row_as<L>(beta, a.beta, a.width, lane);
  }
  normalize_row<L>(v, a.width, gamma, beta, a.eps, a.y, a.y_type, row);
}

}  // namespace encrt::cuda::layer_norm_kernels
