// One linear layer on cuBLASLt: Y[M, N] = X[M, K] · W[N, K]ᵀ (+ bias) (+ residual), row-major
// activations and [N, K] weights. In cuBLASLt's column-major terms that is the TN form
// D (N×M) = op(A)ᵀ · B with A = W as a K×N matrix (transposed) and B = X as K×M, which every
// architecture's fp16, fp32 and int8 kernels take (Hopper has no COL32 layouts). Descriptors and
// layouts are made once; a run only sets M on them, which allocates nothing.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "backends/cuda/cublaslt_library.h"
#include "encrt/status.hpp"

namespace encrt::cuda {

// int8 (compute CUBLAS_COMPUTE_32I): weights and x CUDA_R_8I, y CUDA_R_32I, scale type CUDA_R_32I
// (alpha 1, beta 0 as int32), no bias or residual (encrt's epilogue kernel applies them), and
// cuBLASLt's IMMA requirements for the regular (COL) ordering: TN, N and K multiples of 4 (the
// leading dimensions then are), 4-byte aligned pointers (16 preferred: the arena gives 256).
struct GemmSpec {
  int N = 0, K = 0, max_M = 0;
  cudaDataType_t weights = CUDA_R_32F;
  cudaDataType_t x = CUDA_R_32F;
  cudaDataType_t y = CUDA_R_32F;  // also the residual's and the bias's type
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  const void* bias = nullptr;  // [N] of type y, or null
  bool residual = false;       // Y = ... + residual (cuBLASLt's C with beta = 1)
  // GELU in cuBLASLt's epilogue (CUBLASLT_EPILOGUE_GELU[_BIAS], after the bias, before a residual
  // would be added: never asked together with one): backend option gelu=cublaslt only. NVIDIA
  // does not document its formula; encrt's own GELU kernel is the exact one (erf).
  bool gelu = false;
  size_t workspace_bytes = 0;
};

class Gemm {
 public:
  Gemm() = default;
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm();

  Status init(const CublasLt* lt, cublasLtHandle_t handle, const GemmSpec& spec);
  // residual: [M, N] of type y, or null when the spec has none.
  Status run(int M, const void* weights, const void* x, const void* residual, void* y, void* workspace,
             cudaStream_t stream);

 private:
  Status set_m(int M);
  // The matmul with the algorithm given (null: cuBLASLt's).
  cublasStatus_t matmul(const void* weights, const void* x, const void* residual, void* y,
                        const cublasLtMatmulAlgo_t* algo, void* workspace, cudaStream_t stream);
  bool integer() const { return spec_.compute == CUBLAS_COMPUTE_32I; }

  const CublasLt* lt_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  GemmSpec spec_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, cd_ = nullptr;
  // Algorithms chosen by cuBLASLt's heuristic at init for M = 16, 32, 64, ... below max_M, and
  // max_M: a run takes the one chosen for the smallest of those sizes at or above its M (a
  // session planned for batch 32 that runs batch 1 gets batch 1's GEMM tiles, not batch 32's),
  // cuBLASLt's own choice when that one refuses the shape. Fixed at init: a run allocates nothing.
  static constexpr int kMaxBuckets = 24;  // 16 · 2^22 rows: past any arena
  struct Bucket {
    int max_m = 0;
    cublasLtMatmulAlgo_t algo{};
  };
  Bucket buckets_[kMaxBuckets];
  int bucket_count_ = 0;
};

}  // namespace encrt::cuda
