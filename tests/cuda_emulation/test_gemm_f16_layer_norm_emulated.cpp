// The fused linear + LayerNorm kernel's own source (gemm_f16_layer_norm_kernel.cuh) run on the host
// under warp_emulation.h, the blocks of each thread-block cluster together (launch_clusters: their
// own shared memory, distributed shared memory between them, the cluster's barrier), against
// LayerNorm(x · wᵀ + bias + residual) · gamma + beta in double on the same fp16 inputs: every
// block width (24, 32, 48, 64, 96, 128 columns; clusters of 1 to 16 blocks, the last one partial), M
// across 16-row tiles (1, 16, 37), K inside one 128-value stage and across many (8, 200, 1544),
// with and without bias and residual, and the residual being the output itself (in place). This
// checks the tiling, the split of K over the warps, the sums over the warps and over the cluster,
// and the masking of rows and columns past the ends; the same kernel on a GPU is the conformance
// suite's (fp16 models under fp16_gemm=mma on sm_90).
//
// Bound: z = x·wᵀ + bias + residual in fp32 is within E = 2^-22·K·Σ|x·w| + 2^-21·|z| of z in double,
// the statistics over N values within N·2^-23 relative; y's error is then within
// 2^-11·|y| (the final rounding) + |gamma|·(3·E_max/σ + 2^-13·|ẑ|) + 2^-24, σ the row's standard
// deviation (sqrt(var + eps)) and ẑ the normalized value. An indexing mistake moves y by O(|gamma|).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <sstream>
#include <vector>

#include "cuda_emulation/fp16_rows.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/gemm_f16_layer_norm_kernel.cuh"
#include "backends/cuda/kernels/gemm_f16_layer_norm_rows_kernel.cuh"
#include "core/half.h"

namespace {

using encrt::cuda::GemmF16LayerNormArgs;
using encrt::cuda::gemm_f16_layer_norm_columns;

using encrt::emulation::check_no_store_past;
using encrt::emulation::check_normalized_row;
using encrt::emulation::Halves;
using encrt::emulation::kGuard;
using encrt::emulation::kSentinel;

struct Case {
  int M = 1, N = 32, K = 8, max_cluster = 8, block_rows = 16;
  bool bias = true, residual = true, in_place = false;
  bool odd_y = false;  // y (and an in-place residual) one fp16 value past a 4-byte boundary: no pairs
  std::string describe() const {
    std::ostringstream s;
    s << "M " << M << " N " << N << " K " << K << (bias ? " bias" : "") << (residual ? " residual" : "")
      << (in_place ? " in place" : "") << (odd_y ? " y 2-byte aligned" : "") << " clusters of up to " << max_cluster
      << ", " << block_rows << " rows a block";
    return s.str();
  }
};

// The 16-row build (gemm_f16_layer_norm_kernel.cuh) or the 64- or 128-row one
// (gemm_f16_layer_norm_rows_kernel.cuh, 4 or 8 warps), by a.block_rows, with the launcher's grid
// and pairs.
void run_kernel(const GemmF16LayerNormArgs& a) {
  namespace norm = encrt::cuda::gemm_f16_norm;
  namespace rows = encrt::cuda::gemm_f16_norm_rows;
  const int bn = gemm_f16_layer_norm_columns(a.N, a.max_cluster);
  const int cluster = (a.N + bn - 1) / bn;
  const int block_rows = a.block_rows == 64 || a.block_rows == 128 ? a.block_rows : norm::kBM;
  const encrt::emulation::Index grid{static_cast<unsigned>(cluster), static_cast<unsigned>((a.M + block_rows - 1) / block_rows), 1};
  const auto aligned4 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 == 0; };
  const bool pairs = a.N % 2 == 0 && aligned4(a.y) && (!a.residual || aligned4(a.residual));
  auto go = [&](auto bn_constant) {
    constexpr int BN = decltype(bn_constant)::value;
    if constexpr (BN <= rows::kMaxColumns8) {
      if (block_rows == 128) {
        encrt::emulation::launch_clusters(grid, cluster, 8 * 32, rows::Layout<BN, 8>::kBytes,
                                          [&] { rows::gemm_f16_layer_norm_rows_kernel<BN, 8>(a, cluster, pairs); });
        return cudaSuccess;
      }
    }
    REQUIRE(block_rows != 128);  // (128 rows: up to 96 columns a block)
    if (block_rows == 64)
      encrt::emulation::launch_clusters(grid, cluster, norm::kThreads, rows::Layout<BN>::kBytes,
                                        [&] { rows::gemm_f16_layer_norm_rows_kernel<BN>(a, cluster, pairs); });
    else
      encrt::emulation::launch_clusters(grid, cluster, norm::kThreads, norm::Layout<BN>::kBytes,
                                        [&] { norm::gemm_f16_layer_norm_kernel<BN>(a, cluster); });
    return cudaSuccess;
  };
  norm::with_block_columns(bn, go);
}

void check_case(const Case& c) {
  INFO(c.describe());
  const int M = c.M, N = c.N, K = c.K;
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + N * 131 + K * 17 + (c.bias ? 1 : 0) + (c.in_place ? 2 : 0)));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto h = [](float f) { return encrt::float_to_half(f); };
  Halves x(static_cast<size_t>(M) * K), w(static_cast<size_t>(N) * K), residual(static_cast<size_t>(M) * N);
  std::vector<float> bias(static_cast<size_t>(N)), gamma(static_cast<size_t>(N)), beta(static_cast<size_t>(N));
  // Values of a few magnitudes, and a per-column offset, so that a row's mean is far from 0 and a
  // column's place matters.
  for (size_t i = 0; i < x.size; ++i) x.data()[i] = h(u(rng) * (i % 7 == 0 ? 8.0f : 1.0f));
  for (size_t i = 0; i < w.size; ++i) w.data()[i] = h(u(rng) * 0.25f);
  for (size_t i = 0; i < residual.size; ++i) residual.data()[i] = h(2.0f * u(rng) + 3.0f);
  for (int n = 0; n < N; ++n) {
    bias[static_cast<size_t>(n)] = u(rng) + 0.01f * static_cast<float>(n % 13);
    gamma[static_cast<size_t>(n)] = 1.0f + 0.5f * u(rng);
    beta[static_cast<size_t>(n)] = 0.2f * u(rng);
  }
  const float eps = 1e-12f;

  const size_t y0 = c.odd_y ? 1 : 0;  // y's first value in the buffer
  Halves y(y0 + static_cast<size_t>(M) * N + kGuard, kSentinel);
  if (c.in_place) std::memcpy(y.data() + y0, residual.data(), residual.size * 2);
  GemmF16LayerNormArgs a;
  a.M = M;
  a.N = N;
  a.K = K;
  a.x = x.data();
  a.w = w.data();
  a.bias = c.bias ? bias.data() : nullptr;
  a.residual = c.in_place ? y.data() + y0 : c.residual ? residual.data() : nullptr;
  a.gamma = gamma.data();
  a.beta = beta.data();
  a.eps = eps;
  a.y = y.data() + y0;
  a.max_cluster = c.max_cluster;
  a.block_rows = c.block_rows;
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(x.data(), x.size * 2);
  encrt::emulation::allow_reads(w.data(), w.size * 2);
  run_kernel(a);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x and w

  const bool with_residual = c.residual || c.in_place;
  int failures = 0;
  std::vector<double> z(static_cast<size_t>(N)), error(static_cast<size_t>(N));
  for (int m = 0; m < M && failures < 5; ++m) {
    for (int n = 0; n < N; ++n) {
      double sum = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(x.at(static_cast<size_t>(m) * K + k)) * w.at(static_cast<size_t>(n) * K + k);
        sum += p;
        magnitude += std::fabs(p);
      }
      if (c.bias) sum += bias[static_cast<size_t>(n)];
      if (with_residual) sum += residual.at(static_cast<size_t>(m) * N + n);
      z[static_cast<size_t>(n)] = sum;
      error[static_cast<size_t>(n)] = std::ldexp(magnitude, -22) * K + std::ldexp(std::fabs(sum), -21);
    }
    failures += check_normalized_row(z, error, gamma.data(), beta.data(), eps, y, y0 + static_cast<size_t>(m) * N, m,
                                     5 - failures);
  }
  check_no_store_past(y, y0 + static_cast<size_t>(M) * N);
  if (c.odd_y) CHECK(y.data()[0] == kSentinel);  // nothing stored before y
  CHECK(failures == 0);
}

// Every (N, M) of the lists at block_rows rows a block, K inside one stage and across several, with
// and without bias and residual.
void check_widths(int block_rows, std::initializer_list<int> widths, std::initializer_list<int> rows) {
  int index = 0;
  for (int N : widths)
    for (int M : rows) {
      Case c;
      c.block_rows = block_rows;
      c.M = M, c.N = N;
      c.K = index % 3 == 0 ? 8 : index % 3 == 1 ? 200 : 384;
      c.bias = index % 4 != 3;
      c.residual = index % 5 != 4;
      ++index;
      check_case(c);
    }
}

}  // namespace

TEST_CASE("cuda emulation: fused linear + LayerNorm in clusters, every block width, against double",
          "[cuda_emulation][gemm_f16_layer_norm]") {
  // N: 100 (24 columns a block, 5 blocks, the last partial), 256 (32, 8 full), 384 (MiniLM: 48, 8),
  // 500 (64, 8, partial), 600 (96, 7, partial), 1000 (128, 8, partial).
  check_widths(16, {100, 256, 384, 500, 600, 1000}, {1, 16, 37});
}

TEST_CASE("cuda emulation: fused linear + LayerNorm over a long K, and in place on its residual",
          "[cuda_emulation][gemm_f16_layer_norm]") {
  Case c;
  c.M = 37, c.N = 384, c.K = 1544;  // MiniLM's FFN down projection (K 1536), plus a partial stage
  check_case(c);
  c.K = 384;
  c.in_place = true;  // post-norm's LayerNorm writes over the linear's output, and the residual may be it
  check_case(c);
  c.bias = false, c.residual = false, c.in_place = false;
  check_case(c);
}

TEST_CASE("cuda emulation: fused linear + LayerNorm in clusters of 16", "[cuda_emulation][gemm_f16_layer_norm]") {
  Case c;
  c.max_cluster = 16;
  c.M = 16, c.N = 384, c.K = 1544;  // MiniLM's down projection: 16 blocks of 24 columns
  check_case(c);
  c.M = 5, c.N = 376, c.K = 200;  // 16 blocks, the last partial (16 columns)
  check_case(c);
}

TEST_CASE("cuda emulation: fused linear + LayerNorm in clusters of 4", "[cuda_emulation][gemm_f16_layer_norm]") {
  // norm_cluster=4: MiniLM's 384 columns in 4 blocks of 96 (each row of x read by 4 blocks, not 8),
  // at 16 and 64 rows a block; 300 columns: the last block partial (12 columns).
  for (int block_rows : {16, 64}) {
    Case c;
    c.max_cluster = 4;
    c.block_rows = block_rows;
    c.M = 70, c.N = 384, c.K = 1544;
    check_case(c);
    c.M = 17, c.N = 300, c.K = 200;
    c.in_place = true;
    check_case(c);
  }
}

TEST_CASE("cuda emulation: fused linear + LayerNorm block widths", "[cuda_emulation][gemm_f16_layer_norm]") {
  CHECK(gemm_f16_layer_norm_columns(384, 4) == 96);  // MiniLM under norm_cluster=4
  CHECK(gemm_f16_layer_norm_columns(768, 4) == 0);   // BERT-base: no block width (clusters of 8 then)
  CHECK(gemm_f16_layer_norm_columns(1) == 24);
  CHECK(gemm_f16_layer_norm_columns(192) == 24);
  CHECK(gemm_f16_layer_norm_columns(193) == 32);
  CHECK(gemm_f16_layer_norm_columns(256) == 32);
  CHECK(gemm_f16_layer_norm_columns(384, 16) == 24);  // MiniLM: a cluster of 16
  CHECK(gemm_f16_layer_norm_columns(2048, 16) == 128);
  // MiniLM at batch 1 on an H200: 8 clusters of 16, if the GPU runs 8 of them at once; 7 (one
  // GPC short) would leave the eighth for a second wave: clusters of 8 then.
  CHECK(encrt::cuda::gemm_f16_layer_norm_cluster_for(128, 132, 8) == 16);
  CHECK(encrt::cuda::gemm_f16_layer_norm_cluster_for(128, 132, 7) == 8);
  CHECK(encrt::cuda::gemm_f16_layer_norm_cluster_for(128, 132, 0) == 8);  // unknown: never 16
  CHECK(encrt::cuda::gemm_f16_layer_norm_cluster_for(256, 132, 16) == 8);  // 256 blocks: more than the SMs
  CHECK(gemm_f16_layer_norm_columns(257) == 48);
  CHECK(gemm_f16_layer_norm_columns(384) == 48);  // MiniLM: a cluster of 8
  CHECK(gemm_f16_layer_norm_columns(768) == 96);  // BERT-base: 8
  CHECK(gemm_f16_layer_norm_columns(1024) == 128);
  CHECK(gemm_f16_layer_norm_columns(1025) == 0);
  CHECK_FALSE(encrt::cuda::gemm_f16_layer_norm_supported(8, 384, 384));  // Orin (sm_87): no clusters
  CHECK(encrt::cuda::gemm_f16_layer_norm_supported(9, 384, 1536));
  CHECK_FALSE(encrt::cuda::gemm_f16_layer_norm_supported(9, 384, 100));  // K not a multiple of 8
}

// The 64-row build: M across 64-row tiles and inside one (1, 64, 100, 130: a warp's 16 rows partly
// and wholly past M), every block width, odd N (column pairs stored one by one), clusters of 16,
// in place, and MiniLM's down projection at a partial stage.
TEST_CASE("cuda emulation: fused linear + LayerNorm at 64 rows a block, against double",
          "[cuda_emulation][gemm_f16_layer_norm]") {
  check_widths(64, {100, 256, 384, 501, 600, 1000}, {1, 64, 100, 130});
  Case c;
  c.block_rows = 64;
  c.M = 70, c.N = 384, c.K = 1544;  // MiniLM's FFN down projection, plus a partial stage
  check_case(c);
  c.K = 384;
  c.in_place = true;
  check_case(c);
  c.max_cluster = 16;  // 16 blocks of 24 columns
  check_case(c);
  c.odd_y = true;  // even N, y 2-byte aligned: each column stored (and read in place) alone
  check_case(c);
  c.in_place = false, c.odd_y = false;
  c.M = 5, c.N = 375, c.K = 200;  // 16 blocks, the last partial (15 columns: an odd last pair)
  check_case(c);
}

// The 128-row build (8 warps, up to 96 columns a block): M inside and across 128-row tiles, the
// widths up to 96 columns (clusters of 8 and of 4), in place, MiniLM's down projection.
TEST_CASE("cuda emulation: fused linear + LayerNorm at 128 rows a block, against double",
          "[cuda_emulation][gemm_f16_layer_norm]") {
  check_widths(128, {100, 256, 384, 501, 600}, {1, 100, 130});
  Case c;
  c.block_rows = 128;
  c.M = 200, c.N = 384, c.K = 1544;
  check_case(c);
  c.max_cluster = 4;  // 4 blocks of 96 columns
  c.K = 384;
  c.in_place = true;
  check_case(c);
  c.max_cluster = 16;  // 16 blocks of 24
  c.in_place = false, c.odd_y = true;
  check_case(c);
}

TEST_CASE("cuda emulation: fused linear + LayerNorm rows a block", "[cuda_emulation][gemm_f16_layer_norm]") {
  using encrt::cuda::gemm_f16_layer_norm_rows;
  CHECK(gemm_f16_layer_norm_rows(128, 384, 8, 132) == 16);   // MiniLM, batch 1: 2 × 8 blocks of 64 rows
  CHECK(gemm_f16_layer_norm_rows(4096, 384, 8, 132) == 64);  // batch 32: 64 × 8
  CHECK(gemm_f16_layer_norm_rows(1184, 384, 8, 132) == 64);  // 19 × 8 = 152
  CHECK(gemm_f16_layer_norm_rows(1024, 384, 8, 132) == 16);  // 16 × 8 = 128 < 132
  CHECK(gemm_f16_layer_norm_rows(1024, 384, 16, 132) == 64);  // 16 × 16
  CHECK(gemm_f16_layer_norm_rows(4096, 2048, 8, 132) == 16);  // no block width: never 64
}
