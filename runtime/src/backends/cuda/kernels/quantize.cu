// Launchers of the kernels in quantize_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/quantize_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

using namespace quantize_kernels;

cudaError_t quantize_rows(const QuantizeArgs& a, cudaStream_t stream) {
  if (a.rows == 0) return cudaSuccess;
  if (a.K <= 0 || reinterpret_cast<uintptr_t>(a.q) % 4 != 0) return cudaErrorInvalidValue;
  // A warp per row under rows=warp, and under auto from kWarpRowsFrom rows (row_layout.cuh); else
  // a block of 128 threads per row.
  if (a.layout == RowKernels::kWarp || (a.layout == RowKernels::kAuto && a.rows >= kWarpRowsFrom))
    launch_kernel(quantize_kernel<WarpRows>, row_blocks<WarpRows>(a.rows), WarpRows::kBlockThreads, 0, stream, a);
  else
    launch_kernel(quantize_kernel<QuantizeBlockRows>, row_blocks<QuantizeBlockRows>(a.rows), QuantizeBlockRows::kBlockThreads, 0, stream, a);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
