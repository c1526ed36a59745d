// The cuda backend's GEMM (backends/cuda/cuda_gemm.cpp) against a stand-in cuBLASLt: which
// algorithm a run of M rows takes (the one chosen for the smallest M bucket at or above it),
// and what happens where the heuristic finds nothing for a bucket or an algorithm refuses a run.
// The library is a table of function pointers (CublasLt), so these run without a GPU.
#include <catch2/catch.hpp>

#if defined(ENCRT_WITH_CUDA)

#include <cstring>
#include <map>
#include <vector>

#include "backends/cuda/cuda_gemm.h"

namespace {

using encrt::cuda::CublasLt;
using encrt::cuda::Gemm;
using encrt::cuda::GemmSpec;

// The stand-in's state: the M last set on X's layout, what the heuristic answers per M, and the
// algorithm of each matmul (its data[0], -1 for null: cuBLASLt's own choice).
struct Fake {
  uint64_t m = 0;
  std::map<uint64_t, int> found_at;  // candidates the heuristic returns at M (default 3)
  std::vector<long> matmuls;
  long refuse = -1;  // matmul with this algorithm returns NOT_SUPPORTED
  int heuristic_calls = 0;
};
Fake g_fake;
unsigned char g_handles[4];

cublasStatus_t desc_create(cublasLtMatmulDesc_t* d, cublasComputeType_t, cudaDataType_t) {
  *d = reinterpret_cast<cublasLtMatmulDesc_t>(&g_handles[0]);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_destroy(cublasLtMatmulDesc_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t desc_set(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_create(cublasLtMatrixLayout_t* l, cudaDataType, uint64_t, uint64_t, int64_t) {
  *l = reinterpret_cast<cublasLtMatrixLayout_t>(&g_handles[1]);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t layout_set(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t attr, const void* v, size_t size) {
  if (attr == CUBLASLT_MATRIX_LAYOUT_COLS && size == sizeof(uint64_t)) std::memcpy(&g_fake.m, v, size);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t preference_create(cublasLtMatmulPreference_t* p) {
  *p = reinterpret_cast<cublasLtMatmulPreference_t>(&g_handles[2]);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t preference_destroy(cublasLtMatmulPreference_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t preference_set(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}
// Candidate i at M: algorithm M · 100 + i.
cublasStatus_t heuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int requested,
                         cublasLtMatmulHeuristicResult_t* results, int* found) {
  ++g_fake.heuristic_calls;
  const auto it = g_fake.found_at.find(g_fake.m);
  const int available = it == g_fake.found_at.end() ? 3 : it->second;
  *found = std::min(requested, available);
  for (int i = 0; i < *found; ++i) {
    results[i] = cublasLtMatmulHeuristicResult_t{};
    results[i].algo.data[0] = g_fake.m * 100 + static_cast<uint64_t>(i);
    results[i].state = CUBLAS_STATUS_SUCCESS;
  }
  return *found > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}
cublasStatus_t matmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, const void*,
                      cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                      const cublasLtMatmulAlgo_t* algo, void*, size_t, cudaStream_t) {
  const long id = algo ? static_cast<long>(algo->data[0]) : -1;
  g_fake.matmuls.push_back(id);
  return id >= 0 && id == g_fake.refuse ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
}

CublasLt fake_library() {
  CublasLt lt;
  lt.desc_create = desc_create;
  lt.desc_destroy = desc_destroy;
  lt.desc_set = desc_set;
  lt.layout_create = layout_create;
  lt.layout_destroy = layout_destroy;
  lt.layout_set = layout_set;
  lt.preference_create = preference_create;
  lt.preference_destroy = preference_destroy;
  lt.preference_set = preference_set;
  lt.heuristic = heuristic;
  lt.matmul = matmul;
  lt.path = "stand-in";
  return lt;
}

GemmSpec spec_of(int max_m) {
  GemmSpec s;
  s.N = 384;
  s.K = 1536;
  s.max_M = max_m;
  s.weights = s.x = s.y = CUDA_R_16F;
  return s;
}

// The algorithm a run of M rows took.
long algorithm_of_run(Gemm& gemm, int M) {
  g_fake.matmuls.clear();
  int dummy = 0;
  REQUIRE(gemm.run(M, &dummy, &dummy, nullptr, &dummy, nullptr, nullptr));
  REQUIRE(!g_fake.matmuls.empty());
  return g_fake.matmuls.back();
}

}  // namespace

TEST_CASE("cuda GEMM: a run takes the algorithm chosen for the smallest M bucket at or above its rows",
          "[cuda_gemm]") {
  g_fake = Fake{};
  const CublasLt lt = fake_library();
  Gemm gemm;
  REQUIRE(gemm.init(&lt, nullptr, spec_of(4096)));
  CHECK(g_fake.heuristic_calls == 9);  // 16, 32, ..., 2048, and 4096
  CHECK(algorithm_of_run(gemm, 1) == 1600);
  CHECK(algorithm_of_run(gemm, 16) == 1600);
  CHECK(algorithm_of_run(gemm, 17) == 3200);
  CHECK(algorithm_of_run(gemm, 128) == 12800);
  CHECK(algorithm_of_run(gemm, 129) == 25600);
  CHECK(algorithm_of_run(gemm, 2049) == 409600);
  CHECK(algorithm_of_run(gemm, 4096) == 409600);
  CHECK(algorithm_of_run(gemm, 5000) == -1);  // past the plan (the backend never runs it): cuBLASLt's own

  SECTION("a planned maximum that is not a power of two is a bucket of its own") {
    g_fake = Fake{};
    Gemm odd;
    REQUIRE(odd.init(&lt, nullptr, spec_of(1184)));
    CHECK(algorithm_of_run(odd, 1024) == 102400);
    CHECK(algorithm_of_run(odd, 1025) == 118400);
    CHECK(algorithm_of_run(odd, 1184) == 118400);
  }
  SECTION("a bucket the heuristic has nothing for is served by the next one") {
    g_fake = Fake{};
    g_fake.found_at[64] = 0;
    Gemm holes;
    REQUIRE(holes.init(&lt, nullptr, spec_of(4096)));
    CHECK(algorithm_of_run(holes, 40) == 12800);
    CHECK(algorithm_of_run(holes, 32) == 3200);
  }
  SECTION("no algorithm for the planned maximum: refused at init, with the shape") {
    g_fake = Fake{};
    g_fake.found_at[4096] = 0;
    Gemm none;
    const encrt::Status s = none.init(&lt, nullptr, spec_of(4096));
    CHECK(!s);
    CHECK(s.message().find("4096x384x1536") != std::string::npos);
  }
  SECTION("an algorithm that refuses the run's M: the run retries with cuBLASLt's own choice") {
    g_fake.refuse = 12800;
    g_fake.matmuls.clear();
    int dummy = 0;
    REQUIRE(gemm.run(100, &dummy, &dummy, nullptr, &dummy, nullptr, nullptr));
    CHECK(g_fake.matmuls == std::vector<long>{12800, -1});
  }
}

#endif  // ENCRT_WITH_CUDA
