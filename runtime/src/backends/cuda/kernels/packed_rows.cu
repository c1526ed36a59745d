// Launchers of the kernels in packed_rows_kernel.cuh (the design: its header comment).
#include "backends/cuda/kernels/packed_rows_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

using namespace packed_rows_kernels;

cudaError_t expand_packed_rows(const ExpandRowsArgs& a, cudaStream_t stream) {
  if (a.batch == 0 || a.seq == 0 || a.row_words == 0) return cudaSuccess;
  if (a.batch < 0 || a.seq < 0 || !a.offsets || !a.source || !a.packed || !a.out) return cudaErrorInvalidValue;
  const size_t positions = static_cast<size_t>(a.batch) * static_cast<size_t>(a.seq);
  if (positions > 0x7fffffffu) return cudaErrorInvalidValue;  // p is an int, as the layout's entries
  launch_kernel(expand_packed_rows_kernel, static_cast<unsigned>(positions), kThreads, 0, stream, a);
  return cudaGetLastError();
}

}  // namespace encrt::cuda
