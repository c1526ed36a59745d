// cp.async (sm_80 and newer: global to shared memory without a trip through registers), shared by
// the tensor-core GEMMs (gemm_i8_mma_kernel.cuh, gemm_f16_mma_kernel.cuh), the fused kernels and
// the whole-keys attention. Under ENCRT_CUDA_HOST_EMULATION (tests/cuda_emulation) a copy is
// bounds-checked, its bytes read at the issue and written to shared memory only when a wait covers
// its committed group (warp_emulation.h): the latest the hardware may land it.
#pragma once

namespace encrt::cuda {

// cp.async of kBytes (4 or 16) from global to shared memory; both addresses kBytes-aligned.
template <int kBytes>
__device__ __forceinline__ void copy_async(void* shared, const void* global) {
  static_assert(kBytes == 4 || kBytes == 16, "cp.async sizes used here");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(global) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(global) : "memory");
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_cp_async(shared, global, kBytes);
#else
  (void)shared, (void)global;
  __trap();
#endif
}
// Closes this thread's group of cp.async issued since the last commit.
__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_cp_async_commit();
#endif
}
// Waits until at most kPending of this thread's committed groups are still in flight (the other
// threads' copies are then ordered by the __syncthreads that follows every call).
template <int kPending>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  emulated_cp_async_wait(kPending);
#endif
}

}  // namespace encrt::cuda
