// The fused QKV projection + attention kernel's own source (qkv_attention_kernel.cuh) run on the
// host under warp_emulation.h, the blocks of each cluster together (launch_clusters), against the
// same computation in double on the same fp16 inputs: q, k, v = fp16(x·wᵀ + b), then softmax
// attention with the key padding mask. Sequences of 128 (a cluster of 8) and 37 tokens (3 blocks,
// the last partial), head_dim 32 and 64, two heads, x 384 and 72 wide, with and without bias, no
// mask, padded tails, and a sequence without a real key (zeros).
//
// Bound: the kernel rounds fp32 q, k, v to fp16 where the reference rounds doubles, so a value
// within the fp32 sum's error (2^-22·width·Σ|x·w| + 2^-20·|v|) of a rounding midpoint may differ by
// one ulp; those values are found and their ulps bound the scores' change Δ_i (scale · Σ_d of the
// ulps times the other operand's largest magnitude, plus the fp32 dot product's error), so that an
// output is within (e^{2Δ_i + 2^-20}(1 + 2^-11) − 1) · max_j |v_jd| (probabilities, P rounded to
// fp16) + max_j ulp(v_jd) + 2^-11 · |out| (the store) of the reference. Elsewhere the bound is
// fp16's own rounding: a key left out or a wrong row moves an output by far more.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "cuda_emulation/fp16_rows.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/qkv_attention_kernel.cuh"
#include "core/half.h"

namespace {

using encrt::cuda::QkvAttentionArgs;
namespace qa = encrt::cuda::qkv_attention_kernels;

using encrt::emulation::check_no_store_past;
using encrt::emulation::Halves;
using encrt::emulation::kGuard;
using encrt::emulation::kSentinel;

enum class Mask { kNone, kTails, kEmptySequence };

struct Case {
  int batch = 2, seq = 128, heads = 2, D = 32, width = 384;
  bool bias = true;
  Mask mask = Mask::kTails;
  std::string describe() const {
    std::ostringstream s;
    s << "batch " << batch << " seq " << seq << " heads " << heads << " D " << D << " width " << width << (bias ? " bias" : "")
      << " mask " << static_cast<int>(mask);
    return s.str();
  }
};

void run_kernel(QkvAttentionArgs a) {
  a.cluster = (a.seq + qa::kRows - 1) / qa::kRows;
  const encrt::emulation::Index grid{static_cast<unsigned>(a.cluster), static_cast<unsigned>(a.heads),
                                     static_cast<unsigned>(a.batch)};
  if (a.head_dim == 32)
    encrt::emulation::launch_clusters(grid, a.cluster, qa::kThreads, qa::Layout<32>::kBytes,
                                      [&] { qa::qkv_attention_kernel<32>(a); });
  else
    encrt::emulation::launch_clusters(grid, a.cluster, qa::kThreads, qa::Layout<64>::kBytes,
                                      [&] { qa::qkv_attention_kernel<64>(a); });
}

void check_case(const Case& c) {
  INFO(c.describe());
  const int rows = c.batch * c.seq, H = c.heads * c.D, W = c.width, N = 3 * H;
  std::mt19937 rng(static_cast<uint32_t>(c.seq * 7919 + c.D * 131 + W * 17 + static_cast<int>(c.mask)));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const auto h = [](float f) { return encrt::float_to_half(f); };
  Halves x(static_cast<size_t>(rows) * W), w(static_cast<size_t>(N) * W), bias(static_cast<size_t>(N));
  for (size_t i = 0; i < x.size; ++i) x.data()[i] = h(u(rng));
  const float w_scale = 2.0f / std::sqrt(static_cast<float>(W));
  for (size_t i = 0; i < w.size; ++i) w.data()[i] = h(u(rng) * w_scale);
  for (size_t i = 0; i < bias.size; ++i) bias.data()[i] = h(0.3f * u(rng));
  std::vector<int32_t> mask(static_cast<size_t>(rows), 1);
  if (c.mask == Mask::kTails)
    for (int b = 0; b < c.batch; ++b)
      for (int j = std::max(1, c.seq - 3 - 9 * b); j < c.seq; ++j) mask[static_cast<size_t>(b * c.seq + j)] = 0;
  if (c.mask == Mask::kEmptySequence)
    for (int j = 0; j < c.seq; ++j) mask[static_cast<size_t>(j)] = 0;  // sequence 0: no real key
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));

  Halves out(static_cast<size_t>(rows) * H + kGuard, kSentinel);
  QkvAttentionArgs a;
  a.batch = c.batch, a.seq = c.seq, a.heads = c.heads, a.head_dim = c.D, a.width = W;
  a.x = x.data();
  a.w = w.data();
  a.bias = c.bias ? bias.data() : nullptr;
  a.mask = c.mask == Mask::kNone ? nullptr : mask.data();
  a.scale = scale;
  a.out = out.data();
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(x.data(), x.size * 2);
  encrt::emulation::allow_reads(w.data(), w.size * 2);
  run_kernel(a);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async outside x and w

  // q | k | v in fp16 as the reference rounds them, and the ulp of each that may round the other
  // way in the kernel (0 where it cannot).
  std::vector<double> qkv(static_cast<size_t>(rows) * N), flip(static_cast<size_t>(rows) * N);
  for (int r = 0; r < rows; ++r)
    for (int n = 0; n < N; ++n) {
      double sum = 0.0, magnitude = 0.0;
      for (int k = 0; k < W; ++k) {
        const double p = static_cast<double>(x.at(static_cast<size_t>(r) * W + k)) * w.at(static_cast<size_t>(n) * W + k);
        sum += p;
        magnitude += std::fabs(p);
      }
      if (c.bias) sum += bias.at(static_cast<size_t>(n));
      const float rounded = encrt::half_to_float(encrt::float_to_half(static_cast<float>(sum)));
      const int e = rounded == 0.0f ? -24 : std::max(-24, std::ilogb(rounded) - 10);
      const double one_ulp = std::ldexp(1.0, e);
      const double err = std::ldexp(magnitude, -22) * W + std::ldexp(std::fabs(sum), -20) + std::ldexp(1.0, -40);
      const size_t at = static_cast<size_t>(r) * N + n;
      qkv[at] = rounded;
      flip[at] = one_ulp / 2 - std::fabs(sum - rounded) <= err * 1.5 ? one_ulp : 0.0;
    }

  int failures = 0;
  for (int b = 0; b < c.batch && failures < 5; ++b)
    for (int hd = 0; hd < c.heads && failures < 5; ++hd) {
      const auto q_at = [&](int i, int d) { return static_cast<size_t>(b * c.seq + i) * N + hd * c.D + d; };
      const auto k_at = [&](int j, int d) { return static_cast<size_t>(b * c.seq + j) * N + H + hd * c.D + d; };
      const auto v_at = [&](int j, int d) { return static_cast<size_t>(b * c.seq + j) * N + 2 * H + hd * c.D + d; };
      std::vector<double> k_max(static_cast<size_t>(c.D), 0.0), k_flip(static_cast<size_t>(c.D), 0.0),
          v_max(static_cast<size_t>(c.D), 0.0), v_flip(static_cast<size_t>(c.D), 0.0);
      bool any_real = false;
      for (int j = 0; j < c.seq; ++j) {
        if (!mask[static_cast<size_t>(b * c.seq + j)]) continue;
        any_real = true;
        for (int d = 0; d < c.D; ++d) {
          k_max[static_cast<size_t>(d)] = std::max(k_max[static_cast<size_t>(d)], std::fabs(qkv[k_at(j, d)]) + flip[k_at(j, d)]);
          k_flip[static_cast<size_t>(d)] = std::max(k_flip[static_cast<size_t>(d)], flip[k_at(j, d)]);
          v_max[static_cast<size_t>(d)] = std::max(v_max[static_cast<size_t>(d)], std::fabs(qkv[v_at(j, d)]));
          v_flip[static_cast<size_t>(d)] = std::max(v_flip[static_cast<size_t>(d)], flip[v_at(j, d)]);
        }
      }
      for (int i = 0; i < c.seq && failures < 5; ++i) {
        std::vector<double> s(static_cast<size_t>(c.seq), -std::numeric_limits<double>::infinity());
        double s_max = -std::numeric_limits<double>::infinity(), delta = 0.0, dot_magnitude = 0.0;
        for (int d = 0; d < c.D; ++d)
          delta += flip[q_at(i, d)] * k_max[static_cast<size_t>(d)] +
                   (std::fabs(qkv[q_at(i, d)]) + flip[q_at(i, d)]) * k_flip[static_cast<size_t>(d)];
        for (int j = 0; j < c.seq; ++j) {
          if (!mask[static_cast<size_t>(b * c.seq + j)]) continue;
          double dot = 0.0, magnitude = 0.0;
          for (int d = 0; d < c.D; ++d) {
            dot += qkv[q_at(i, d)] * qkv[k_at(j, d)];
            magnitude += std::fabs(qkv[q_at(i, d)] * qkv[k_at(j, d)]);
          }
          dot_magnitude = std::max(dot_magnitude, magnitude);
          s[static_cast<size_t>(j)] = dot * scale;
          s_max = std::max(s_max, s[static_cast<size_t>(j)]);
        }
        delta = scale * (delta + std::ldexp(dot_magnitude, -22) * c.D);
        double total = 0.0;
        std::vector<double> p(static_cast<size_t>(c.seq), 0.0);
        for (int j = 0; j < c.seq; ++j)
          if (any_real && mask[static_cast<size_t>(b * c.seq + j)]) total += p[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - s_max);
        for (int d = 0; d < c.D && failures < 5; ++d) {
          double want = 0.0;
          if (any_real)
            for (int j = 0; j < c.seq; ++j) want += p[static_cast<size_t>(j)] / total * qkv[v_at(j, d)];
          const float got = out.at(static_cast<size_t>(b * c.seq + i) * H + hd * c.D + d);
          const double bound = (std::exp(2.0 * delta + std::ldexp(1.0, -20)) * (1.0 + std::ldexp(1.0, -11)) - 1.0) *
                                   v_max[static_cast<size_t>(d)] +
                               v_flip[static_cast<size_t>(d)] + std::ldexp(std::fabs(want), -11) + std::ldexp(1.0, -24);
          if (!(std::fabs(got - want) <= bound)) {
            ++failures;
            FAIL_CHECK("sequence " << b << " head " << hd << " row " << i << " d " << d << ": kernel " << got << " want "
                                   << want << " (bound " << bound << ")");
          }
        }
      }
    }
  check_no_store_past(out, static_cast<size_t>(rows) * H);
  CHECK(failures == 0);
}

}  // namespace

TEST_CASE("cuda emulation: fused QKV + attention in clusters, against double", "[cuda_emulation][qkv_attention]") {
  for (int D : {32, 64})
    for (int seq : {128, 37}) {
      Case c;
      c.D = D, c.seq = seq;
      c.width = D == 32 ? 384 : 72;
      c.bias = seq == 128;
      c.mask = D == 32 ? Mask::kTails : seq == 128 ? Mask::kNone : Mask::kEmptySequence;
      check_case(c);
    }
}

TEST_CASE("cuda emulation: fused QKV + attention, a short sequence in one block", "[cuda_emulation][qkv_attention]") {
  Case c;
  c.batch = 3, c.seq = 5, c.heads = 1, c.D = 32, c.width = 40;
  check_case(c);
}
