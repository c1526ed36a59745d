// The K loop of the tensor-core GEMMs (gemm_i8_mma_kernel.cuh, gemm_f16_mma_kernel.cuh): a ring of
// kStages shared-memory stages that cp.async fills kStages − 1 steps ahead of the warps.
//
// One cp.async group per step (empty past the last step), committed in step order: steps
// 0 .. kStages − 2 before the loop, step + kStages − 1 in iteration `step`. Before iteration
// step's barrier kStages − 1 + step groups are committed, so "at most kStages − 2 pending" is
// "step's has landed"; the barrier then makes every thread's copies (and zero stores) of the step
// visible and says every warp is done with step − 1's slot, which that iteration refills.
// The weights' first stages are loaded before waiting for the kernel ahead (dependent_launch.cuh:
// the model's weights, which no kernel writes, so those loads overlap that kernel's end) and join
// step 0's group; the rows, which the kernel ahead may have written, only after the wait.
//
// load_weights(slot, step) and load_rows(slot, step) issue the copies of step's stage into ring
// slot `slot`; multiply(slot) is the warps' work on a landed stage.
#pragma once

#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/dependent_launch.cuh"

namespace encrt::cuda {

template <int kStages, class LoadWeights, class LoadRows, class Multiply>
__device__ __forceinline__ void run_stage_ring(int steps, const LoadWeights& load_weights, const LoadRows& load_rows,
                                               const Multiply& multiply) {
  static_assert(kStages >= 2, "a ring of at least two stages");
#pragma unroll
  for (int p = 0; p < kStages - 1; ++p)
    if (p < steps) load_weights(p, p);
  wait_for_previous_kernel();  // nothing the kernel ahead writes is read before it
  allow_next_kernel();
#pragma unroll
  for (int p = 0; p < kStages - 1; ++p) {
    if (p < steps) load_rows(p, p);
    copy_commit();
  }
  for (int step = 0; step < steps; ++step) {
    copy_wait<kStages - 2>();
    __syncthreads();
    const int ahead = step + kStages - 1;
    if (ahead < steps) {
      load_rows(ahead % kStages, ahead);
      load_weights(ahead % kStages, ahead);
    }
    copy_commit();
    multiply(step % kStages);
  }
}

}  // namespace encrt::cuda
