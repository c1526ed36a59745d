// Launches the fused QKV projection + attention (qkv_attention_kernel.cuh: the design) after
// checking what it takes: a grid of C × heads × batch blocks in clusters of C = ⌈seq / 16⌉ along x.
#include "backends/cuda/kernels/launch.cuh"
#include "backends/cuda/kernels/qkv_attention_kernel.cuh"

namespace encrt::cuda {

namespace {

using qkv_attention_kernels::kRows;
using qkv_attention_kernels::kThreads;
using qkv_attention_kernels::Layout;
using qkv_attention_kernels::qkv_attention_kernel;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <int D>
cudaError_t set_up() {
  return set_up_kernel_once<qkv_attention_kernel<D>>(static_cast<int>(Layout<D>::kBytes));
}

// Every cluster size a launch may take (C = 1 .. kMaxBlocks by the sequence length, 3, 5, 6 and 7
// included: the session's shapes are not known here), so that a size the GPU refused would turn
// the fusion off at session creation, not fail a run.
template <int D>
cudaError_t prepare() {
  if (const cudaError_t e = set_up<D>(); e != cudaSuccess) return e;
  for (unsigned c = 1; c <= static_cast<unsigned>(qkv_attention_kernels::kMaxBlocks); ++c)
    if (const cudaError_t e = clusters_fit(qkv_attention_kernel<D>, c, kThreads, Layout<D>::kBytes); e != cudaSuccess)
      return e;
  return cudaSuccess;
}

template <int D>
cudaError_t launch(QkvAttentionArgs a, cudaStream_t stream) {
  if (const cudaError_t e = set_up<D>(); e != cudaSuccess) return e;
  a.cluster = (a.seq + kRows - 1) / kRows;
  const dim3 grid(static_cast<unsigned>(a.cluster), static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch));
  const cudaError_t e = launch_kernel_in_clusters(qkv_attention_kernel<D>, grid, kThreads, Layout<D>::kBytes,
                                                  static_cast<unsigned>(a.cluster), stream, a);
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace

cudaError_t qkv_attention(const QkvAttentionArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0) return cudaSuccess;
  if (a.batch < 0 || a.seq < 0 || a.seq > kQkvAttentionMaxSeq || a.heads <= 0 || a.heads > 65535 || a.batch > 65535 ||
      (a.head_dim != 32 && a.head_dim != 64) || a.width <= 0 || a.width % 8 != 0 || !(a.scale == a.scale))
    return cudaErrorInvalidValue;
  if (!a.x || !a.w || !a.out || a.x == a.out) return cudaErrorInvalidValue;
  if (!aligned(a.x, 16) || !aligned(a.w, 16) || !aligned(a.out, 4) || (a.bias && !aligned(a.bias, 2)) ||
      (a.mask && !aligned(a.mask, 4)))
    return cudaErrorMisalignedAddress;
  return a.head_dim == 32 ? launch<32>(a, stream) : launch<64>(a, stream);
}

cudaError_t qkv_attention_prepare(int head_dim) {
  if (head_dim == 32) return prepare<32>();
  if (head_dim == 64) return prepare<64>();
  return cudaErrorInvalidValue;
}

}  // namespace encrt::cuda
