// Launches the tensor-core attention kernel (attention_mma_kernel.cuh: the design, and how its
// semantics differ from attention.cu's) after checking what it takes.
#include "backends/cuda/kernels/attention_mma_kernel.cuh"
#include "backends/cuda/kernels/attention_mma_whole_keys_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using mma_attention::attention_mma_kernel;
using mma_attention::kMmaWarps;
using mma_attention::kQueryTile;
using mma_attention::kQueryTileOf;

using Kernel = void (*)(AttentionArgs);

// The unsplit layout's kernel (each warp owning 16 query rows) as the options pick it: every key in
// shared memory at once (whole_keys, fp16, seq ≤ 128: attention_mma_whole_keys_kernel.cuh), holding
// the next key tile (prefetch_keys), compiled for 6 blocks a multiprocessor (six_blocks, head_dim ≤
// 32), or the default build. launch() runs it and resident_blocks() asks the GPU about it.
template <int D, typename Io>
Kernel unsplit_kernel(const AttentionArgs& a) {
  if constexpr (std::is_same_v<Io, __half>)
    if (a.whole_keys && a.seq <= mma_attention::kWholeKeys) return mma_attention::attention_mma_whole_keys_kernel<D>;
  if (a.prefetch_keys) return attention_mma_kernel<D, Io, 1, true>;
  if constexpr (D == 32)  // (at 16 the default build already fits 6 blocks: 75 registers)
    if (a.six_blocks) return mma_attention::attention_mma_six_blocks_kernel<D, Io>;
  return attention_mma_kernel<D, Io, 1>;
}

// The split layout's kernel (the block's 4 warps sharing 16 query rows): every key in shared
// memory at once (whole_keys, fp16, seq ≤ 128, head_dim ≤ 32), or the tiled build.
template <int D, typename Io>
Kernel split_kernel(const AttentionArgs& a) {
  if constexpr (std::is_same_v<Io, __half> && D <= 32)
    if (a.whole_keys && a.seq <= mma_attention::kWholeKeys) return mma_attention::attention_mma_whole_keys_kernel<D, 4>;
  return attention_mma_kernel<D, Io, 4>;
}

template <int kSplit>
cudaError_t launch_rows(Kernel kernel, const AttentionArgs& a, cudaStream_t stream) {
  constexpr int rows = kQueryTileOf<kSplit>;
  const dim3 grid(static_cast<unsigned>((a.seq + rows - 1) / rows), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  launch_kernel(kernel, grid, kMmaWarps * 32, 0, stream, a);
  return cudaGetLastError();
}

template <int D, typename Io>
cudaError_t launch(const AttentionArgs& a, cudaStream_t stream) {
  const size_t blocks = static_cast<size_t>((a.seq + kQueryTile - 1) / kQueryTile) * static_cast<size_t>(a.heads) *
                        static_cast<size_t>(a.batch);
  const bool split = a.key_split == 4 || (a.key_split == 0 && blocks < 2 * static_cast<size_t>(a.sms));
  if (split) return launch_rows<4>(split_kernel<D, Io>(a), a, stream);
  return launch_rows<1>(unsplit_kernel<D, Io>(a), a, stream);
}

template <int D, typename Io>
cudaError_t resident_blocks(const AttentionArgs& a, int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, unsplit_kernel<D, Io>(a), kMmaWarps * 32, 0);
}

template <typename Io>
cudaError_t resident_blocks_head_dim(const AttentionArgs& a, int* blocks) {
  switch (a.head_dim) {
    case 16: return resident_blocks<16, Io>(a, blocks);
    case 32: return resident_blocks<32, Io>(a, blocks);
    default: return resident_blocks<64, Io>(a, blocks);
  }
}

// Io: the activations' type (fp16: fp16 tensor cores; fp32: bf16 ones).
template <typename Io>
cudaError_t launch_head_dim(const AttentionArgs& a, cudaStream_t stream) {
  switch (a.head_dim) {
    case 16: return launch<16, Io>(a, stream);
    case 32: return launch<32, Io>(a, stream);
    default: return launch<64, Io>(a, stream);
  }
}

}  // namespace

cudaError_t attention_mma_resident_blocks(const AttentionArgs& a, int* blocks) {
  if (!blocks || !attention_mma_head_dim_supported(a.head_dim) || (a.type != Elem::kF16 && a.type != Elem::kF32))
    return cudaErrorInvalidValue;
  const cudaError_t e = a.type == Elem::kF16 ? resident_blocks_head_dim<__half>(a, blocks)
                                             : resident_blocks_head_dim<float>(a, blocks);
  if (e != cudaSuccess) (void)cudaGetLastError();  // the answer, not a later launch's error
  return e;
}

cudaError_t attention_mma(const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0) return cudaSuccess;
  if (a.probs || !attention_mma_head_dim_supported(a.head_dim)) return cudaErrorInvalidValue;
  if (a.type != Elem::kF16 && a.type != Elem::kF32) return cudaErrorInvalidValue;
  if (a.key_split != 0 && a.key_split != 1 && a.key_split != 4) return cudaErrorInvalidValue;
  if (a.batch < 0 || a.seq < 0 || a.heads < 1 || a.batch > 65535 || a.heads > 65535) return cudaErrorInvalidValue;
  // The 16-byte loads of Q, K and V rows and the 4-byte (fp16) or 8-byte (fp32) stores of output
  // pairs (an arena buffer is 256-byte aligned; anything else is refused, never read misaligned).
  const uintptr_t out_alignment = 2 * elem_size(a.type);
  if (reinterpret_cast<uintptr_t>(a.qkv) % 16 != 0 || reinterpret_cast<uintptr_t>(a.out) % out_alignment != 0)
    return cudaErrorMisalignedAddress;
  return a.type == Elem::kF16 ? launch_head_dim<__half>(a, stream) : launch_head_dim<float>(a, stream);
}

}  // namespace encrt::cuda
