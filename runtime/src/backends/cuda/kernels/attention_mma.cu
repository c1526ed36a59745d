// Launches the tensor-core attention kernel (attention_mma_kernel.cuh: the design, and how its
// semantics differ from attention.cu's) after checking what it takes.
#include "backends/cuda/kernels/attention_mma_kernel.cuh"

namespace encrt::cuda {

namespace {

using mma_attention::attention_mma_kernel;
using mma_attention::kMmaWarps;
using mma_attention::kQueryTile;

template <int D>
cudaError_t launch(const AttentionArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.seq + kQueryTile - 1) / kQueryTile), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  attention_mma_kernel<D><<<grid, kMmaWarps * 32, 0, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace

cudaError_t attention_mma(const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0) return cudaSuccess;
  if (a.type != Elem::kF16 || a.probs || !attention_mma_head_dim_supported(a.head_dim)) return cudaErrorInvalidValue;
  if (a.batch < 0 || a.seq < 0 || a.heads < 1 || a.batch > 65535 || a.heads > 65535) return cudaErrorInvalidValue;
  // The 16-byte loads of Q, K and V rows and the 4-byte stores of output pairs (an arena buffer
  // is 256-byte aligned; anything else is refused, never read misaligned).
  if (reinterpret_cast<uintptr_t>(a.qkv) % 16 != 0 || reinterpret_cast<uintptr_t>(a.out) % 4 != 0)
    return cudaErrorMisalignedAddress;
  switch (a.head_dim) {
    case 16: return launch<16>(a, stream);
    case 32: return launch<32>(a, stream);
    default: return launch<64>(a, stream);
  }
}

}  // namespace encrt::cuda
