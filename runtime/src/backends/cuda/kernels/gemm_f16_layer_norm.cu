// Launches the fused linear + LayerNorm kernel (gemm_f16_layer_norm_kernel.cuh: the design; 64 or
// 128 rows a block: gemm_f16_layer_norm_rows_kernel.cuh) after checking what it takes: a grid of
// ⌈N / BN⌉ × ⌈M / block_rows⌉ blocks in clusters of ⌈N / BN⌉ along x.
#include "backends/cuda/kernels/gemm_f16_layer_norm_kernel.cuh"
#include "backends/cuda/kernels/gemm_f16_layer_norm_rows_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using gemm_f16_norm::gemm_f16_layer_norm_kernel;
using gemm_f16_norm::kBM;
using gemm_f16_norm::kThreads;
using gemm_f16_norm::Layout;
using gemm_f16_norm_rows::gemm_f16_layer_norm_rows_kernel;
template <int BN, int kWarps>
using RowsLayout = gemm_f16_norm_rows::Layout<BN, kWarps>;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// One build of the kernel (its function, threads, dynamic shared memory, rows a block): at session
// creation, raises its shared-memory limit and checks its clusters; at a run, launches it on
// a's rows, the kernel's arguments after (a, cluster) being `extra`.
template <auto kKernel, int BN>
cudaError_t prepare_build(int N, unsigned threads, size_t bytes, int* active_clusters) {
  if (const cudaError_t e = set_up_kernel_once<kKernel>(static_cast<int>(bytes)); e != cudaSuccess) return e;
  return clusters_fit(kKernel, static_cast<unsigned>((N + BN - 1) / BN), threads, bytes, active_clusters);
}
template <auto kKernel, int BN, class... Extra>
cudaError_t launch_build(const GemmF16LayerNormArgs& a, int rows, unsigned threads, size_t bytes, cudaStream_t stream,
                         Extra... extra) {
  if (const cudaError_t e = set_up_kernel_once<kKernel>(static_cast<int>(bytes)); e != cudaSuccess) return e;
  const int cluster = (a.N + BN - 1) / BN;
  const dim3 grid(static_cast<unsigned>(cluster), static_cast<unsigned>((a.M + rows - 1) / rows));
  const cudaError_t e =
      launch_kernel_in_clusters(kKernel, grid, threads, bytes, static_cast<unsigned>(cluster), stream, a, cluster, extra...);
  return e != cudaSuccess ? e : cudaGetLastError();
}

// The build for block_rows 16, 64 or 128 (checked by the callers; 128 rows: up to 96 columns a
// block, cudaErrorInvalidValue past them).
template <int BN>
cudaError_t prepare_any(int N, int* active_clusters, int block_rows) {
  if (block_rows == 16)
    return prepare_build<gemm_f16_layer_norm_kernel<BN>, BN>(N, kThreads, Layout<BN>::kBytes, active_clusters);
  if (block_rows == 64)
    return prepare_build<gemm_f16_layer_norm_rows_kernel<BN, 4>, BN>(N, 4 * 32, RowsLayout<BN, 4>::kBytes, active_clusters);
  if constexpr (BN <= gemm_f16_norm_rows::kMaxColumns8)
    return prepare_build<gemm_f16_layer_norm_rows_kernel<BN, 8>, BN>(N, 8 * 32, RowsLayout<BN, 8>::kBytes, active_clusters);
  return cudaErrorInvalidValue;
}
template <int BN>
cudaError_t launch_any(const GemmF16LayerNormArgs& a, cudaStream_t stream) {
  if (a.block_rows == 16)
    return launch_build<gemm_f16_layer_norm_kernel<BN>, BN>(a, kBM, kThreads, Layout<BN>::kBytes, stream);
  const bool pairs = a.N % 2 == 0 && aligned(a.y, 4) && (!a.residual || aligned(a.residual, 4));
  if (a.block_rows == 64)
    return launch_build<gemm_f16_layer_norm_rows_kernel<BN, 4>, BN>(a, 64, 4 * 32, RowsLayout<BN, 4>::kBytes, stream, pairs);
  if constexpr (BN <= gemm_f16_norm_rows::kMaxColumns8)
    return launch_build<gemm_f16_layer_norm_rows_kernel<BN, 8>, BN>(a, 128, 8 * 32, RowsLayout<BN, 8>::kBytes, stream, pairs);
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t gemm_f16_layer_norm(const GemmF16LayerNormArgs& a, cudaStream_t stream) {
  if (a.M == 0) return cudaSuccess;
  if (a.M < 0 || a.N <= 0 || a.K <= 0 || a.K % 8 != 0 || (a.max_cluster != 4 && a.max_cluster != 8 && a.max_cluster != 16) ||
      (a.block_rows != 16 && a.block_rows != 64 && a.block_rows != 128) || gemm_f16_layer_norm_columns(a.N, a.max_cluster) == 0 ||
      !(a.eps >= 0.0f))
    return cudaErrorInvalidValue;
  if (!a.x || !a.w || !a.y || !a.gamma || !a.beta || a.x == a.y) return cudaErrorInvalidValue;
  if ((a.M + a.block_rows - 1) / a.block_rows > 65535) return cudaErrorInvalidValue;  // grid.y
  if (!aligned(a.x, 16) || !aligned(a.w, 16) || !aligned(a.y, 2) || (a.residual && !aligned(a.residual, 2)) ||
      (a.bias && !aligned(a.bias, 4)) || !aligned(a.gamma, 4) || !aligned(a.beta, 4))
    return cudaErrorMisalignedAddress;
  return gemm_f16_norm::with_block_columns(gemm_f16_layer_norm_columns(a.N, a.max_cluster),
                                           [&](auto bn) { return launch_any<decltype(bn)::value>(a, stream); });
}

cudaError_t gemm_f16_layer_norm_prepare(int N, int max_cluster, int* active_clusters, int block_rows) {
  if ((max_cluster != 4 && max_cluster != 8 && max_cluster != 16) || (block_rows != 16 && block_rows != 64 && block_rows != 128))
    return cudaErrorInvalidValue;
  return gemm_f16_norm::with_block_columns(gemm_f16_layer_norm_columns(N, max_cluster), [&](auto bn) {
    return prepare_any<decltype(bn)::value>(N, active_clusters, block_rows);
  });
}

}  // namespace encrt::cuda
