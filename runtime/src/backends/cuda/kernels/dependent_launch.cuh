// Programmatic dependent launch (PDL, sm_90 and newer): a kernel launched with it may start while
// the kernel before it on the stream is still running, so its launch and prologue overlap that
// kernel's tail, which a CUDA graph's replay of 50 small kernels pays about 1 µs a kernel for
// (MiniLM at batch 1 on an H200: 188 µs of kernels in a 237 µs span, scripts/kernel_trace.py).
// Every encrt kernel therefore starts with wait_for_previous_kernel() (PTX griddepcontrol.wait),
// which returns once the kernel before it has completed and its writes are visible, and at once
// when the kernel was launched without PDL; nothing that kernel writes is read before it, and
// nothing at all is written before it (a kernel may read constant data first: the int8 GEMM's
// weights). The wait is also what orders kernels two apart: the kernel after this one waits only
// for this one to complete, so a grid that could complete without waiting (every block returning
// before it, say for an empty shape) would let that kernel read or overwrite buffers while the
// kernel before this one still runs. So every kernel waits before any return of a whole block (a
// warp may return first, as the row kernels' surplus warps do: other warps of the block wait).
// Then allow_next_kernel() (griddepcontrol.launch_dependents): the kernel after it may
// be launched as soon as every block of this one has got there, rather than when this one ends
// (build E measured PDL without it: no gain for fp16 at batch 1, 169.6 → 169.2 µs on the H200).
// That changes no result: the next kernel's own wait still waits for this one to complete. Its
// blocks are only launched once every block of this kernel is running, so they take what is left
// of the GPU and never delay a block of this one. The launchers ask for PDL under the backend
// option pdl (auto: sm_90 and newer; launch.cuh).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION), where kernels
// run one after another: there the wait records that the running block got to it, and a launch
// in which some blocks got there and others did not is reported (the rule above: no block ends
// before the wait).
#pragma once

namespace encrt::cuda {

__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  encrt::emulation::waited_for_previous_kernel();
#endif
}

__device__ __forceinline__ void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace encrt::cuda
