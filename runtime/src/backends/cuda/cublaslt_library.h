// cuBLASLt, loaded at run time (dlopen) rather than linked: libencrt then loads on machines
// without CUDA (the cuda backend reports itself unavailable there), and takes the cuBLASLt a
// machine has — CUDA 13's libcublasLt.so.13 or CUDA 12's libcublasLt.so.12 (JetPack 6, PyTorch's
// wheels), whose API for what encrt uses is the same. ENCRT_CUBLASLT=PATH names a library
// explicitly. Types and enums come from the toolkit's cublasLt.h at build time.
#pragma once

#include <cublasLt.h>

#include <string>

namespace encrt::cuda {

struct CublasLt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  std::string path;  // the library loaded
};

// The library, loaded once; null with `why` set when it cannot be found or lacks a function.
const CublasLt* cublaslt(std::string* why);

}  // namespace encrt::cuda
