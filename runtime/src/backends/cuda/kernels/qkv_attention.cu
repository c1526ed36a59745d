// Launches the fused QKV projection + attention (qkv_attention_kernel.cuh: the design) after
// checking what it takes: a grid of C × heads × batch blocks in clusters of C = ⌈seq / 16⌉ along x.
#include <mutex>

#include "backends/cuda/kernels/launch.cuh"
#include "backends/cuda/kernels/qkv_attention_kernel.cuh"

namespace encrt::cuda {

namespace {

using qkv_attention_kernels::kRows;
using qkv_attention_kernels::kThreads;
using qkv_attention_kernels::Layout;
using qkv_attention_kernels::qkv_attention_kernel;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Past 48 KB of dynamic shared memory a kernel must say so, once (the backend calls
// qkv_attention_prepare at session creation, outside any graph capture).
template <int D>
cudaError_t opt_in() {
  static std::once_flag once;
  static cudaError_t opted = cudaSuccess;
  std::call_once(once, [] {
    opted = cudaFuncSetAttribute(qkv_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(Layout<D>::kBytes));
  });
  return opted;
}

template <int D>
cudaError_t prepare() {
  if (const cudaError_t e = opt_in<D>(); e != cudaSuccess) return e;
  constexpr unsigned kCluster = qkv_attention_kernels::kMaxBlocks;
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(kCluster, 1, 1);
  c.blockDim = dim3(kThreads);
  c.dynamicSmemBytes = Layout<D>::kBytes;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = kCluster;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  c.attrs = &attribute;
  c.numAttrs = 1;
  int clusters = 0;
  if (const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, qkv_attention_kernel<D>, &c); e != cudaSuccess) return e;
  return clusters > 0 ? cudaSuccess : cudaErrorNotSupported;
}

template <int D>
cudaError_t launch(QkvAttentionArgs a, cudaStream_t stream) {
  if (const cudaError_t e = opt_in<D>(); e != cudaSuccess) return e;
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
