// Launches the fp16 tensor-core GEMM (gemm_f16_mma_kernel.cuh: the design) after checking what it
// takes, and chooses its tile.
#include "backends/cuda/kernels/gemm_f16_mma_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using mma_gemm_f16::gemm_f16_mma_kernel;
using mma_gemm_f16::kThreads;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <int kTile>
cudaError_t launch(const GemmF16MmaArgs& a, bool pairs, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.N + kTile - 1) / kTile), static_cast<unsigned>((a.M + kTile - 1) / kTile));
  launch_kernel(gemm_f16_mma_kernel<kTile, kTile>, grid, kThreads, 0, stream, a, pairs);
  return cudaGetLastError();
}

}  // namespace

cudaError_t gemm_f16_mma(const GemmF16MmaArgs& a, cudaStream_t stream) {
  if (a.M == 0) return cudaSuccess;
  if (a.M < 0 || a.N <= 0 || a.K <= 0 || a.K % 8 != 0 || a.activation < 0 || a.activation > 2)
    return cudaErrorInvalidValue;
  if (!a.x || !a.w || !a.y) return cudaErrorInvalidValue;
  if ((a.M + 31) / 32 > 65535) return cudaErrorInvalidValue;  // grid.y
  if (!aligned(a.x, 16) || !aligned(a.w, 16) || !aligned(a.y, 2) || (a.bias && !aligned(a.bias, 2)) ||
      (a.residual && !aligned(a.residual, 2)))
    return cudaErrorMisalignedAddress;
  const bool pairs = a.N % 2 == 0 && aligned(a.y, 4) && (!a.residual || aligned(a.residual, 4));
  return gemm_f16_mma_tile(a.M, a.N, a.sms) == 64 ? launch<64>(a, pairs, stream) : launch<32>(a, pairs, stream);
}

}  // namespace encrt::cuda
