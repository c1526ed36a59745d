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

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <int BN>
cudaError_t prepare(int N, int* active_clusters) {
  if (const cudaError_t e = set_up_kernel_once<gemm_f16_layer_norm_kernel<BN>>(static_cast<int>(Layout<BN>::kBytes));
      e != cudaSuccess)
    return e;
  return clusters_fit(gemm_f16_layer_norm_kernel<BN>, static_cast<unsigned>((N + BN - 1) / BN), kThreads, Layout<BN>::kBytes,
                      active_clusters);
}

// The 64- or 128-row build (4 or 8 warps); cudaErrorInvalidValue for 128 rows past 96 columns.
template <int BN, int kWarps>
cudaError_t prepare_rows(int N, int* active_clusters) {
  if constexpr (kWarps == 8 && BN > gemm_f16_norm_rows::kMaxColumns8) {
    (void)N, (void)active_clusters;
    return cudaErrorInvalidValue;
  } else {
    using L = gemm_f16_norm_rows::Layout<BN, kWarps>;
    constexpr auto kernel = gemm_f16_layer_norm_rows_kernel<BN, kWarps>;
    if (const cudaError_t e = set_up_kernel_once<kernel>(static_cast<int>(L::kBytes)); e != cudaSuccess) return e;
    return clusters_fit(kernel, static_cast<unsigned>((N + BN - 1) / BN), kWarps * 32, L::kBytes, active_clusters);
  }
}

template <int BN>
cudaError_t launch(const GemmF16LayerNormArgs& a, cudaStream_t stream) {
  if (const cudaError_t e = set_up_kernel_once<gemm_f16_layer_norm_kernel<BN>>(static_cast<int>(Layout<BN>::kBytes));
      e != cudaSuccess)
    return e;
  const int cluster = (a.N + BN - 1) / BN;
  const dim3 grid(static_cast<unsigned>(cluster), static_cast<unsigned>((a.M + kBM - 1) / kBM));
  const cudaError_t e = launch_kernel_in_clusters(gemm_f16_layer_norm_kernel<BN>, grid, kThreads, Layout<BN>::kBytes,
                                                  static_cast<unsigned>(cluster), stream, a, cluster);
  return e != cudaSuccess ? e : cudaGetLastError();
}

template <int BN, int kWarps>
cudaError_t launch_rows(const GemmF16LayerNormArgs& a, cudaStream_t stream) {
  if constexpr (kWarps == 8 && BN > gemm_f16_norm_rows::kMaxColumns8) {
    (void)a, (void)stream;
    return cudaErrorInvalidValue;
  } else {
    using L = gemm_f16_norm_rows::Layout<BN, kWarps>;
    constexpr auto kernel = gemm_f16_layer_norm_rows_kernel<BN, kWarps>;
    if (const cudaError_t e = set_up_kernel_once<kernel>(static_cast<int>(L::kBytes)); e != cudaSuccess) return e;
    const int cluster = (a.N + BN - 1) / BN;
    const dim3 grid(static_cast<unsigned>(cluster), static_cast<unsigned>((a.M + L::kRows - 1) / L::kRows));
    const bool pairs = a.N % 2 == 0 && aligned(a.y, 4) && (!a.residual || aligned(a.residual, 4));
    const cudaError_t e = launch_kernel_in_clusters(kernel, grid, kWarps * 32, L::kBytes, static_cast<unsigned>(cluster),
                                                    stream, a, cluster, pairs);
    return e != cudaSuccess ? e : cudaGetLastError();
  }
}

// The build for block_rows 16, 64 or 128 (checked by the callers).
template <int BN>
cudaError_t launch_any(const GemmF16LayerNormArgs& a, cudaStream_t stream) {
  if (a.block_rows == 128) return launch_rows<BN, 8>(a, stream);
  if (a.block_rows == 64) return launch_rows<BN, 4>(a, stream);
  return launch<BN>(a, stream);
}
template <int BN>
cudaError_t prepare_any(int N, int* active_clusters, int block_rows) {
  if (block_rows == 128) return prepare_rows<BN, 8>(N, active_clusters);
  if (block_rows == 64) return prepare_rows<BN, 4>(N, active_clusters);
  return prepare<BN>(N, active_clusters);
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
