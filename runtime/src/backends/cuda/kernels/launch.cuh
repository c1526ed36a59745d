// How the launchers (the kernels' .cu files) start a kernel: cudaLaunchKernelEx, with programmatic
// dependent launch (dependent_launch.cuh) when the calling thread asked for it
// (DependentLaunchScope, cuda_kernels.h: the backend's option pdl=on, on sm_90 and newer only).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda {

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                          Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1] = {};
  if (dependent_launch()) {
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace encrt::cuda
