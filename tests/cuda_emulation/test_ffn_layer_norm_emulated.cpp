// The fused feed-forward block's own source (ffn_layer_norm_kernel.cuh) run on the host under
// warp_emulation.h, the blocks of each cluster together (launch_clusters), against the block in
// double on the same fp16 inputs: h = fp16(act(x·w1ᵀ + b1)), then LayerNorm(h·w2ᵀ + b2 + residual)
// · gamma + beta. Widths: MiniLM's (H 384, F 1536: clusters of 8, slices of 192 = 3 chunks), a
// cluster of 5 with F not a multiple of the slices (H 104, F 200: most of the last slices past F),
// and H 256 / F 1000 (slices of 128: two whole chunks), and MiniLM in clusters of 16 (slices of 96:
// a chunk and a half); M across
// 16-row tiles; every activation, with and without b1; the residual
// being x, and y being x (in place). This checks the chunked up projection, the gather over the
// cluster's shared memory, the down projection from it and the LayerNorm's statistics.
//
// With the attention's output projection before the block (the kProject build, FfnProjection):
// x as the kernel stores it must be, bit for bit, what the fused linear + LayerNorm kernel
// (gemm_f16_layer_norm_kernel.cuh, whose own tests hold it to double) stores from the same inputs
// (the same tiles, cluster and sums), x must not be read from memory (gathered from the cluster's
// kept tiles instead: the reads allowed exclude it), and y is checked as above from that x.
//
// Bound: as test_gemm_f16_layer_norm_emulated.cpp's, with z's error E = 2^-22·F·Σ|h·w2| (the fp32
// sums) + 2^-21·|z| + Σ over the h values that may round the other way ulp(h)·|w2|: the kernel
// rounds an fp32 h to fp16, the reference a double one, and the two may differ by one ulp where
// the value lies within the fp32 sum's error (2^-22·H·Σ|x·w1| + 2^-20·|v|) of a rounding midpoint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "cuda_emulation/fp16_rows.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/ffn_layer_norm_kernel.cuh"
#include "core/half.h"

namespace {

using encrt::cuda::FfnLayerNormArgs;
using encrt::cuda::GemmF16LayerNormArgs;
namespace ffn = encrt::cuda::ffn_norm;

using encrt::emulation::check_no_store_past;
using encrt::emulation::check_normalized_row;
using encrt::emulation::Halves;
using encrt::emulation::kGuard;
using encrt::emulation::kSentinel;

struct Case {
  int M = 1, H = 384, F = 1536, activation = 2, max_cluster = 8;
  bool b1 = true, residual = true, in_place = false, projection = false;
  std::string describe() const {
    std::ostringstream s;
    s << "M " << M << " H " << H << " F " << F << " act " << activation << (b1 ? " b1" : "") << (residual ? " residual" : "")
      << (in_place ? " in place" : "") << (projection ? " projected" : "") << " clusters of up to " << max_cluster;
    return s.str();
  }
};

// The kernel's build for the plan's columns, with the projection where the arguments have one
// (as ffn_layer_norm.cu chooses it).
void run_kernel(const FfnLayerNormArgs& a) {
  const bool projection = a.projection.in != nullptr;
  const ffn::Plan p = ffn::plan_of(a.H, a.F, a.max_cluster, projection);
  const encrt::emulation::Index grid{static_cast<unsigned>(p.cluster), static_cast<unsigned>((a.M + ffn::kBM - 1) / ffn::kBM), 1};
  const cudaError_t e = encrt::cuda::gemm_f16_norm::with_block_columns(p.bn, [&](auto bn) {
    constexpr int BN = decltype(bn)::value;
    encrt::emulation::launch_clusters(grid, p.cluster, ffn::kThreads, p.bytes, [&] {
      if (projection)
        ffn::ffn_layer_norm_kernel<BN, true>(a, p);
      else
        ffn::ffn_layer_norm_kernel<BN, false>(a, p);
    });
    return cudaSuccess;
  });
  REQUIRE(e == cudaSuccess);
}

// The fused linear + LayerNorm kernel alone, as gemm_f16_layer_norm.cu launches it.
void run_linear_norm(const GemmF16LayerNormArgs& a) {
  using namespace encrt::cuda::gemm_f16_norm;
  const int bn = encrt::cuda::gemm_f16_layer_norm_columns(a.N, a.max_cluster);
  const int cluster = (a.N + bn - 1) / bn;
  const encrt::emulation::Index grid{static_cast<unsigned>(cluster), static_cast<unsigned>((a.M + kBM - 1) / kBM), 1};
  const cudaError_t e = with_block_columns(bn, [&](auto columns) {
    constexpr int BN = decltype(columns)::value;
    encrt::emulation::launch_clusters(grid, cluster, kThreads, Layout<BN>::kBytes,
                                      [&] { gemm_f16_layer_norm_kernel<BN>(a, cluster); });
    return cudaSuccess;
  });
  REQUIRE(e == cudaSuccess);
}

double activate(double v, int activation) {
  if (activation == 1) return v > 0.0 ? v : 0.0;
  if (activation == 2) return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  return v;
}

void check_case(const Case& c) {
  INFO(c.describe());
  const int M = c.M, H = c.H, F = c.F;
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + H * 131 + F * 17 + c.activation + (c.in_place ? 5 : 0)));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto h = [](float f) { return encrt::float_to_half(f); };
  Halves x(static_cast<size_t>(M) * H), w1(static_cast<size_t>(F) * H), b1(static_cast<size_t>(F)),
      w2(static_cast<size_t>(H) * F);
  std::vector<float> b2(static_cast<size_t>(H)), gamma(static_cast<size_t>(H)), beta(static_cast<size_t>(H));
  for (size_t i = 0; i < x.size; ++i) x.data()[i] = h(u(rng) * (i % 7 == 0 ? 4.0f : 1.0f));
  for (size_t i = 0; i < w1.size; ++i) w1.data()[i] = h(u(rng) * 0.2f);
  for (size_t i = 0; i < b1.size; ++i) b1.data()[i] = h(0.5f * u(rng));
  for (size_t i = 0; i < w2.size; ++i) w2.data()[i] = h(u(rng) * 0.1f);
  for (int n = 0; n < H; ++n) {
    b2[static_cast<size_t>(n)] = u(rng) + 0.01f * static_cast<float>(n % 13);
    gamma[static_cast<size_t>(n)] = 1.0f + 0.5f * u(rng);
    beta[static_cast<size_t>(n)] = 0.2f * u(rng);
  }
  const float eps = 1e-12f;
  const Halves x_in = x;  // x as it was (in place, y overwrites x)

  // The projection's inputs: x = LayerNorm(in · woᵀ + bo + r0) · gamma0 + beta0, over a sentinel x.
  Halves in(static_cast<size_t>(M) * H), wo(static_cast<size_t>(H) * H), r0(static_cast<size_t>(M) * H);
  std::vector<float> bo(static_cast<size_t>(H)), gamma0(static_cast<size_t>(H)), beta0(static_cast<size_t>(H));
  Halves x_want(static_cast<size_t>(M) * H + kGuard, kSentinel);  // the linear + LayerNorm kernel's x
  if (c.projection) {
    for (size_t i = 0; i < in.size; ++i) in.data()[i] = h(u(rng));
    for (size_t i = 0; i < wo.size; ++i) wo.data()[i] = h(u(rng) * 0.1f);
    for (size_t i = 0; i < r0.size; ++i) r0.data()[i] = h(u(rng) * 2.0f);
    for (int n = 0; n < H; ++n) {
      bo[static_cast<size_t>(n)] = 0.3f * u(rng);
      gamma0[static_cast<size_t>(n)] = 1.0f + 0.3f * u(rng);
      beta0[static_cast<size_t>(n)] = 0.1f * u(rng);
    }
    for (size_t i = 0; i < x.size; ++i) x.data()[i] = kSentinel;
    GemmF16LayerNormArgs l;
    l.M = M, l.N = H, l.K = H;
    l.x = in.data();
    l.w = wo.data();
    l.bias = bo.data();
    l.residual = r0.data();
    l.gamma = gamma0.data();
    l.beta = beta0.data();
    l.eps = eps;
    l.y = x_want.data();
    l.max_cluster = c.max_cluster;
    encrt::emulation::reset_reads();
    encrt::emulation::allow_reads(in.data(), in.size * 2);
    encrt::emulation::allow_reads(wo.data(), wo.size * 2);
    run_linear_norm(l);
    REQUIRE(encrt::emulation::reset_reads() == 0);
  }

  Halves y(static_cast<size_t>(M) * H + kGuard, kSentinel);
  FfnLayerNormArgs a;
  a.M = M, a.H = H, a.F = F;
  a.x = x.data();
  a.w1 = w1.data();
  a.b1 = c.b1 ? b1.data() : nullptr;
  a.activation = c.activation;
  a.w2 = w2.data();
  a.b2 = b2.data();
  a.residual = c.residual ? x.data() : nullptr;
  a.gamma = gamma.data();
  a.beta = beta.data();
  a.eps = eps;
  a.y = c.in_place ? x.data() : y.data();
  a.max_cluster = c.max_cluster;
  if (c.projection)
    a.projection = encrt::cuda::FfnProjection{in.data(), wo.data(), bo.data(), r0.data(), gamma0.data(), beta0.data(), eps,
                                              x.data()};
  encrt::emulation::reset_reads();
  if (c.projection) {  // x is gathered, never read from memory
    encrt::emulation::allow_reads(in.data(), in.size * 2);
    encrt::emulation::allow_reads(wo.data(), wo.size * 2);
  } else {
    encrt::emulation::allow_reads(x.data(), x.size * 2);
  }
  encrt::emulation::allow_reads(w1.data(), w1.size * 2);
  encrt::emulation::allow_reads(w2.data(), w2.size * 2);
  run_kernel(a);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x (or the projection's in and wo), w1 and w2
  Halves& out = c.in_place ? x : y;
  if (c.projection && !c.in_place) {  // x as stored, before y overwrote it in place
    int differ = 0;
    for (size_t i = 0; i < static_cast<size_t>(M) * H; ++i) differ += x.data()[i] != x_want.data()[i] ? 1 : 0;
    CHECK(differ == 0);
  }
  Halves xs = c.projection ? x_want : x_in;  // the block's input

  int failures = 0;
  std::vector<double> hv(static_cast<size_t>(F)), ulp(static_cast<size_t>(F)), z(static_cast<size_t>(H)),
      error(static_cast<size_t>(H));
  for (int m = 0; m < M && failures < 5; ++m) {
    for (int f = 0; f < F; ++f) {
      double sum = 0.0, magnitude = 0.0;
      for (int k = 0; k < H; ++k) {
        const double p = static_cast<double>(xs.at(static_cast<size_t>(m) * H + k)) * w1.at(static_cast<size_t>(f) * H + k);
        sum += p;
        magnitude += std::fabs(p);
      }
      if (c.b1) sum += b1.at(static_cast<size_t>(f));
      const double v = activate(sum, c.activation);
      const float rounded = encrt::half_to_float(encrt::float_to_half(static_cast<float>(v)));
      hv[static_cast<size_t>(f)] = rounded;
      // One fp16 ulp at this magnitude (2^-24 for subnormals), and whether the kernel's fp32 value may
      // round to the neighbour: within its error of the midpoint between the two.
      const int e = rounded == 0.0f ? -24 : std::max(-24, std::ilogb(rounded) - 10);
      const double one_ulp = std::ldexp(1.0, e);
      const double err = std::ldexp(magnitude, -22) * H + std::ldexp(std::fabs(v), -20) + std::ldexp(1.0, -40);
      const double to_midpoint = one_ulp / 2 - std::fabs(v - rounded);
      ulp[static_cast<size_t>(f)] = to_midpoint <= err * 1.5 ? one_ulp : 0.0;
    }
    for (int n = 0; n < H; ++n) {
      double sum = 0.0, magnitude = 0.0, flips = 0.0;
      for (int f = 0; f < F; ++f) {
        const double wv = w2.at(static_cast<size_t>(n) * F + f);
        sum += hv[static_cast<size_t>(f)] * wv;
        magnitude += std::fabs(hv[static_cast<size_t>(f)] * wv);
        flips += ulp[static_cast<size_t>(f)] * std::fabs(wv);
      }
      sum += b2[static_cast<size_t>(n)];
      if (c.residual) sum += xs.at(static_cast<size_t>(m) * H + n);
      z[static_cast<size_t>(n)] = sum;
      error[static_cast<size_t>(n)] = std::ldexp(magnitude, -22) * F + std::ldexp(std::fabs(sum), -21) + flips;
    }
    failures += check_normalized_row(z, error, gamma.data(), beta.data(), eps, out, static_cast<size_t>(m) * H, m, 5 - failures);
  }
  if (!c.in_place) check_no_store_past(y, static_cast<size_t>(M) * H);
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("cuda emulation: fused feed-forward block in clusters, against double", "[cuda_emulation][ffn_layer_norm]") {
  int index = 0;
  for (auto [H, F] : {std::pair{384, 1536}, std::pair{104, 200}, std::pair{256, 1000}})
    for (int M : {1, 16, 37}) {
      if (H == 384 && M == 37) continue;  // below, with the in-place run
      Case c;
      c.M = M, c.H = H, c.F = F;
      c.activation = index % 3 == 0 ? 2 : index % 3 == 1 ? 1 : 0;
      c.b1 = index % 4 != 3;
      c.residual = index % 5 != 4;
      ++index;
      check_case(c);
    }
}

TEST_CASE("cuda emulation: fused feed-forward block in place on its input", "[cuda_emulation][ffn_layer_norm]") {
  Case c;
  c.M = 37, c.H = 384, c.F = 1536, c.in_place = true;  // MiniLM's shapes, y over x (the residual)
  check_case(c);
}

TEST_CASE("cuda emulation: fused feed-forward block in clusters of 16", "[cuda_emulation][ffn_layer_norm]") {
  Case c;
  c.M = 16, c.H = 384, c.F = 1536, c.max_cluster = 16;  // MiniLM: 16 blocks of 24 columns, slices of 128
  check_case(c);
}

TEST_CASE("cuda emulation: the attention's output projection, its LayerNorm and the feed-forward block in one kernel",
          "[cuda_emulation][ffn_layer_norm]") {
  Case c;
  c.projection = true;
  c.M = 37, c.H = 384, c.F = 1536;  // MiniLM, the last row tile partial
  check_case(c);
  c.M = 16, c.H = 104, c.F = 200, c.activation = 1, c.b1 = false;  // a cluster of 5, the last block's columns partial
  check_case(c);
  c.M = 20, c.H = 384, c.F = 1536, c.activation = 2, c.b1 = true, c.in_place = true;  // y over x
  check_case(c);
  c.M = 16, c.in_place = false, c.max_cluster = 16;  // MiniLM in clusters of 16 (24 columns a block)
  check_case(c);
  c.M = 5, c.H = 256, c.F = 1000, c.max_cluster = 8, c.residual = false;  // no residual in the block
  check_case(c);
  c.M = 16, c.H = 768, c.F = 3072, c.residual = true;  // BERT-base: 8 blocks of 96 columns
  check_case(c);
  c.M = 3, c.H = 512, c.F = 2048;  // 8 blocks of 64 columns
  check_case(c);
}

TEST_CASE("cuda emulation: fused feed-forward block plans", "[cuda_emulation][ffn_layer_norm]") {
  const ffn::Plan minilm = ffn::plan_of(384, 1536);
  CHECK(minilm.cluster == 8);
  CHECK(minilm.bn == 48);
  CHECK(minilm.slice == 192);
  CHECK(minilm.h_columns == 1536);
  CHECK(minilm.bytes <= 227 * 1024);  // sm_90's opt-in limit for a block
  const ffn::Plan sixteen = ffn::plan_of(384, 1536, 16);
  CHECK(sixteen.cluster == 16);
  CHECK(sixteen.bn == 24);
  CHECK(sixteen.slice == 96);  // 1.5 chunks of 64: the second cut at the slice's end
  CHECK(sixteen.h_columns == 1536);
  CHECK(sixteen.bytes <= 227 * 1024);
  const ffn::Plan odd = ffn::plan_of(104, 200);
  CHECK(odd.cluster == 5);
  CHECK(odd.slice == 40);  // ⌈200 / 5⌉: one chunk, cut at 40
  CHECK(odd.h_columns == 256);
  CHECK(ffn::plan_of(1032, 4096).cluster == 0);  // past 8 blocks of 128 columns
  // With the projection: its ring (3 stages of 16 + 48 rows, 60 KB) in x's rows, the slice and
  // the gathered h (68 KB), the kept tile at the gathered h: no more memory than without.
  const ffn::Plan layer = ffn::plan_of(384, 1536, 8, true);
  CHECK(layer.bn == 48);
  CHECK(layer.bytes == minilm.bytes);
  CHECK(layer.projection_at == layer.x_at);
  CHECK(layer.stats_at - layer.x_at >= 3u * (16 + 48) * 160 * 2);
  CHECK(layer.keep_at == layer.gathered_at);
  CHECK(layer.keep_at % 16 == 0);
  // BERT-base (H 768, F 3072, clusters of 8: 96 columns a block): 224 KB with the projection,
  // within sm_90's 227 KB a block.
  const ffn::Plan bert = ffn::plan_of(768, 3072, 8, true);
  CHECK(bert.bn == 96);
  CHECK(bert.projection_at == bert.x_at);
  CHECK(bert.bytes == ffn::plan_of(768, 3072, 8).bytes);
  CHECK(bert.bytes <= 227 * 1024);
  // Where the rows are too small for the ring (H 104, F 200: 5 blocks of 24 columns, slices of 40),
  // it goes in the stages (here already large enough: the up projection's 48 KB).
  const ffn::Plan small = ffn::plan_of(104, 200, 8, true);
  CHECK(small.projection_at == small.stages_at);
  CHECK(small.x_at >= 3u * (16 + 24) * 160 * 2);
  CHECK(small.bytes == ffn::plan_of(104, 200).bytes);
}
