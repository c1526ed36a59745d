// The tensor-core attention kernel's own source (attention_mma_kernel.cuh) run on the host under
// warp_emulation.h, against attention in double precision on the same fp16 values: head_dim 16,
// 32 and 64, sequences of 1 to 200 tokens (one and several 64-key tiles, partial 16-row warp
// tiles), the padding mask (holes, a sequence whose first key tiles are all padding, a sequence
// without a real token), the packed layout's offsets, and a few non-finite cases. This checks
// the kernel's fragment indexing, tiling, masking and online softmax on every build; the same
// cases on the GPU are the conformance suite's (tests/backend/test_ops.cpp, f16 attention).
//
// Bound: P is rounded to fp16 (≤ 2^-11 · max |v| = 1e-3 with V in [-2, 2]) and the output too
// (≤ 2^-12 · 2 = 5e-4): 2e-3 absolute, with fp32 sums and expf far below that.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/attention_mma_kernel.cuh"

namespace {

using encrt::cuda::AttentionArgs;
using encrt::cuda::Elem;

struct Case {
  int head_dim = 32, batch = 1, seq = 1, heads = 1;
  bool masked = false, packed = false;
  std::string describe() const {
    std::ostringstream s;
    s << "head_dim " << head_dim << " batch " << batch << " seq " << seq << " heads " << heads << (masked ? " masked" : "")
      << (packed ? " packed" : "");
    return s.str();
  }
};

// Sequence b's mask: 0 real but every fifth token, 1 real only in its second half and with
// holes, 2 no real token.
bool real_token(int b, int t, int seq) {
  return b % 3 == 0 ? t % 5 != 3 : b % 3 == 1 ? t >= seq / 2 && t % 3 != 1 : false;
}

void run_kernel(const AttentionArgs& a) {
  using namespace encrt::cuda::mma_attention;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + kQueryTile - 1) / kQueryTile),
                                     static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch)};
  switch (a.head_dim) {
    case 16: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<16>(a); }); break;
    case 32: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<32>(a); }); break;
    default: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<64>(a); }); break;
  }
}

// qkv: fp16 [rows, 3H]. Returns the kernel's output as floats [rows, H] (rows it did not write
// keep the sentinel 12345).
std::vector<float> kernel_output(const Case& c, const std::vector<uint16_t>& qkv, const std::vector<int32_t>& mask,
                                 const std::vector<int32_t>& offsets, int rows) {
  const int H = c.heads * c.head_dim;
  std::vector<uint16_t> out(static_cast<size_t>(rows) * H, encrt::float_to_half(12345.0f));
  AttentionArgs a;
  a.batch = c.batch;
  a.seq = c.seq;
  a.heads = c.heads;
  a.head_dim = c.head_dim;
  a.qkv = qkv.data();
  a.mask = c.masked ? mask.data() : nullptr;
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  a.out = out.data();
  a.type = Elem::kF16;
  a.offsets = c.packed ? offsets.data() : nullptr;
  run_kernel(a);
  std::vector<float> f(out.size());
  for (size_t i = 0; i < out.size(); ++i) f[i] = encrt::half_to_float(out[i]);
  return f;
}

// The reference's semantics (kernels/ref/attention_ref.cpp) in double: zeros for a sequence
// without a real token, NaN rows where a score is NaN or +inf.
std::vector<double> reference(const Case& c, const std::vector<uint16_t>& qkv, const std::vector<int32_t>& mask,
                              const std::vector<int32_t>& offsets, int rows) {
  const int D = c.head_dim, H = c.heads * D;
  const double scale = 1.0f / std::sqrt(static_cast<float>(D));
  auto at = [&](int row, int column) { return static_cast<double>(encrt::half_to_float(qkv[static_cast<size_t>(row) * 3 * H + column])); };
  std::vector<double> out(static_cast<size_t>(rows) * H, 0.0);
  for (int b = 0; b < c.batch; ++b) {
    const int r0 = c.packed ? offsets[b] : b * c.seq, n = c.packed ? offsets[b + 1] - offsets[b] : c.seq;
    for (int h = 0; h < c.heads; ++h)
      for (int i = 0; i < n; ++i) {
        std::vector<double> p(static_cast<size_t>(n), 0.0);
        double max = -INFINITY;
        bool any = false;
        for (int j = 0; j < n; ++j) {
          if (c.masked && !mask[static_cast<size_t>(b) * c.seq + j]) continue;
          any = true;
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += at(r0 + i, h * D + d) * at(r0 + j, H + h * D + d);
          p[static_cast<size_t>(j)] = dot * scale;
          if (p[static_cast<size_t>(j)] > max) max = p[static_cast<size_t>(j)];
        }
        if (!any) continue;
        double sum = 0;
        for (int j = 0; j < n; ++j) {
          const bool real = !c.masked || mask[static_cast<size_t>(b) * c.seq + j];
          p[static_cast<size_t>(j)] = real ? std::exp(p[static_cast<size_t>(j)] - max) : 0.0;
          sum += p[static_cast<size_t>(j)];
        }
        for (int d = 0; d < D; ++d) {
          double o = 0;
          for (int j = 0; j < n; ++j)
            if (p[static_cast<size_t>(j)] != 0.0) o += p[static_cast<size_t>(j)] / sum * at(r0 + j, 2 * H + h * D + d);
          out[static_cast<size_t>(r0 + i) * H + h * D + d] = o;
        }
      }
  }
  return out;
}

// Runs one case on values in [-2, 2] (the given specials written over a few of them) and
// compares every output: non-finite where the reference is, within 2e-3 elsewhere.
void check(const Case& c, uint32_t seed, const std::vector<std::pair<size_t, float>>& specials = {}) {
  INFO(c.describe());
  const int H = c.heads * c.head_dim;
  std::vector<int32_t> offsets(static_cast<size_t>(c.batch) + 1, 0), mask(static_cast<size_t>(c.batch) * c.seq, 1);
  for (int b = 0; b < c.batch; ++b) {
    offsets[static_cast<size_t>(b) + 1] = offsets[static_cast<size_t>(b)] + std::max(1, c.seq - 37 * b);
    for (int t = 0; t < c.seq; ++t) mask[static_cast<size_t>(b) * c.seq + t] = real_token(b, t, c.seq) ? 1 : 0;
  }
  const int rows = c.packed ? offsets.back() : c.batch * c.seq;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<uint16_t> qkv(static_cast<size_t>(rows) * 3 * H);
  for (uint16_t& v : qkv) v = encrt::float_to_half(u(rng));
  for (auto [at, value] : specials) qkv[at % qkv.size()] = encrt::float_to_half(value);
  const std::vector<float> got = kernel_output(c, qkv, mask, offsets, rows);
  const std::vector<double> want = reference(c, qkv, mask, offsets, rows);
  double worst = 0;
  int nonfinite_mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(want[i]) || !std::isfinite(got[i])) {
      const bool same = (std::isnan(want[i]) && std::isnan(got[i])) || (std::isinf(want[i]) && got[i] == want[i]);
      nonfinite_mismatches += same ? 0 : 1;
      continue;
    }
    worst = std::max(worst, std::fabs(got[i] - want[i]));
  }
  INFO("max abs error " << worst << ", non-finite mismatches " << nonfinite_mismatches);
  CHECK(nonfinite_mismatches == 0);
  CHECK(worst <= 2e-3);
}

}  // namespace

TEST_CASE("attention_mma (emulated): padded, with and without the mask", "[cuda_emulation]") {
  for (int head_dim : {16, 32, 64})
    for (auto [batch, seq] : {std::pair{1, 1}, std::pair{1, 7}, std::pair{3, 64}, std::pair{2, 130}})
      for (bool masked : {false, true}) check({head_dim, batch, seq, 2, masked, false}, 11 + static_cast<uint32_t>(seq));
  check({32, 3, 200, 1, true, false}, 12);  // sequence 1's first key tile wholly padded
}

TEST_CASE("attention_mma (emulated): packed layout", "[cuda_emulation]") {
  check({32, 3, 100, 2, false, true}, 21);  // sequences of 100, 63 and 26 tokens
  check({64, 2, 65, 1, false, true}, 22);   // 65 and 28: a second key tile of one key
}

TEST_CASE("attention_mma (emulated): NaN and Inf", "[cuda_emulation]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int H = 2 * 32;
  // A NaN in a query: its row's scores are NaN (a NaN row). +Inf in a key: each query's score
  // with it is +inf (a NaN row) or -inf (no weight), by the sign of the query's value there.
  // ±Inf in values: ±Inf in that column of the rows that weigh the key, as the reference.
  check({32, 2, 70, 2, true, false}, 31, {{5 * 3 * H + 3, nan}});
  check({32, 2, 70, 2, true, false}, 32, {{9 * 3 * H + H + 7, inf}});
  check({32, 2, 70, 2, true, false}, 33, {{4 * 3 * H + 2 * H + 1, inf}, {20 * 3 * H + 2 * H + 33, -inf}});
}
