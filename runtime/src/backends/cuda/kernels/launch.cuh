// How the launchers (the kernels' .cu files) start a kernel: cudaLaunchKernelEx, with programmatic
// dependent launch (dependent_launch.cuh) when the calling thread asked for it
// (DependentLaunchScope, cuda_kernels.h: the backend's option pdl=on, on sm_90 and newer only), and
// in thread-block clusters where a kernel asks for them.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <utility>

#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda {

// cluster_x > 0: thread-block clusters of that many blocks along x (sm_90 and newer; cluster.cuh).
template <typename... Params, typename... Args>
cudaError_t launch_kernel_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                                      unsigned cluster_x, cudaStream_t stream, Args&&... args) {
#if defined(ENCRT_CUDA_HOST_EMULATION)
  // The emulated GPU (tests/cuda_emulation/device/emulated_device.h) runs the kernel's blocks on
  // the host, now or, while the stream is captured, at each replay of the graph: the arguments are
  // copied into the closure as a launch copies them into its parameter buffer.
  return encrt::emulation::device::launch(reinterpret_cast<const void*>(kernel), grid, block, shared_bytes, cluster_x,
                                          stream, dependent_launch(), [=] { kernel(args...); });
#else
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[2] = {};
  unsigned n = 0;
  if (dependent_launch()) {
    attribute[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (cluster_x > 0) {
    attribute[n].id = cudaLaunchAttributeClusterDimension;
    attribute[n].val.clusterDim.x = cluster_x;
    attribute[n].val.clusterDim.y = 1;
    attribute[n].val.clusterDim.z = 1;
    ++n;
  }
  config.attrs = n > 0 ? attribute : nullptr;
  config.numAttrs = n;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
#endif
}

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                          Args&&... args) {
  return launch_kernel_in_clusters(kernel, grid, block, shared_bytes, 0u, stream, std::forward<Args>(args)...);
}

// Once per kernel and device (the first call's result is every later call's on that device):
// raises its dynamic shared memory limit to `bytes` (past 48 KB a kernel must say so; negative: the
// current GPU's opt-in limit) and allows clusters of more than 8 blocks (clusters_fit checks that a
// GPU runs them before they are used). Function attributes are a device's: a process that uses a
// second GPU sets them there too. The backend calls it through the kernels' prepare functions at
// session creation, outside any graph capture; a device index past kMaxDevices is refused.
constexpr int kMaxDevices = 64;
template <auto kKernel>
cudaError_t set_up_kernel_once(int bytes) {
  static std::once_flag once[kMaxDevices];
  static cudaError_t result[kMaxDevices] = {};
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device < 0 || device >= kMaxDevices) return cudaErrorInvalidDevice;
  std::call_once(once[device], [bytes, device] {
    cudaError_t& r = result[device];
    int limit = bytes;
    if (limit < 0) {
      r = cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
      if (r != cudaSuccess) return;
    }
    r = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
    // A GPU without clusters of more than 8 blocks may refuse this: clusters_fit then refuses 16
    // too, and 8 still run.
    if (r == cudaSuccess && cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
      (void)cudaGetLastError();
    if (r != cudaSuccess) (void)cudaGetLastError();  // the refusal is the result, not a later launch's error
  });
  return result[device];
}

// Whether the current GPU runs `kernel` in clusters of `cluster` blocks along x, each of `threads`
// threads and shared_bytes of dynamic shared memory (cudaErrorNotSupported if not one fits), and in
// *active (when set) how many such clusters it runs at once (cudaOccupancyMaxActiveClusters: the
// GPU's clusters of processors limit it, not only its count of them: a cluster of 16 needs 16
// multiprocessors of one GPC). A refusal is cleared from the runtime's last error, which the
// launchers read after each launch.
template <typename... Params>
cudaError_t clusters_fit(void (*kernel)(Params...), unsigned cluster, unsigned threads, size_t shared_bytes,
                         int* active = nullptr) {
  cudaLaunchConfig_t c = {};
  c.gridDim = dim3(cluster, 1, 1);
  c.blockDim = dim3(threads);
  c.dynamicSmemBytes = shared_bytes;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  c.attrs = &attribute;
  c.numAttrs = 1;
  int clusters = 0;
  if (const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &c); e != cudaSuccess) {
    (void)cudaGetLastError();  // a cluster size the GPU refuses is the answer, not a later launch's error
    return e;
  }
  if (active) *active = clusters;
  return clusters > 0 ? cudaSuccess : cudaErrorNotSupported;
}

}  // namespace encrt::cuda
