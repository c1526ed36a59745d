// Thread-block clusters (sm_90 and newer): the blocks of a cluster run at once on neighbouring
// multiprocessors, reach each other's shared memory (distributed shared memory) and meet at a
// barrier of the whole cluster. The fused linear + LayerNorm kernel (gemm_f16_layer_norm_kernel.cuh)
// spreads a row's columns over a cluster and sums the row's statistics through it.
//
// Under ENCRT_CUDA_HOST_EMULATION (tests/cuda_emulation/warp_emulation.h, launch_clusters) the
// blocks of a cluster run together on the host. Only sm_90 and newer run these: the launcher
// refuses older GPUs, so elsewhere the device code traps.
#pragma once

#if !defined(ENCRT_CUDA_HOST_EMULATION)
#include <cooperative_groups.h>
#endif

namespace encrt::cuda {

// Every thread of every block of the cluster arrives before any goes on; shared-memory writes
// before it (to this block's or a peer's) are visible to the reads after it.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  encrt::emulation::cluster_sync();
#else
  __trap();  // the launcher refuses GPUs below sm_90
#endif
}

// This block's rank in its cluster (0 .. size − 1).
__device__ __forceinline__ int cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return static_cast<int>(cooperative_groups::this_cluster().block_rank());
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  return encrt::emulation::cluster_rank();
#else
  __trap();
  return 0;
#endif
}

// The address of the same object as *p (in this block's shared memory) in block `rank`'s.
template <typename T>
__device__ __forceinline__ T* cluster_peer(T* p, int rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(p, static_cast<unsigned>(rank));
#elif defined(ENCRT_CUDA_HOST_EMULATION)
  return static_cast<T*>(encrt::emulation::cluster_peer(p, rank));
#else
  (void)p, (void)rank;
  __trap();
  return nullptr;
#endif
}

}  // namespace encrt::cuda
