// Programmatic dependent launch (PDL, sm_90 and newer): a kernel launched with it may start while
// the kernel before it on the stream is still finishing, so its launch and prologue overlap that
// kernel's tail, which a CUDA graph's replay of 50 small kernels pays about 1 µs a kernel for
// (MiniLM at batch 1 on an H200: 188 µs of kernels in a 237 µs span, scripts/kernel_trace.py).
// Every encrt kernel therefore starts with wait_for_previous_kernel() (PTX griddepcontrol.wait),
// which returns once the kernel before it has completed and its writes are visible, and at once
// when the kernel was launched without PDL; nothing is read or written before it. The launchers
// ask for PDL only under the backend option pdl=on (launch.cuh).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: a no-op there,
// where kernels run one after another).
#pragma once

namespace encrt::cuda {

__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace encrt::cuda
