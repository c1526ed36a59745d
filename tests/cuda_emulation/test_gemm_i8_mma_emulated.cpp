// The int8 tensor-core GEMM's own source (gemm_i8_mma_kernel.cuh) run on the host under
// warp_emulation.h (mma.sync m16n8k32 s8 from the PTX fragment table, cp.async bounds-checked and
// landing at its wait), against the reference's gemm_u8s8 and epilogue (kernels/ref/gemm_ref.cpp) on the same
// integers: M = 1, 7, 65, 130 (partial 16-row fragments and block tiles), N = 4, 36, 388 (partial
// n8 tiles and blocks, odd pairs), K = 4, 36, 388, 1540 (4-byte copies, K tails inside a 64-byte
// step; 1540 spans 25 steps) and 96, 384 (16-byte copies; 96 ends in half a step), every block
// tile (128 × 128, 128 × 64, 64 × 64, 32 × 32), bias, ReLU/GELU and the residual, and extreme
// bytes (activations only −128 and 127, weights ±127, zero points 0 and 255). This checks the
// fragment indexing (and the permuted k order), the ring of stages and the masking on every build; the same kernel on the GPU is the conformance
// suite's (tests/backend/test_ops.cpp, int8 linear problems and "[int8_gemm]").
//
// Exactness: the integer sums are exact and wrap like the reference's, and every fp32 step is
// int8_math.h's (each operation rounded once, as the reference), so outputs are bit for bit the
// reference's, except after GELU, whose erff may differ from the reference's std::erf by ulps on
// the device (here both are the host's erff): ≤ 4 ulps there. Unit scales without bias (K ≤ 388,
// |acc| < 2^24) check the int32 accumulators themselves.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/gemm_i8_mma_kernel.cuh"
#include "kernels/kernel_types.h"
#include "kernels/panel_unpack.h"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::GemmI8MmaArgs;
namespace int8 = encrt::cuda::int8;
namespace kernels = encrt::kernels;

constexpr float kSentinel = 12345.0f;
constexpr size_t kGuard = 64;  // floats past y that no store may touch

// 16-byte aligned bytes (the kernel's 16-byte copies want aligned rows).
struct Bytes {
  explicit Bytes(size_t n) : storage((n + 15) / 16 + 1), size(n) {}
  int8_t* data() { return reinterpret_cast<int8_t*>(storage.data()); }
  std::vector<uint4> storage;
  size_t size;
};

using encrt::cuda::GemmI8Tile;
constexpr GemmI8Tile kTiles[] = {GemmI8Tile::k64, GemmI8Tile::k32, GemmI8Tile::k128, GemmI8Tile::k128x64};

struct Case {
  int M = 1, N = 4, K = 4;
  GemmI8Tile tile = GemmI8Tile::k64;
  bool extreme = false, bias = true, residual = false, unit_scales = false;
  kernels::Activation act = kernels::Activation::kNone;
  std::string describe() const {
    std::ostringstream s;
    s << "M " << M << " N " << N << " K " << K << " tile " << encrt::cuda::tile_rows(tile) << "x"
      << encrt::cuda::tile_cols(tile) << (extreme ? " extreme" : "") << (bias ? " bias" : "")
      << (residual ? " residual" : "") << (unit_scales ? " unit scales" : "") << " act " << static_cast<int>(act);
    return s.str();
  }
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
// The distance in ulps between two finite floats of the same sign, or 0 / huge.
int64_t ulps(float a, float b) {
  if (bits(a) == bits(b)) return 0;
  if (std::isnan(a) || std::isnan(b) || std::signbit(a) != std::signbit(b)) return a == b ? 0 : std::numeric_limits<int64_t>::max();
  return std::llabs(static_cast<int64_t>(bits(a)) - static_cast<int64_t>(bits(b)));
}

template <int BM, int BN>
void run_tile(const GemmI8MmaArgs& a, bool wide, bool pairs) {
  using namespace encrt::cuda::mma_gemm_i8;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.N + BN - 1) / BN), static_cast<unsigned>((a.M + BM - 1) / BM), 1};
  if (wide)
    encrt::emulation::launch(grid, kThreads, [&] { gemm_i8_mma_kernel<BM, BN, 16>(a, pairs); });
  else
    encrt::emulation::launch(grid, kThreads, [&] { gemm_i8_mma_kernel<BM, BN, 4>(a, pairs); });
}

void run_kernel(const Case& c, const GemmI8MmaArgs& a, bool wide, bool pairs) {
  switch (c.tile) {
    case GemmI8Tile::k128: return run_tile<128, 128>(a, wide, pairs);
    case GemmI8Tile::k128x64: return run_tile<128, 64>(a, wide, pairs);
    case GemmI8Tile::k64: return run_tile<64, 64>(a, wide, pairs);
    default: return run_tile<32, 32>(a, wide, pairs);
  }
}

// Runs one case: every output against the reference, the reads, the guard past y.
void check_case(const Case& c) {
  INFO(c.describe());
  const int M = c.M, N = c.N, K = c.K;
  const int Np = kernels::round_up(N, 4), Kp = kernels::round_up(K, kernels::kPanelK);
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + N * 131 + K * 17 + static_cast<int>(c.tile) + (c.extreme ? 1 : 0)));
  // Weights in the model's PanelN16K4 layout and as the backend uploads them: [Np, Kp], zeros past.
  std::vector<int8_t> packed(kernels::panel_i8_size(N, K));
  std::vector<int32_t> w_sum(static_cast<size_t>(Np), 0);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      const int8_t w = c.extreme ? static_cast<int8_t>(rng() & 1 ? 127 : -127) : static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      packed[kernels::panel_i8_index(n, k, K)] = w;
      w_sum[static_cast<size_t>(n)] += w;
    }
  Bytes w_rows(static_cast<size_t>(Np) * Kp);
  kernels::unpack_panel_n16k4(N, K, packed.data(), Np, Kp, w_rows.data());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w_scale(static_cast<size_t>(Np), 0.0f), bias(static_cast<size_t>(Np), 0.0f);
  for (int n = 0; n < N; ++n) {
    w_scale[static_cast<size_t>(n)] = c.unit_scales ? 1.0f : 0.002f + 0.004f * (u(rng) + 1.0f);
    bias[static_cast<size_t>(n)] = u(rng);
  }
  // Activations: the reference's uint8 q (with the zero point in the padding, as quantize writes
  // it) and the GPU's q − 128.
  std::vector<uint8_t> q(static_cast<size_t>(M) * Kp);
  std::vector<float> x_scale(static_cast<size_t>(M));
  std::vector<int32_t> x_zp(static_cast<size_t>(M));
  for (int m = 0; m < M; ++m) {
    x_zp[static_cast<size_t>(m)] = c.extreme ? (m % 2 ? 255 : 0) : static_cast<int32_t>(rng() % 256);
    x_scale[static_cast<size_t>(m)] = c.unit_scales ? 1.0f : 0.001f + 0.02f * (u(rng) + 1.0f);
    for (int k = 0; k < Kp; ++k)
      q[static_cast<size_t>(m) * Kp + k] =
          k >= K ? static_cast<uint8_t>(x_zp[static_cast<size_t>(m)]) : c.extreme ? (rng() & 1 ? 255 : 0) : static_cast<uint8_t>(rng());
  }
  Bytes x(static_cast<size_t>(M) * Kp);
  for (size_t i = 0; i < q.size(); ++i) x.data()[i] = int8::to_signed(q[i]);
  std::vector<float> residual(static_cast<size_t>(M) * N);
  for (float& r : residual) r = 2.0f * u(rng);

  // The reference.
  kernels::QuantizedRows A;
  A.data = q.data();
  A.ld = Kp;
  A.scale = x_scale.data();
  A.zero_point = x_zp.data();
  kernels::GemmEpilogue ep;
  ep.bias = c.bias ? bias.data() : nullptr;
  ep.activation = c.act;
  ep.residual = c.residual ? residual.data() : nullptr;
  ep.ldr = N;
  std::vector<float> want(static_cast<size_t>(M) * N);
  kernels::ref::gemm_u8s8(M, N, K, A, packed.data(), w_sum.data(), w_scale.data(), want.data(), N, ep);

  // The kernel, with a guard past y.
  std::vector<float> y(static_cast<size_t>(M) * N + kGuard, kSentinel);
  GemmI8MmaArgs a;
  a.M = M;
  a.N = N;
  a.ld_w = Np;
  a.Kp = Kp;
  a.x = x.data();
  a.w = w_rows.data();
  a.x_scale = x_scale.data();
  a.x_zero_point = x_zp.data();
  a.w_scale = w_scale.data();
  a.w_sum = w_sum.data();
  a.bias = c.bias ? bias.data() : nullptr;
  a.activation = static_cast<int>(c.act);
  a.residual = c.residual ? residual.data() : nullptr;
  a.y = y.data();
  const bool wide = Kp % 16 == 0;  // the launcher's choice (these buffers are 16-byte aligned)
  const bool pairs = N % 2 == 0;
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(x.data(), x.size);
  encrt::emulation::allow_reads(w_rows.data(), w_rows.size);
  run_kernel(c, a, wide, pairs);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x and w

  int failures = 0;
  for (int m = 0; m < M && failures < 5; ++m)
    for (int n = 0; n < N && failures < 5; ++n) {
      const size_t i = static_cast<size_t>(m) * N + n;
      const int64_t d = ulps(y[i], want[i]);
      const int64_t bound = c.act == kernels::Activation::kGelu ? 4 : 0;
      if (d > bound) {
        ++failures;
        FAIL_CHECK("m " << m << " n " << n << ": kernel " << y[i] << " reference " << want[i] << " (" << d << " ulps)");
      }
      if (c.unit_scales && !c.bias && !c.residual && c.act == kernels::Activation::kNone) {
        // float(acc) is exact here: the int32 accumulator itself, against a direct sum.
        int64_t acc = 0;
        for (int k = 0; k < K; ++k)
          acc += static_cast<int64_t>(q[static_cast<size_t>(m) * Kp + k]) * packed[kernels::panel_i8_index(n, k, K)];
        acc -= static_cast<int64_t>(x_zp[static_cast<size_t>(m)]) * w_sum[static_cast<size_t>(n)];
        if (static_cast<int64_t>(y[i]) != acc) {
          ++failures;
          FAIL_CHECK("m " << m << " n " << n << ": accumulator " << static_cast<int64_t>(y[i]) << ", want " << acc);
        }
      }
    }
  for (size_t g = 0; g < kGuard; ++g)
    if (bits(y[static_cast<size_t>(M) * N + g]) != bits(kSentinel)) {
      FAIL_CHECK("a store past y[M, N] at +" << g);
      break;
    }
  CHECK(failures == 0);
}

}  // namespace

// Every M, N and K up to 388 together, K = 1540 (25 steps: the emulation's slowest) with one N per
// M; the epilogue variant and the tile rotating over the shapes.
TEST_CASE("cuda emulation: int8 mma GEMM on odd shapes, against gemm_u8s8 + epilogue", "[cuda_emulation][gemm_i8_mma]") {
  const kernels::Activation acts[] = {kernels::Activation::kNone, kernels::Activation::kGelu, kernels::Activation::kRelu};
  int index = 0;
  for (int M : {1, 7, 65, 130})
    for (int N : {4, 36, 388})
      for (int K : {4, 36, 96, 388, 1540}) {
        if (K == 1540 && N != (M == 1 || M == 65 ? 388 : M == 7 ? 36 : 4)) continue;
        Case c;
        c.M = M, c.N = N, c.K = K;
        c.tile = kTiles[index % 4];
        c.act = acts[index % 3];
        c.bias = index % 4 != 3;
        c.residual = index % 5 < 2;
        ++index;
        check_case(c);
      }
}

TEST_CASE("cuda emulation: int8 mma GEMM, every epilogue on every tile", "[cuda_emulation][gemm_i8_mma]") {
  for (GemmI8Tile tile : kTiles)
    for (kernels::Activation act : {kernels::Activation::kNone, kernels::Activation::kRelu, kernels::Activation::kGelu})
      for (bool bias : {false, true})
        for (bool residual : {false, true}) {
          Case c;
          c.M = 65, c.N = 36, c.K = 96, c.tile = tile;
          c.act = act, c.bias = bias, c.residual = residual;
          check_case(c);
        }
}

TEST_CASE("cuda emulation: int8 mma GEMM, extreme bytes and the accumulators themselves", "[cuda_emulation][gemm_i8_mma]") {
  for (GemmI8Tile tile : kTiles)
    for (auto [M, N, K] : {std::tuple{7, 36, 388}, std::tuple{65, 388, 36}, std::tuple{130, 4, 384}, std::tuple{1, 388, 1540}}) {
      Case c;
      c.M = M, c.N = N, c.K = K, c.tile = tile;
      c.extreme = true;
      c.residual = true;
      c.act = kernels::Activation::kGelu;
      check_case(c);
      // Unit scales, no bias: y = float(acc), exact while |acc| < 2^24 (K ≤ 388: 255·127·388).
      if (K <= 388) {
        c.unit_scales = true;
        c.bias = false;
        c.residual = false;
        c.act = kernels::Activation::kNone;
        check_case(c);
      }
    }
}

TEST_CASE("cuda emulation: int8 mma GEMM tile choice", "[cuda_emulation][gemm_i8_mma]") {
  // MiniLM on an H200 (132 SMs): batch 1 (M = 128) takes the 32 × 32 tile for every shape; batch 32
  // (M = 4096) 128 × 64 for N = 384 (128 × 128 would leave 36 SMs without a block) and 128 × 128
  // for the wider ones.
  using encrt::cuda::gemm_i8_mma_tile;
  for (int N : {384, 1152, 1536}) CHECK(gemm_i8_mma_tile(128, N, 132) == GemmI8Tile::k32);
  CHECK(gemm_i8_mma_tile(4096, 384, 132) == GemmI8Tile::k128x64);
  CHECK(gemm_i8_mma_tile(4096, 1152, 132) == GemmI8Tile::k128);
  CHECK(gemm_i8_mma_tile(4096, 1536, 132) == GemmI8Tile::k128);
  // The boundaries: exactly one block per SM is enough, one fewer is not.
  CHECK(gemm_i8_mma_tile(128 * 11, 128 * 12, 132) == GemmI8Tile::k128);
  CHECK(gemm_i8_mma_tile(128 * 11, 128 * 12 - 128, 132) == GemmI8Tile::k128x64);
  CHECK(gemm_i8_mma_tile(64 * 11, 64 * 12, 132) == GemmI8Tile::k64);
  CHECK(gemm_i8_mma_tile(64 * 11, 64 * 11, 132) == GemmI8Tile::k32);
  // A one-SM GPU takes the largest tile at any size.
  CHECK(gemm_i8_mma_tile(1, 1, 1) == GemmI8Tile::k128);
}
