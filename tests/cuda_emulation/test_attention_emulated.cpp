// attention.cu's SIMT kernel (attention_kernel.cuh) run on the host under warp_emulation.h, with
// the launcher's grid and its choice of DMAX (32, 64, 128 by head_dim), against
// kernels::ref::attention_f32 on the same values (fp16 inputs read as floats): head_dim 8 to 128,
// sequences of 1 to 100 (one and several 32-key tiles, partial 4-row blocks), masks with holes
// and a sequence without a real token (zeros), the probabilities, the packed layout's offsets
// (each sequence given to the reference alone), and NaN / Inf inputs (NaN and ±Inf in the same
// places as the reference).
//
// Bound, with u = 2^-24, S keys, D dims and V in [-1, 1]: the scores are the reference's (the
// same fp32 dot product; on the GPU FMA-contracted, ≤ D·u relative); each probability carries the
// online softmax's rescalings (one per 32-key tile), expf's 2 ulp (CUDA's bound) and the sum's S
// roundings in another order, and P·V S more: |Δo| ≤ 4u·(S + D + 16). Probabilities (≤ 1): the
// same without the P·V term. An fp16 output adds half its ulp: 2^-11·|o| + 2^-25.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/attention_kernel.cuh"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::AttentionArgs;
using encrt::cuda::Elem;

struct Case {
  int head_dim = 32, batch = 1, seq = 1, heads = 1;
  Elem type = Elem::kF32;
  bool masked = false, probs = false, packed = false;
  std::string describe() const {
    std::ostringstream s;
    s << "head_dim " << head_dim << " batch " << batch << " seq " << seq << " heads " << heads
      << (type == Elem::kF16 ? " f16" : " f32") << (masked ? " masked" : "") << (probs ? " probs" : "")
      << (packed ? " packed" : "");
    return s.str();
  }
};

// Sequence b's mask: 0 real but every fifth token, 1 no real token, 2 real only in its second
// half and with holes.
bool real_token(int b, int t, int seq) { return b % 3 == 0 ? t % 5 != 3 : b % 3 == 1 ? false : t >= seq / 2 && t % 3 != 1; }

template <int D, typename T>
void launch(const AttentionArgs& a) {
  using namespace encrt::cuda::simt_attention;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + kWarps - 1) / kWarps), static_cast<unsigned>(a.heads),
                                     static_cast<unsigned>(a.batch)};
  if (a.probs)
    encrt::emulation::launch_blocks(grid, kWarps * 32, [&] { attention_kernel<D, T, true>(a); });
  else
    encrt::emulation::launch_blocks(grid, kWarps * 32, [&] { attention_kernel<D, T, false>(a); });
}

// attention.cu's launch_typed: DMAX by head_dim.
template <typename T>
void launch_typed(const AttentionArgs& a) {
  if (a.head_dim <= 32)
    launch<32, T>(a);
  else if (a.head_dim <= 64)
    launch<64, T>(a);
  else
    launch<128, T>(a);
}

void check(const Case& c, uint32_t seed, const std::vector<std::pair<size_t, float>>& specials = {}) {
  INFO(c.describe());
  const int D = c.head_dim, H = c.heads * D;
  std::vector<int32_t> offsets(static_cast<size_t>(c.batch) + 1, 0), mask(static_cast<size_t>(c.batch) * c.seq, 1);
  for (int b = 0; b < c.batch; ++b) {
    // Packed: lengths seq, seq − 33, ... (at least 1).
    offsets[static_cast<size_t>(b) + 1] = offsets[static_cast<size_t>(b)] + std::max(1, c.seq - 33 * b);
    for (int t = 0; t < c.seq; ++t) mask[static_cast<size_t>(b) * c.seq + t] = real_token(b, t, c.seq) ? 1 : 0;
  }
  const int rows = c.packed ? offsets.back() : c.batch * c.seq;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> qkv(static_cast<size_t>(rows) * 3 * H);
  for (float& v : qkv) v = u(rng);
  for (auto [at, value] : specials) qkv[at % qkv.size()] = value;
  std::vector<uint16_t> qkv_h(qkv.size());
  if (c.type == Elem::kF16)
    for (size_t i = 0; i < qkv.size(); ++i) qkv_h[i] = encrt::float_to_half(qkv[i]), qkv[i] = encrt::half_to_float(qkv_h[i]);

  const size_t n_out = static_cast<size_t>(rows) * H, n_probs = static_cast<size_t>(c.batch) * c.heads * c.seq * c.seq;
  std::vector<float> out(n_out, 12345.0f), probs(c.probs ? n_probs : 0, 12345.0f);
  std::vector<uint16_t> out_h(n_out, encrt::float_to_half(12345.0f));
  AttentionArgs a;
  a.batch = c.batch;
  a.seq = c.seq;
  a.heads = c.heads;
  a.head_dim = D;
  a.qkv = c.type == Elem::kF16 ? static_cast<const void*>(qkv_h.data()) : qkv.data();
  a.mask = c.masked ? mask.data() : nullptr;
  a.scale = 1.0f / std::sqrt(static_cast<float>(D));
  a.out = c.type == Elem::kF16 ? static_cast<void*>(out_h.data()) : out.data();
  a.probs = c.probs ? probs.data() : nullptr;
  a.type = c.type;
  a.offsets = c.packed ? offsets.data() : nullptr;
  if (c.type == Elem::kF16)
    launch_typed<__half>(a);
  else
    launch_typed<float>(a);
  if (c.type == Elem::kF16)
    for (size_t i = 0; i < n_out; ++i) out[i] = encrt::half_to_float(out_h[i]);

  // The reference, per (sequence, head); a packed sequence alone, as a batch of one.
  std::vector<float> want(n_out, 0.0f), want_probs(c.probs ? n_probs : 0, 0.0f);
  std::vector<float> scratch(static_cast<size_t>(c.seq) + 16);
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.heads; ++h) {
      encrt::kernels::AttentionArgs r;
      r.heads = c.heads;
      r.head_dim = D;
      r.ld_qkv = 3 * H;
      r.ld_out = H;
      r.scale = a.scale;
      if (c.packed) {
        const int first = offsets[static_cast<size_t>(b)];
        r.seq = offsets[static_cast<size_t>(b) + 1] - first;
        r.qkv = qkv.data() + static_cast<size_t>(first) * 3 * H;
        r.out = want.data() + static_cast<size_t>(first) * H;
        encrt::kernels::ref::attention_f32(r, 0, h, scratch.data());
      } else {
        r.seq = c.seq;
        r.qkv = qkv.data();
        r.mask = a.mask;
        r.out = want.data();
        r.probs = c.probs ? want_probs.data() : nullptr;
        encrt::kernels::ref::attention_f32(r, b, h, scratch.data());
      }
    }

  constexpr double u32 = 0x1p-24;
  const double bound = 4.0 * u32 * (c.seq + D + 16), probs_bound = 4.0 * u32 * (c.seq + 16);
  auto compare = [](const std::vector<float>& got, const std::vector<float>& expected, double tol, double relative) {
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!std::isfinite(expected[i]) || !std::isfinite(got[i])) {
        const bool same = (std::isnan(expected[i]) && std::isnan(got[i])) || got[i] == expected[i];
        bad += same ? 0 : 1;
        continue;
      }
      const double t = tol + relative * std::fabs(expected[i]);
      const double err = std::fabs(static_cast<double>(got[i]) - expected[i]);
      worst = std::max(worst, err / t);
      bad += err <= t ? 0 : 1;
    }
    UNSCOPED_INFO("worst error / bound " << worst);
    return bad;
  };
  const double relative = c.type == Elem::kF16 ? 0x1p-11 : 0.0, absolute = bound + (c.type == Elem::kF16 ? 0x1p-25 : 0.0);
  CHECK(compare(out, want, absolute, relative) == 0);
  if (c.probs) CHECK(compare(probs, want_probs, probs_bound, 0.0) == 0);
}

}  // namespace

TEST_CASE("attention (emulated): head_dim 8 to 128, masks with holes, a sequence without a real token", "[cuda_emulation]") {
  for (int head_dim : {8, 16, 32, 64, 128})
    check({head_dim, 2, 33, 1, head_dim % 32 == 16 ? Elem::kF16 : Elem::kF32, true, false, false},
          static_cast<uint32_t>(head_dim));
  check({32, 1, 1, 2, Elem::kF32, false, false, false}, 1);
  check({64, 1, 31, 1, Elem::kF16, false, false, false}, 2);
  check({32, 1, 100, 1, Elem::kF32, true, false, false}, 3);  // four tiles, the last of 4 keys
}

TEST_CASE("attention (emulated): probabilities", "[cuda_emulation]") {
  check({16, 3, 33, 1, Elem::kF32, true, true, false}, 11);
  check({64, 1, 31, 2, Elem::kF16, false, true, false}, 12);
}

TEST_CASE("attention (emulated): packed layout", "[cuda_emulation]") {
  check({32, 3, 40, 1, Elem::kF32, false, false, true}, 21);  // sequences of 40, 7 and 1 tokens
  check({128, 2, 34, 1, Elem::kF16, false, false, true}, 22);  // 34 and 1: a second tile of 2 keys
}

TEST_CASE("attention (emulated): NaN and Inf where the reference has them", "[cuda_emulation]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int H = 2 * 16;
  // A NaN in a query: its row is NaN. +Inf in a key: each query's score with it is +inf (a NaN
  // row) or -inf (no weight) by the sign of the query's value there. ±Inf in values: ±Inf in that
  // column of the rows that weigh the key.
  check({16, 1, 33, 2, Elem::kF32, true, true, false}, 31, {{5 * 3 * H + 3, nan}});
  check({16, 1, 33, 2, Elem::kF32, true, false, false}, 32, {{9 * 3 * H + H + 7, inf}});
  check({16, 1, 33, 2, Elem::kF16, true, false, false}, 33, {{4 * 3 * H + 2 * H + 1, inf}, {20 * 3 * H + 2 * H + 17, -inf}});
}
