// The tensor-core attention for fp16 sequences of at most 128 tokens with every key of the
// sequence in shared memory at once, in both of attention_mma_kernel.cuh's layouts: the large
// grids' (each warp owning 16 query rows, a block 64) and the small grids' split one (the block's 4
// warps sharing 16 query rows, each taking a quarter of the keys, their softmax states merged at
// the end; head_dim ≤ 32, where its shared memory fits the static 48 KB). The backend's option
// attention_keys=whole (AttentionArgs::whole_keys). Device code of attention_mma.cu, beside
// attention_mma_kernel.cuh, whose semantics, fragment layouts, softmax step and merge it shares.
//
// Why: the tiled layout stages K and V 64 keys at a time through registers, so a sequence of 128
// tokens costs a block two round trips to memory in a row (the second tile's loads are issued only
// once the first tile is done), and the staging registers count against its occupancy (102
// registers a thread at head_dim 32, sm_90: 4 blocks a multiprocessor, so MiniLM at batch 32, 768
// blocks, runs in two waves on an H200). Here
//   - Q, K and V of the block go to shared memory by cp.async, all issued before any is waited
//     for: one round trip a block, and no register holds a loaded value;
//   - the mask words are loaded beside them, one key a thread; a masked key's K and V rows are
//     then zeroed in shared memory (its probability is 0, and 0 · Inf would be NaN: the tiled
//     layout's rule), a second barrier only when there is a mask;
//   - with every key staged, the online softmax need not step by the load tile: it steps 32 keys at
//     a time (kWholeStepKeys), so a warp holds 16 scores a lane instead of 32;
//   - in the split layout (MiniLM at batch 1: 96 blocks of 16 query rows) each warp's quarter of
//     128 keys is one step, and the block waits for memory once, where the tiled split layout
//     waits for its first key tile, then (overlapped with that tile's work) for its second.
// Shared memory: 25.5 KB a block at head_dim 32 (45.5 KB at 64), under the 48 KB of static shared
// memory; the registers are ptxas' (attention_mma.cu's header).
//
// The values differ from the tiled layout's only by the online softmax's steps (each step's
// rescaling of the running sum and output: fp32 rounding), within the same bounds.
#pragma once

#include "backends/cuda/kernels/attention_mma_kernel.cuh"
#include "backends/cuda/kernels/cp_async.cuh"

namespace encrt::cuda::mma_attention {

constexpr int kWholeKeys = 2 * kKeyTile;  // the longest sequence this layout takes
constexpr int kWholeStepKeys = 32;        // keys per online-softmax step
static_assert(kWholeKeys == kMmaWarps * 32, "one key's mask word a thread");
static_assert(kWholeKeys == kAttentionWholeKeysMaxSeq, "the launchers' bound (cuda_kernels.h)");
static_assert(kWholeStepKeys % 16 == 0 && kWholeKeys % kWholeStepKeys == 0, "P·V takes keys 16 at a time");
static_assert(sizeof(MmaTiles<64, __half, kQueryTile, kWholeKeys>) <= 48 * 1024, "static shared memory per block");

static_assert(sizeof(MmaTiles<32, __half, kQueryTileOf<4>, kWholeKeys>) + sizeof(SplitStates<32>) <= 48 * 1024,
              "static shared memory per block (the split layout, head_dim ≤ 32)");

// One block's work. The launcher's conditions: fp16 QKV, seq ≤ kWholeKeys (so every sequence, packed
// or padded, has at most kWholeKeys keys), head_dim 16, 32 or 64 (kSplit 1) or 16 or 32 (kSplit 4).
template <int D, int kSplit>
__device__ __forceinline__ void attention_mma_whole_keys_block(const AttentionArgs& a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  static_assert(D % 16 == 0 && D <= 64, "head_dim: a multiple of 16, at most 64");
  static_assert(kSplit == 1 || (kSplit == 4 && D <= 32), "each warp 16 rows, or 4 warps sharing them at head_dim ≤ 32");
  using T = __half;
  constexpr int kQueryRows = kQueryTileOf<kSplit>;
  using Tiles = MmaTiles<D, T, kQueryRows, kWholeKeys>;
  constexpr int kRowChunks = D / 8;  // 16-byte chunks per row
  constexpr int kKeyGroups = kWholeStepKeys / 8;
  constexpr int kWarpKeys = kWholeKeys / kSplit;  // the keys a warp takes: all, or a quarter
  static_assert(kWarpKeys % kWholeStepKeys == 0, "whole steps per warp");
  __shared__ Tiles t;
  __shared__ std::conditional_t<(kSplit > 1), SplitStates<D>, char> states;
  const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * kQueryRows;
  const int row0 = a.offsets ? a.offsets[b] : b * a.seq;
  const int n = a.offsets ? a.offsets[b + 1] - row0 : a.seq;
  if (q0 >= n) return;  // the whole block: no __syncthreads is reached
  const int32_t* mask = a.offsets || !a.mask ? nullptr : a.mask + static_cast<size_t>(b) * a.seq;
  const int H = a.heads * D;
  const size_t ld = 3 * static_cast<size_t>(H);
  const T* seq_base = static_cast<const T*>(a.qkv) + static_cast<size_t>(row0) * ld;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);

  // Every copy issued before any is waited for; rows past the sequence are zeros.
  for (int e = threadIdx.x; e < kQueryRows * kRowChunks; e += kMmaWarps * 32) {
    const int r = e / kRowChunks, c = (e % kRowChunks) * 8, i = q0 + r;
    if (i < n)
      copy_async<16>(&t.q[r][c], seq_base + static_cast<size_t>(i) * ld + h * D + c);
    else
      *reinterpret_cast<uint4*>(&t.q[r][c]) = zero;
  }
  for (int e = threadIdx.x; e < kWholeKeys * kRowChunks; e += kMmaWarps * 32) {
    const int r = e / kRowChunks, c = (e % kRowChunks) * 8;
    if (r < n) {
      const T* row = seq_base + static_cast<size_t>(r) * ld + h * D + c;
      copy_async<16>(&t.k[r][c], row + H);
      copy_async<16>(&t.v[r][c], row + 2 * H);
    } else {
      *reinterpret_cast<uint4*>(&t.k[r][c]) = zero;
      *reinterpret_cast<uint4*>(&t.v[r][c]) = zero;
    }
  }
  copy_commit();
  const int key = static_cast<int>(threadIdx.x);
  t.real[key] = key < n && (mask ? mask[key] : 1) != 0 ? 1 : 0;
  copy_wait<0>();
  __syncthreads();
  if (mask) {  // (block-uniform) a masked key's rows as the tiled layout stages them: zeros
    for (int e = threadIdx.x; e < kWholeKeys * kRowChunks; e += kMmaWarps * 32) {
      const int r = e / kRowChunks, c = (e % kRowChunks) * 8;
      if (t.real[r] == 0 && r < n) {
        *reinterpret_cast<uint4*>(&t.k[r][c]) = zero;
        *reinterpret_cast<uint4*>(&t.v[r][c]) = zero;
      }
    }
    __syncthreads();
  }

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, tg = lane & 3;               // the fragment layout's groupID and threadID_in_group
  const int wr = kSplit == 1 ? warp * kWarpRows : 0;    // the warp's first row in the query tile
  const int kb = (warp % kSplit) * kWarpKeys;           // its first key
  const int k_end = kb + kWarpKeys < n ? kb + kWarpKeys : n;
  if (kSplit == 1 && q0 + wr >= n) return;  // (warp-uniform) no query row; no barrier follows
  uint32_t qa[D / 16][4];
  load_q_fragments<D, T>(qa, t.q, wr, g, tg);
  float o[D / 8][4];
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  bool any_real = false;
  // Steps of kWholeStepKeys keys up to the sequence's end (keys past it: zero rows, not real); in
  // the split layout a warp whose keys all lie past the end takes none (its state: nothing seen).
  for (int j0 = kb; j0 < k_end; j0 += kWholeStepKeys) {
    float s[kKeyGroups][4];
    compute_scores<kKeyGroups, D, T>(s, qa, &t.k[j0], g, tg);
    softmax_step<kKeyGroups, D>(s, &t.real[j0], tg, a.scale, m, l, o, any_real);
    add_pv<kKeyGroups, D, T>(o, s, &t.v[j0][0], Tiles::kLd, g, tg);
  }
  add_group_sums(l);
  bool sequence_has_real = __any_sync(0xffffffffu, any_real);
  if constexpr (kSplit > 1) {  // the warps' states of the same 16 rows, merged as the tiled layout does
    leave_state<D>(states, warp, lane, g, tg, o, m, l, sequence_has_real);
    __syncthreads();
    if (warp != 0) return;
    take_states<D, kSplit>(states, lane, g, o, l, sequence_has_real);
  }
  store_rows<D, T>(a, o, l, sequence_has_real, row0, q0 + wr, n, h, g, tg);
}

template <int D, int kSplit = 1>
__global__ void __launch_bounds__(kMmaWarps * 32) attention_mma_whole_keys_kernel(AttentionArgs a) {
  attention_mma_whole_keys_block<D, kSplit>(a);
}

}  // namespace encrt::cuda::mma_attention
