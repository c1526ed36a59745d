// The fp16 tensor-core GEMM's own source (gemm_f16_mma_kernel.cuh) run on the host under
// warp_emulation.h (mma.sync m16n8k16 from the PTX fragment table, cp.async bounds-checked and
// landing at its wait) against the same linear in double on the same fp16 inputs: M = 1, 7, 65, 130 (partial
// 16-row fragments and block tiles), N = 2, 36, 390 and an odd 37 (partial n8 tiles and blocks,
// the column-pair and single stores), K = 8, 40, 384, 1544 (K tails inside a 32-value stage; 1544
// spans 49 stages, more than either ring holds), both tiles (64 and 32), bias, ReLU/GELU and the
// residual, NaN kept by ReLU. This checks the fragment indexing (and the permuted k order), the
// ring of stages and the masking on every build; the same kernel on a GPU is the conformance
// suite's (tests/backend/test_ops.cpp, fp16 linear problems under fp16_gemm=mma).
//
// Bound: the kernel sums fp16 products in fp32 (each product exact) and rounds to fp16 once, so
// |y − ref| ≤ 2^-11·|ref| (the final rounding, to nearest) + K·2^-23·Σ|x·w| (fp32 sums, a loose
// bound for any order) + the epilogue's few fp32 roundings; checked against 2^-11·|ref| +
// 2^-22·K·Σ|x·w| + 2^-24 (fp16's smallest subnormal step is 2^-24).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "cuda_emulation/fp16_rows.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/gemm_f16_mma_kernel.cuh"
#include "core/half.h"

namespace {

using encrt::cuda::GemmF16MmaArgs;

using encrt::emulation::check_no_store_past;
using encrt::emulation::Halves;
using encrt::emulation::kGuard;
using encrt::emulation::kSentinel;

struct Case {
  int M = 1, N = 2, K = 8, tile = 64;
  bool bias = true, residual = false, nan = false;
  int activation = 0;
  std::string describe() const {
    std::ostringstream s;
    s << "M " << M << " N " << N << " K " << K << " tile " << tile << (bias ? " bias" : "") << (residual ? " residual" : "")
      << (nan ? " NaN" : "") << " act " << activation;
    return s.str();
  }
};

void run_kernel(const Case& c, const GemmF16MmaArgs& a, bool pairs) {
  using namespace encrt::cuda::mma_gemm_f16;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.N + c.tile - 1) / c.tile),
                                     static_cast<unsigned>((a.M + c.tile - 1) / c.tile), 1};
  if (c.tile == 64)
    encrt::emulation::launch(grid, kThreads, [&] { gemm_f16_mma_kernel<64, 64>(a, pairs); });
  else
    encrt::emulation::launch(grid, kThreads, [&] { gemm_f16_mma_kernel<32, 32>(a, pairs); });
}

double activate(double v, int activation) {
  if (activation == 1) return std::isnan(v) ? v : v > 0.0 ? v : 0.0;
  if (activation == 2) return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  return v;
}

void check_case(const Case& c) {
  INFO(c.describe());
  const int M = c.M, N = c.N, K = c.K;
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + N * 131 + K * 17 + c.tile));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto h = [](float f) { return encrt::float_to_half(f); };
  Halves x(static_cast<size_t>(M) * K), w(static_cast<size_t>(N) * K), bias(static_cast<size_t>(N));
  Halves residual(static_cast<size_t>(M) * N);
  // Values of a few magnitudes, so that sums cancel and fp16's rounding of the output matters.
  for (size_t i = 0; i < x.size; ++i) x.data()[i] = h(u(rng) * (i % 7 == 0 ? 8.0f : 1.0f));
  for (size_t i = 0; i < w.size; ++i) w.data()[i] = h(u(rng) * 0.25f);
  for (size_t i = 0; i < bias.size; ++i) bias.data()[i] = h(u(rng));
  for (size_t i = 0; i < residual.size; ++i) residual.data()[i] = h(2.0f * u(rng));
  if (c.nan) x.data()[0] = 0x7e00u;  // row 0's first value: that row's outputs are NaN

  Halves y(static_cast<size_t>(M) * N + kGuard, kSentinel);
  GemmF16MmaArgs a;
  a.M = M;
  a.N = N;
  a.K = K;
  a.x = x.data();
  a.w = w.data();
  a.bias = c.bias ? bias.data() : nullptr;
  a.activation = c.activation;
  a.residual = c.residual ? residual.data() : nullptr;
  a.y = y.data();
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(x.data(), x.size * 2);
  encrt::emulation::allow_reads(w.data(), w.size * 2);
  run_kernel(c, a, N % 2 == 0);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x and w

  int failures = 0;
  for (int m = 0; m < M && failures < 5; ++m)
    for (int n = 0; n < N && failures < 5; ++n) {
      double sum = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(x.at(static_cast<size_t>(m) * K + k)) * w.at(static_cast<size_t>(n) * K + k);
        sum += p;
        magnitude += std::fabs(p);
      }
      double want = sum;
      if (c.bias) want += bias.at(static_cast<size_t>(n));
      want = activate(want, c.activation);
      if (c.residual) want += residual.at(static_cast<size_t>(m) * N + n);
      const float got = y.at(static_cast<size_t>(m) * N + n);
      if (std::isnan(want)) {
        if (!std::isnan(got)) {
          ++failures;
          FAIL_CHECK("m " << m << " n " << n << ": kernel " << got << ", want NaN");
        }
        continue;
      }
      const double bound = std::ldexp(std::fabs(want), -11) + std::ldexp(magnitude, -22) * K + std::ldexp(1.0, -24) +
                           (c.residual ? std::ldexp(2.0, -22) : 0.0);
      if (!(std::fabs(got - want) <= bound)) {
        ++failures;
        FAIL_CHECK("m " << m << " n " << n << ": kernel " << got << " want " << want << " (bound " << bound << ")");
      }
    }
  check_no_store_past(y, static_cast<size_t>(M) * N);
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("cuda emulation: fp16 mma GEMM on odd shapes, against the linear in double", "[cuda_emulation][gemm_f16_mma]") {
  int index = 0;
  for (int M : {1, 7, 65, 130})
    for (int N : {2, 37, 36, 390})
      for (int K : {8, 40, 384, 1544}) {
        if (K == 1544 && N != (M == 1 || M == 65 ? 390 : M == 7 ? 37 : 2)) continue;
        Case c;
        c.M = M, c.N = N, c.K = K;
        c.tile = index % 2 ? 32 : 64;
        c.activation = index % 3;
        c.bias = index % 4 != 3;
        c.residual = index % 5 < 2;
        ++index;
        check_case(c);
      }
}

TEST_CASE("cuda emulation: fp16 mma GEMM, every epilogue on both tiles", "[cuda_emulation][gemm_f16_mma]") {
  for (int tile : {64, 32})
    for (int activation : {0, 1, 2})
      for (bool bias : {false, true})
        for (bool residual : {false, true}) {
          Case c;
          c.M = 65, c.N = 37, c.K = 40, c.tile = tile;
          c.activation = activation, c.bias = bias, c.residual = residual;
          check_case(c);
        }
}

TEST_CASE("cuda emulation: fp16 mma GEMM keeps a NaN input's NaN", "[cuda_emulation][gemm_f16_mma]") {
  for (int tile : {64, 32})
    for (int activation : {0, 1, 2}) {
      Case c;
      c.M = 7, c.N = 36, c.K = 40, c.tile = tile;
      c.activation = activation, c.nan = true, c.residual = true;
      check_case(c);
    }
}

TEST_CASE("cuda emulation: fp16 mma GEMM tile choice", "[cuda_emulation][gemm_f16_mma]") {
  // MiniLM at batch 1 on an H200 (132 SMs): 32 × 32 for every shape; 64 × 64 from 132 blocks.
  for (int N : {384, 1152, 1536}) CHECK(encrt::cuda::gemm_f16_mma_tile(128, N, 132) == 32);
  CHECK(encrt::cuda::gemm_f16_mma_tile(64 * 11, 64 * 12, 132) == 64);
  CHECK(encrt::cuda::gemm_f16_mma_tile(64 * 11, 64 * 11, 132) == 32);
}
