// Multi-head attention for one (sequence, head, 4 query rows) per block of 4 warps: K and V go
// through shared memory 32 keys at a time, each warp owns one query row, each lane one key of
// the tile for the scores and up to DMAX / 32 output dimensions for P·V (DMAX: head_dim rounded
// up to 32, 64 or 128). Without probabilities,
// one pass with an online softmax (running max and sum, rescaled as the max grows), so the
// scores never exist as a [seq, seq] array; with probabilities, a first pass for each row's max
// and sum and a second that writes p = exp(s - max) / sum, as the reference does. Padded keys
// get probability 0 · (1 / sum) (0, or NaN in a row whose sum is not finite, as the reference
// and PyTorch), and a sequence without a real token gives zeros. A packed run
// (AttentionArgs::offsets) reads each sequence's own rows, all keys real, with the same grid.
//
// The device code of attention.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda::simt_attention {

constexpr int kWarps = 4;
constexpr int kTile = 32;

template <int D>
struct Tiles {
  float k[kTile][D + 1];  // + 1: lane j reads row j, column d: no bank conflicts
  float v[kTile][D];
  float q[kWarps][D];
};

template <int D, typename T>
__device__ __forceinline__ void load_tile(Tiles<D>& t, const T* base, int ld, int H, int h, int dim, int j0, int seq) {
  for (int e = threadIdx.x; e < kTile * dim; e += blockDim.x) {
    const int jj = e / dim, d = e % dim, j = j0 + jj;
    float kv = 0.0f, vv = 0.0f;
    if (j < seq) {
      const T* row = base + static_cast<size_t>(j) * ld + static_cast<size_t>(h) * dim + d;
      kv = to_float(row[H]);
      vv = to_float(row[2 * H]);
    }
    t.k[jj][d] = kv;
    t.v[jj][d] = vv;
  }
}

// The scaled score of this lane's key of the tile (-inf for a padded key or one past the end).
template <int D>
__device__ __forceinline__ float score(const Tiles<D>& t, int warp, int lane, int dim, bool real, float scale) {
  if (!real) return -INFINITY;
  float dot = 0.0f;
#pragma unroll 8
  for (int d = 0; d < dim; ++d) dot += t.q[warp][d] * t.k[lane][d];
  return dot * scale;
}

// acc[r] += Σ_jj p_jj · V[jj][lane + 32 r], p broadcast from lane jj (skipping p == 0, as the
// reference does, so that an infinite V behind a zero probability adds nothing).
// (Columns at or past dim of the tiles hold whatever was there: their sums are never stored.)
template <int D>
__device__ __forceinline__ void accumulate(const Tiles<D>& t, float p, int lane, float (&acc)[D / 32]) {
#pragma unroll 4
  for (int jj = 0; jj < kTile; ++jj) {
    const float pj = __shfl_sync(0xffffffffu, p, jj);
    if (pj == 0.0f) continue;
#pragma unroll
    for (int r = 0; r < D / 32; ++r) acc[r] += pj * t.v[jj][lane + 32 * r];
  }
}

template <int D, typename T, bool kProbs>
__global__ void attention_kernel(AttentionArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  __shared__ Tiles<D> t;
  const int b = blockIdx.z, h = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int i = blockIdx.x * kWarps + warp;
  const int dim = a.head_dim, H = a.heads * dim, ld = 3 * H;
  // Sequence b's rows of qkv and out: [first, first + S). Packed: its own rows, every key real;
  // a block with no query row among them returns as a whole, before any barrier.
  size_t first = static_cast<size_t>(b) * a.seq;
  int S = a.seq;
  if (a.offsets) {
    first = static_cast<size_t>(a.offsets[b]);
    S = a.offsets[b + 1] - a.offsets[b];
    if (static_cast<int>(blockIdx.x) * kWarps >= S) return;
  }
  const int32_t* mask = a.mask && !a.offsets ? a.mask + first : nullptr;
  const T* base = static_cast<const T*>(a.qkv) + first * ld;
  const bool row = i < S;

  // Whether the sequence has a real key: each thread looks at its share of the mask, and the
  // barrier that orders the q rows' writes ORs the answers (no shared flag for every thread to
  // write: several writes of one word, even of the same value, are a race).
  int mine = 0;
  for (int j = threadIdx.x; j < S; j += blockDim.x)
    if (!mask || mask[j] != 0) mine = 1;
  if (row)
    for (int d = lane; d < dim; d += 32) t.q[warp][d] = to_float(base[static_cast<size_t>(i) * ld + static_cast<size_t>(h) * dim + d]);
  const bool any_real = __syncthreads_or(mine) != 0;

  T* out = static_cast<T*>(a.out) + (first + i) * H + static_cast<size_t>(h) * dim;
  // (Probabilities only in padded runs, where S is a.seq: the launcher refuses them packed.)
  float* probs = kProbs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
  if (!any_real) {
    if (row) {
      for (int d = lane; d < dim; d += 32) out[d] = from_float<T>(0.0f);
      if (kProbs)
        for (int j = lane; j < S; j += 32) probs[j] = 0.0f;
    }
    return;  // the whole block returns: no __syncthreads follows
  }

  float acc[D / 32];
#pragma unroll
  for (int r = 0; r < D / 32; ++r) acc[r] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  // Pass 1 (only with probabilities): each row's max and sum. Without probabilities this loop
  // is the only one and also accumulates P·V, rescaled as the max grows.
  for (int j0 = 0; j0 < S; j0 += kTile) {
    __syncthreads();
    load_tile(t, base, ld, H, h, dim, j0, S);
    __syncthreads();
    if (!row) continue;
    const int j = j0 + lane;
    const bool real = j < S && (!mask || mask[j] != 0);
    const float s = score(t, warp, lane, dim, real, a.scale);
    const float m_new = fmaxf(m, warp_max(s));
    const float correction = m == m_new ? 1.0f : expf(m - m_new);
    const float p = real ? expf(s - m_new) : 0.0f;
    l = l * correction + warp_sum(p);
    m = m_new;
    if (!kProbs) {
#pragma unroll
      for (int r = 0; r < D / 32; ++r) acc[r] *= correction;
      accumulate(t, p, lane, acc);
    }
  }
  const float inv = 1.0f / l;

  if (kProbs) {  // Pass 2: the probabilities, written and multiplied into V.
    for (int j0 = 0; j0 < S; j0 += kTile) {
      __syncthreads();
      load_tile(t, base, ld, H, h, dim, j0, S);
      __syncthreads();
      if (!row) continue;
      const int j = j0 + lane;
      const bool real = j < S && (!mask || mask[j] != 0);
      const float s = score(t, warp, lane, dim, real, a.scale);
      const float p = real ? expf(s - m) * inv : 0.0f * inv;
      if (j < S) probs[j] = p;
      accumulate(t, p, lane, acc);
    }
  }
  if (!row) return;
#pragma unroll
  for (int r = 0; r < D / 32; ++r)
    if (lane + 32 * r < dim) out[lane + 32 * r] = from_float<T>(kProbs ? acc[r] : acc[r] * inv);
}

}  // namespace encrt::cuda::simt_attention
