// A packed run's token-level outputs back to [batch, seq] rows (plan::expand_rows on the device):
// a gather, one block per [batch, seq] position, so every output word is written exactly once and
// no block reads what another writes (the packed rows come from a copy). Position p = b · seq + t
// of sequence b is packed row r when source[r] == p for r in offsets[b] .. offsets[b + 1] - 1
// (source increases, so a binary search finds it); otherwise it is padding and becomes zeros.
//
// The device code of packed_rows.cu (which launches it), also compiled for the host by
// tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), so the kernels are checked without a GPU.
#pragma once

#include "backends/cuda/kernels/dependent_launch.cuh"
#include "backends/cuda/kernels/cuda_common.cuh"

namespace encrt::cuda::packed_rows_kernels {

constexpr int kThreads = 128;

__global__ void expand_packed_rows_kernel(ExpandRowsArgs a) {
  wait_for_previous_kernel();  // dependent_launch.cuh: nothing is read before it
  allow_next_kernel();
  const int p = static_cast<int>(blockIdx.x);
  const int b = p / a.seq;
  // Every thread searches (the same few words, from cache): no barrier, no shared memory.
  const int end = a.offsets[b + 1];
  int lo = a.offsets[b], hi = end;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (a.source[mid] < p)
      lo = mid + 1;
    else
      hi = mid;
  }
  const bool real = lo < end && a.source[lo] == p;
  uint32_t* dst = static_cast<uint32_t*>(a.out) + static_cast<size_t>(p) * a.row_words;
  const uint32_t* src = static_cast<const uint32_t*>(a.packed) + static_cast<size_t>(real ? lo : 0) * a.row_words;
  for (size_t w = threadIdx.x; w < a.row_words; w += kThreads) dst[w] = real ? src[w] : 0u;
}

}  // namespace encrt::cuda::packed_rows_kernels
