// Launches the int8 tensor-core GEMM (gemm_i8_mma_kernel.cuh: the design) after checking what it
// takes, and chooses its tile and copy width.
#include "backends/cuda/kernels/gemm_i8_mma_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using mma_gemm_i8::gemm_i8_mma_kernel;
using mma_gemm_i8::kThreads;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <int BM, int BN, int kChunk>
cudaError_t launch(const GemmI8MmaArgs& a, bool pairs, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.N + BN - 1) / BN), static_cast<unsigned>((a.M + BM - 1) / BM));
  launch_kernel(gemm_i8_mma_kernel<BM, BN, kChunk>, grid, kThreads, 0, stream, a, pairs);
  return cudaGetLastError();
}

template <int kChunk>
cudaError_t launch_tile(GemmI8Tile tile, const GemmI8MmaArgs& a, bool pairs, cudaStream_t stream) {
  switch (tile) {
    case GemmI8Tile::k128: return launch<128, 128, kChunk>(a, pairs, stream);
    case GemmI8Tile::k128x64: return launch<128, 64, kChunk>(a, pairs, stream);
    case GemmI8Tile::k64: return launch<64, 64, kChunk>(a, pairs, stream);
    default: return launch<32, 32, kChunk>(a, pairs, stream);
  }
}

template <int BM, int BN>
cudaError_t resident(int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, gemm_i8_mma_kernel<BM, BN, 16>, kThreads, 0);
}

}  // namespace

cudaError_t gemm_i8_mma_resident_blocks(GemmI8Tile tile, int* blocks) {
  if (!blocks) return cudaErrorInvalidValue;
  cudaError_t e;
  switch (tile) {
    case GemmI8Tile::k128: e = resident<128, 128>(blocks); break;
    case GemmI8Tile::k128x64: e = resident<128, 64>(blocks); break;
    case GemmI8Tile::k64: e = resident<64, 64>(blocks); break;
    default: e = resident<32, 32>(blocks); break;
  }
  if (e != cudaSuccess) (void)cudaGetLastError();  // the answer, not a later launch's error
  return e;
}

cudaError_t gemm_i8_mma(const GemmI8MmaArgs& a, cudaStream_t stream) {
  if (a.M == 0) return cudaSuccess;
  if (a.M < 0 || a.N <= 0 || a.ld_w < a.N || a.Kp <= 0 || a.Kp % 4 != 0 || a.Kp > kGemmI8MmaMaxKp)
    return cudaErrorInvalidValue;
  if (!a.x || !a.w || !a.x_scale || !a.x_zero_point || !a.w_scale || !a.w_sum || !a.y) return cudaErrorInvalidValue;
  if ((a.M + 31) / 32 > 65535) return cudaErrorInvalidValue;  // grid.y
  if (!aligned(a.x, 4) || !aligned(a.w, 4)) return cudaErrorMisalignedAddress;
  const bool wide = a.Kp % 16 == 0 && aligned(a.x, 16) && aligned(a.w, 16);
  const bool pairs = a.N % 2 == 0 && aligned(a.y, 8) && (!a.residual || aligned(a.residual, 8));
  const GemmI8Tile tile = a.tile == GemmI8Tile::kAuto ? gemm_i8_mma_tile(a.M, a.N, a.sms) : a.tile;
  return wide ? launch_tile<16>(tile, a, pairs, stream) : launch_tile<4>(tile, a, pairs, stream);
}

}  // namespace encrt::cuda
