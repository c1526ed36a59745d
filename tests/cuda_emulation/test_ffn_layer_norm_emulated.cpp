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
namespace ffn = encrt::cuda::ffn_norm;

using encrt::emulation::check_no_store_past;
using encrt::emulation::check_normalized_row;
using encrt::emulation::Halves;
using encrt::emulation::kGuard;
using encrt::emulation::kSentinel;

struct Case {
  int M = 1, H = 384, F = 1536, activation = 2, max_cluster = 8;
  bool b1 = true, residual = true, in_place = false;
  std::string describe() const {
    std::ostringstream s;
    s << "M " << M << " H " << H << " F " << F << " act " << activation << (b1 ? " b1" : "") << (residual ? " residual" : "")
      << (in_place ? " in place" : "") << " clusters of up to " << max_cluster;
    return s.str();
  }
};

void run_kernel(const FfnLayerNormArgs& a) {
  const ffn::Plan p = ffn::plan_of(a.H, a.F, a.max_cluster);
  const encrt::emulation::Index grid{static_cast<unsigned>(p.cluster), static_cast<unsigned>((a.M + ffn::kBM - 1) / ffn::kBM), 1};
  auto go = [&](auto kernel) {
    encrt::emulation::launch_clusters(grid, p.cluster, ffn::kThreads, p.bytes, [&] { kernel(a, p); });
  };
  switch (p.bn) {
    case 24: go(ffn::ffn_layer_norm_kernel<24>); break;
    case 32: go(ffn::ffn_layer_norm_kernel<32>); break;
    case 48: go(ffn::ffn_layer_norm_kernel<48>); break;
    case 64: go(ffn::ffn_layer_norm_kernel<64>); break;
    case 96: go(ffn::ffn_layer_norm_kernel<96>); break;
    default: go(ffn::ffn_layer_norm_kernel<128>); break;
  }
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
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(x.data(), x.size * 2);
  encrt::emulation::allow_reads(w1.data(), w1.size * 2);
  encrt::emulation::allow_reads(w2.data(), w2.size * 2);
  run_kernel(a);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x, w1 and w2
  Halves& out = c.in_place ? x : y;
  Halves xs = x_in;

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
}
