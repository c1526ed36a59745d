// CUDA and cuBLASLt failures as encrt Status values that name what failed and why.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "encrt/status.hpp"

namespace encrt::cuda {

// `what` is a C string so that the success path (run() calls these) builds no std::string.
// A failed runtime call also leaves its error as the thread's last error, which the launchers'
// cudaGetLastError() after each launch would then report as that kernel's (a session refused for
// lack of device memory made the next session's first kernel fail on the same thread: found on
// the emulated GPU, tests/cuda_emulation/device): reported here, it is cleared here.
inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  (void)cudaGetLastError();
  const std::string msg = std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) return out_of_memory("cuda: " + msg);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorNoKernelImageForDevice ||
      e == cudaErrorInvalidDevice)
    return unsupported("cuda: " + msg);
  return internal_error("cuda: " + msg);
}

inline Status cublas_status(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  const std::string msg = std::string("cuda: ") + what + " failed: cuBLASLt status " + std::to_string(static_cast<int>(s));
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return out_of_memory(msg);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH) return unsupported(msg);
  return internal_error(msg);
}

}  // namespace encrt::cuda
