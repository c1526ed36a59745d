#include "backends/cuda/cuda_gemm.h"

#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_status.h"

namespace encrt::cuda {

Gemm::~Gemm() {
  if (!lt_) return;
  if (desc_) lt_->desc_destroy(desc_);
  for (cublasLtMatrixLayout_t l : {a_, b_, cd_})
    if (l) lt_->layout_destroy(l);
}

Status Gemm::set_m(int M) {
  const uint64_t cols = static_cast<uint64_t>(M);
  if (Status s = cublas_status(lt_->layout_set(b_, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof(cols)), "setting M"); !s)
    return s;
  return cublas_status(lt_->layout_set(cd_, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof(cols)), "setting M");
}

Status Gemm::init(const CublasLt* lt, cublasLtHandle_t handle, const GemmSpec& spec) {
  lt_ = lt;
  handle_ = handle;
  spec_ = spec;
  const uint64_t N = static_cast<uint64_t>(spec.N), K = static_cast<uint64_t>(spec.K);
  const uint64_t M = static_cast<uint64_t>(spec.max_M);
  if (integer()) {
    if (spec.weights != CUDA_R_8I || spec.x != CUDA_R_8I || spec.y != CUDA_R_32I || spec.bias || spec.residual)
      return internal_error("cuda: an int32-accumulating GEMM takes int8 operands into int32, with no epilogue");
    if (spec.N % 4 != 0 || spec.K % 4 != 0)
      return unsupported("cuda: cuBLASLt's int8 GEMM needs N and K multiples of 4, got N " + std::to_string(spec.N) +
                         ", K " + std::to_string(spec.K));
  }
  const cudaDataType_t scale_type = integer() ? CUDA_R_32I : CUDA_R_32F;
  if (Status s = cublas_status(lt->desc_create(&desc_, spec.compute, scale_type), "cublasLtMatmulDescCreate"); !s) return s;
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  if (Status s = cublas_status(lt->desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)), "TRANSA"); !s)
    return s;
  if (Status s = cublas_status(lt->desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)), "TRANSB"); !s)
    return s;
  if (spec.gelu && spec.residual) return internal_error("cuda: cuBLASLt's GELU epilogue comes before a residual");
  if (spec.bias || spec.gelu) {
    const cublasLtEpilogue_t epilogue = spec.gelu ? (spec.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
                                                  : CUBLASLT_EPILOGUE_BIAS;
    const int32_t bias_type = spec.y;
    Status s = cublas_status(lt->desc_set(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "EPILOGUE");
    if (s && spec.bias)
      s = cublas_status(lt->desc_set(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &spec.bias, sizeof(spec.bias)), "BIAS_POINTER");
    if (s && spec.bias)
      s = cublas_status(lt->desc_set(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)), "BIAS_DATA_TYPE");
    if (!s) return s;
  }
  Status s = cublas_status(lt->layout_create(&a_, spec.weights, K, N, static_cast<int64_t>(K)), "layout of W");
  if (s) s = cublas_status(lt->layout_create(&b_, spec.x, K, M, static_cast<int64_t>(K)), "layout of X");
  if (s) s = cublas_status(lt->layout_create(&cd_, spec.y, N, M, static_cast<int64_t>(N)), "layout of Y");
  if (!s) return s;

  cublasLtMatmulPreference_t pref = nullptr;
  if (Status st = cublas_status(lt->preference_create(&pref), "cublasLtMatmulPreferenceCreate"); !st) return st;
  const uint64_t ws = spec.workspace_bytes;
  s = cublas_status(lt->preference_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), "workspace preference");
  bucket_count_ = 0;
  bool have_max = false;
  for (int m = 16;; m *= 2) {
    const bool last = m >= spec.max_M || bucket_count_ == kMaxBuckets - 1;
    const int size = last ? spec.max_M : m;
    s = set_m(size);
    if (!s) break;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t h = lt->heuristic(handle, desc_, a_, b_, cd_, cd_, pref, 1, &result, &found);
    if (h == CUBLAS_STATUS_SUCCESS && found > 0) {
      buckets_[bucket_count_++] = Bucket{size, result.algo};
      have_max = have_max || last;
    }
    if (last) break;
  }
  lt->preference_destroy(pref);
  if (!s) return s;
  if (!have_max)
    return unsupported("cuda: cuBLASLt has no algorithm for a " + std::to_string(spec.max_M) + "x" +
                       std::to_string(spec.N) + "x" + std::to_string(spec.K) + " GEMM of these types");
  return Status::ok();
}

cublasStatus_t Gemm::matmul(const void* weights, const void* x, const void* residual, void* y,
                            const cublasLtMatmulAlgo_t* algo, void* workspace, cudaStream_t stream) {
  // alpha and beta in the scale type: int32 for int8 GEMMs, else fp32.
  const float alpha_f = 1.0f, beta_f = spec_.residual ? 1.0f : 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const void* alpha = integer() ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = integer() ? static_cast<const void*>(&beta_i) : &beta_f;
  const void* c = spec_.residual ? residual : y;
  return lt_->matmul(handle_, desc_, alpha, weights, a_, x, b_, beta, c, cd_, y, cd_, algo, workspace,
                     spec_.workspace_bytes, stream);
}

Status Gemm::run(int M, const void* weights, const void* x, const void* residual, void* y, void* workspace,
                 cudaStream_t stream) {
  if (M == 0) return Status::ok();
  if (Status s = set_m(M); !s) return s;
  const cublasLtMatmulAlgo_t* algo = nullptr;  // past every bucket (M > max_M: refused by the caller): cuBLASLt's
  for (int b = 0; b < bucket_count_ && !algo; ++b)
    if (M <= buckets_[b].max_m) algo = &buckets_[b].algo;
  cublasStatus_t st = matmul(weights, x, residual, y, algo, workspace, stream);
  if (st == CUBLAS_STATUS_INVALID_VALUE || st == CUBLAS_STATUS_NOT_SUPPORTED)  // the algorithm refuses this M
    st = matmul(weights, x, residual, y, nullptr, workspace, stream);
  if (st == CUBLAS_STATUS_SUCCESS) return Status::ok();
  const std::string what = "cublasLtMatmul (" + std::to_string(M) + "x" + std::to_string(spec_.N) + "x" +
                           std::to_string(spec_.K) + ")";
  return cublas_status(st, what.c_str());
}

}  // namespace encrt::cuda
