// How the launchers (the kernels' .cu files) start a kernel: cudaLaunchKernelEx, with programmatic
// dependent launch (dependent_launch.cuh) when the calling thread asked for it
// (DependentLaunchScope, cuda_kernels.h: the backend's option pdl=on, on sm_90 and newer only), and
// in thread-block clusters where a kernel asks for them.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda {

// cluster_x > 0: thread-block clusters of that many blocks along x (sm_90 and newer; cluster.cuh).
template <typename... Params, typename... Args>
cudaError_t launch_kernel_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                                      unsigned cluster_x, cudaStream_t stream, Args&&... args) {
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
}

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                          Args&&... args) {
  return launch_kernel_in_clusters(kernel, grid, block, shared_bytes, 0u, stream, std::forward<Args>(args)...);
}

}  // namespace encrt::cuda
