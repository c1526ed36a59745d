// The CUDA launchers' own checks, run without a GPU: what a launcher refuses (bad arguments,
// misaligned pointers, a build it does not have) it refuses before it touches the device, so these
// run on any machine with the CUDA code built. The kernels themselves are checked under emulation
// (tests/cuda_emulation/), which calls them with the launchers' grids but not through the
// launchers; on a GPU by the conformance suite.
#include <catch2/catch.hpp>

#if defined(ENCRT_WITH_CUDA)

#include <cstdint>
#include <vector>

#include "backends/cuda/kernels/cuda_kernels.h"

using encrt::cuda::gemm_f16_layer_norm;
using encrt::cuda::gemm_f16_layer_norm_prepare;
using encrt::cuda::GemmF16LayerNormArgs;

namespace {

// Arguments the launcher takes: MiniLM's output projection on 4 rows (N 384, K 384), every
// pointer 16-byte aligned.
struct LinearNormBuffers {
  std::vector<uint4> x = std::vector<uint4>(4 * 384 / 8), w = std::vector<uint4>(384 * 384 / 8),
                     y = std::vector<uint4>(4 * 384 / 8 + 1), residual = std::vector<uint4>(4 * 384 / 8 + 1);
  std::vector<float> bias = std::vector<float>(384), gamma = std::vector<float>(384, 1.0f),
                     beta = std::vector<float>(384);
  GemmF16LayerNormArgs args() {
    GemmF16LayerNormArgs a;
    a.M = 4, a.N = 384, a.K = 384;
    a.x = x.data(), a.w = w.data(), a.y = y.data(), a.residual = residual.data();
    a.bias = bias.data(), a.gamma = gamma.data(), a.beta = beta.data();
    a.eps = 1e-12f;
    return a;
  }
};

}  // namespace

TEST_CASE("cuda launchers: the fused linear + LayerNorm launcher refuses what it cannot run, before the device",
          "[cuda_launch]") {
  LinearNormBuffers b;
  GemmF16LayerNormArgs a = b.args();
  SECTION("no rows: nothing to do") {
    a.M = 0;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaSuccess);
  }
  SECTION("rows a block other than 16, 64 and 128") {
    a.block_rows = 32;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    CHECK(gemm_f16_layer_norm_prepare(384, 8, nullptr, 32) == cudaErrorInvalidValue);
  }
  SECTION("clusters other than 4, 8 and 16 blocks") {
    a.max_cluster = 5;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    CHECK(gemm_f16_layer_norm_prepare(384, 5) == cudaErrorInvalidValue);
  }
  SECTION("128 rows a block past 96 columns a block (its stages would not fit)") {
    a.N = 1000;  // 128 columns a block in clusters of 8
    a.block_rows = 128;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    CHECK(gemm_f16_layer_norm_prepare(1000, 8, nullptr, 128) == cudaErrorInvalidValue);
  }
  SECTION("a row wider than the clusters take") {
    CHECK(gemm_f16_layer_norm_prepare(768, 4) == cudaErrorInvalidValue);  // BERT-base: no block width in 4
    a.N = 1025;
    a.max_cluster = 8;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
  }
  SECTION("a grid taller than CUDA's 65535 blocks, counted in the launch's own rows") {
    a.block_rows = 16;
    a.M = 16 * 65535 + 1;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    a.block_rows = 128;
    a.M = 128 * 65535 + 1;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
  }
  SECTION("misaligned operands") {
    a.block_rows = 64;
    a.x = reinterpret_cast<const char*>(b.x.data()) + 2;  // x is read 16 bytes at a time
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorMisalignedAddress);
    a = b.args();
    a.residual = reinterpret_cast<const char*>(b.residual.data()) + 1;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorMisalignedAddress);
  }
  SECTION("missing or overlapping operands") {
    a.gamma = nullptr;
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    a = b.args();
    a.x = a.y;  // y may be the residual, never x
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
    a = b.args();
    a.K = 100;  // not a multiple of 8
    CHECK(gemm_f16_layer_norm(a, nullptr) == cudaErrorInvalidValue);
  }
}

#endif  // ENCRT_WITH_CUDA
