// Launches the fused feed-forward block (ffn_layer_norm_kernel.cuh: the design), with or without
// the attention's output projection before it, after checking what it takes: a grid of C × ⌈M / 16⌉
// blocks in clusters of C along x, the shared memory of its plan.
#include "backends/cuda/kernels/ffn_layer_norm_kernel.cuh"
#include "backends/cuda/kernels/launch.cuh"

namespace encrt::cuda {

namespace {

using ffn_norm::ffn_layer_norm_kernel;
using ffn_norm::kBM;
using ffn_norm::kThreads;
using ffn_norm::Plan;
using ffn_norm::plan_of;

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// The kernel's dynamic shared memory is its plan's, up to the GPU's opt-in limit (the limit set).
template <int BN, bool kProject>
cudaError_t set_up() {
  return set_up_kernel_once<ffn_layer_norm_kernel<BN, kProject>>(-1);
}

template <int BN, bool kProject>
cudaError_t prepare(int H, int F, int max_cluster, int* active_clusters) {
  if (const cudaError_t e = set_up<BN, kProject>(); e != cudaSuccess) return e;
  const Plan p = plan_of(H, F, max_cluster, kProject);
  return clusters_fit(ffn_layer_norm_kernel<BN, kProject>, static_cast<unsigned>(p.cluster), kThreads, p.bytes,
                      active_clusters);
}

template <int BN, bool kProject>
cudaError_t launch(const FfnLayerNormArgs& a, cudaStream_t stream) {
  if (const cudaError_t e = set_up<BN, kProject>(); e != cudaSuccess) return e;
  const Plan p = plan_of(a.H, a.F, a.max_cluster, kProject);
  const dim3 grid(static_cast<unsigned>(p.cluster), static_cast<unsigned>((a.M + kBM - 1) / kBM));
  const cudaError_t e = launch_kernel_in_clusters(ffn_layer_norm_kernel<BN, kProject>, grid, kThreads, p.bytes,
                                                  static_cast<unsigned>(p.cluster), stream, a, p);
  return e != cudaSuccess ? e : cudaGetLastError();
}

// f(std::integral_constant<int, BN>, std::bool_constant<kProject>) for the plan's BN.
template <class F>
cudaError_t with_build(int bn, bool projection, const F& f) {
  return gemm_f16_norm::with_block_columns(bn, [&](auto columns) {
    return projection ? f(columns, std::true_type{}) : f(columns, std::false_type{});
  });
}

}  // namespace

bool ffn_layer_norm_supported(int cc_major, int H, int F, int max_shared_bytes, int max_cluster, bool projection) {
  if (cc_major < 9 || H <= 0 || F <= 0 || H % 8 != 0 || F % 8 != 0 || (max_cluster != 8 && max_cluster != 16)) return false;
  const Plan p = plan_of(H, F, max_cluster, projection);
  return p.cluster > 0 && p.bytes <= static_cast<size_t>(max_shared_bytes);
}

cudaError_t ffn_layer_norm(const FfnLayerNormArgs& a, cudaStream_t stream) {
  if (a.M == 0) return cudaSuccess;
  if (a.M < 0 || a.H <= 0 || a.F <= 0 || a.H % 8 != 0 || a.F % 8 != 0 || a.activation < 0 || a.activation > 2 ||
      (a.max_cluster != 8 && a.max_cluster != 16) || plan_of(a.H, a.F, a.max_cluster).cluster == 0 || !(a.eps >= 0.0f))
    return cudaErrorInvalidValue;
  if (!a.x || !a.w1 || !a.w2 || !a.y || !a.gamma || !a.beta) return cudaErrorInvalidValue;
  if ((a.M + kBM - 1) / kBM > 65535) return cudaErrorInvalidValue;  // grid.y
  if (!aligned(a.x, 16) || !aligned(a.w1, 16) || !aligned(a.w2, 16) || !aligned(a.y, 2) || (a.b1 && !aligned(a.b1, 2)) ||
      (a.residual && !aligned(a.residual, 2)) || (a.b2 && !aligned(a.b2, 4)) || !aligned(a.gamma, 4) ||
      !aligned(a.beta, 4))
    return cudaErrorMisalignedAddress;
  const FfnProjection& pr = a.projection;
  const bool projection = pr.in != nullptr;
  if (projection) {  // x is what the projection writes; its residual is another buffer
    if (!pr.w || !pr.gamma || !pr.beta || pr.out != a.x || (pr.residual && pr.residual == pr.out) || !(pr.eps >= 0.0f))
      return cudaErrorInvalidValue;
    if (!aligned(pr.in, 16) || !aligned(pr.w, 16) || (pr.bias && !aligned(pr.bias, 4)) ||
        (pr.residual && !aligned(pr.residual, 2)) || !aligned(pr.gamma, 4) || !aligned(pr.beta, 4))
      return cudaErrorMisalignedAddress;
  }
  return with_build(plan_of(a.H, a.F, a.max_cluster).bn, projection, [&](auto bn, auto project) {
    return launch<decltype(bn)::value, decltype(project)::value>(a, stream);
  });
}

cudaError_t ffn_layer_norm_prepare(int H, int F, int max_cluster, int* active_clusters, bool projection) {
  if (max_cluster != 8 && max_cluster != 16) return cudaErrorInvalidValue;
  return with_build(plan_of(H, F, max_cluster).bn, projection, [&](auto bn, auto project) {
    return prepare<decltype(bn)::value, decltype(project)::value>(H, F, max_cluster, active_clusters);
  });
}

}  // namespace encrt::cuda
