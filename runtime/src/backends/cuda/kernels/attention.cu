// Launchers of the kernels in attention_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/attention_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using namespace simt_attention;

template <int D, typename T>
cudaError_t launch(const AttentionArgs& a, cudaStream_t stream) {
  const dim3 grid((a.seq + kWarps - 1) / kWarps, a.heads, a.batch);
  if (a.probs)
    launch_kernel(attention_kernel<D, T, true>, grid, kWarps * 32, 0, stream, a);
  else
    launch_kernel(attention_kernel<D, T, false>, grid, kWarps * 32, 0, stream, a);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_typed(const AttentionArgs& a, cudaStream_t stream) {
  if (a.head_dim < 1 || a.head_dim > 128) return cudaErrorInvalidValue;
  if (a.head_dim <= 32) return launch<32, T>(a, stream);
  if (a.head_dim <= 64) return launch<64, T>(a, stream);
  return launch<128, T>(a, stream);
}

}  // namespace

cudaError_t attention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0) return cudaSuccess;
  if (a.offsets && a.probs) return cudaErrorInvalidValue;  // probabilities are per padded position
  return a.type == Elem::kF16 ? launch_typed<__half>(a, stream) : launch_typed<float>(a, stream);
}

}  // namespace encrt::cuda
