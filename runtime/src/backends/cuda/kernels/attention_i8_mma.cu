// Launches the int8 tensor-core attention kernel (attention_i8_mma_kernel.cuh: the design, and
// how its results relate to the reference's) after checking what it takes.
#include "backends/cuda/kernels/attention_i8_mma_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using mma_attention_i8::attention_i8_mma_kernel;
using mma_attention_i8::kQueryTile;
using mma_attention_i8::kThreads;
using mma_attention_i8::shared_layout;

template <int D>
cudaError_t launch(const AttentionArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.seq + kQueryTile - 1) / kQueryTile), static_cast<unsigned>(a.heads),
                  static_cast<unsigned>(a.batch));
  launch_kernel(attention_i8_mma_kernel<D>, grid, kThreads, shared_layout(D, a.seq).bytes, stream, a);
  return cudaGetLastError();
}

template <int D>
cudaError_t allow_shared_bytes() {
  return cudaFuncSetAttribute(attention_i8_mma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(shared_layout(D, kAttentionI8MmaMaxSeq).bytes));
}

}  // namespace

size_t attention_i8_mma_shared_bytes(int head_dim, int seq) { return shared_layout(head_dim, seq).bytes; }

cudaError_t attention_i8_mma_prepare() {
  if (cudaError_t e = allow_shared_bytes<32>(); e != cudaSuccess) return e;
  return allow_shared_bytes<64>();
}

cudaError_t attention_i8_mma(const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0) return cudaSuccess;
  if (a.type != Elem::kF32 || a.probs || !attention_i8_mma_head_dim_supported(a.head_dim)) return cudaErrorInvalidValue;
  if (a.batch < 0 || a.seq < 0 || a.seq > kAttentionI8MmaMaxSeq || a.heads < 1 || a.batch > 65535 || a.heads > 65535)
    return cudaErrorInvalidValue;
  // 4-byte loads of QKV values, 8-byte stores of output pairs (an arena buffer is 256-byte
  // aligned; anything else is refused, never accessed misaligned).
  if (reinterpret_cast<uintptr_t>(a.qkv) % 4 != 0 || reinterpret_cast<uintptr_t>(a.out) % 8 != 0)
    return cudaErrorMisalignedAddress;
  return a.head_dim == 32 ? launch<32>(a, stream) : launch<64>(a, stream);
}

}  // namespace encrt::cuda
