// The int8 tensor-core attention kernel's own source (attention_i8_mma_kernel.cuh) run on the
// host under warp_emulation.h, against the CPU reference's int8 attention (ref::attention_i8):
// head_dim 32 and 64, sequences of 1 to 512 tokens (partial 16-row warp tiles, several 64-row
// query blocks, key counts that are not a multiple of the 32-key step), the padding mask (holes,
// a sequence whose first half is padding, a sequence without a real token), the packed layout's
// offsets, batch 1 and 3, and the non-finite cases of the reference's rule. The same cases on the
// GPU are the conformance suite's (tests/backend/test_ops.cpp, "[int8_attention]").
//
// Integer level: the shared memory the last block leaves holds its int8 Q rows and the sequence's
// int8 K and V rows with their scales; they must be the reference's quantization bit for bit.
// Outputs: the host's expf is the reference's std::exp here, so only the order of the row sum's
// additions differs (a few ulps in 1/sum): an output moves by a few ulps relative to itself, or by
// s_p · |v| ≤ max_j |V_j| / 255 for each u that crosses a rounding boundary (the kernel header's
// bound). Checked: every output within 2 · max|V| / 255 + 1e-5 · |ref| (two moved u), at least 99%
// within 1e-5 · |ref| + 1e-7 (no u moved), NaN exactly where the reference has NaN.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "cuda_emulation/attention_cases.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/attention_i8_mma_kernel.cuh"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::AttentionArgs;
using encrt::cuda::Elem;
namespace mk = encrt::cuda::mma_attention_i8;

using Case = encrt::emulation::AttentionCase;
using encrt::emulation::real_token;

void run_kernel(const AttentionArgs& a) {
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + mk::kQueryTile - 1) / mk::kQueryTile),
                                     static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch)};
  encrt::emulation::set_dynamic_shared_bytes(mk::shared_layout(a.head_dim, a.seq).bytes);
  if (a.head_dim == 32)
    encrt::emulation::launch(grid, mk::kThreads, [&] { mk::attention_i8_mma_kernel<32>(a); });
  else
    encrt::emulation::launch(grid, mk::kThreads, [&] { mk::attention_i8_mma_kernel<64>(a); });
}

// The last block's shared memory (block x = last query tile, head heads − 1, sequence batch − 1,
// of a padded run: every block runs there) against the reference's quantization.
void check_shared_bytes(const Case& c, const std::vector<float>& qkv, const std::vector<int32_t>& mask, float scale) {
  const int D = c.head_dim, H = c.heads * D, b = c.batch - 1, h = c.heads - 1;
  const int q0 = (c.seq - 1) / mk::kQueryTile * mk::kQueryTile;
  const mk::SharedLayout L = mk::shared_layout(D, c.seq);
  const unsigned char* smem = encrt::emulation::dynamic_shared_memory();
  const auto* qs = reinterpret_cast<const int8_t*>(smem + L.q);
  const auto* ks = reinterpret_cast<const int8_t*>(smem + L.k);
  const auto* vt = reinterpret_cast<const int8_t*>(smem + L.vt);
  const auto* sq = reinterpret_cast<const float*>(smem + L.sq);
  const auto* sk = reinterpret_cast<const float*>(smem + L.sk);
  const auto* sv = reinterpret_cast<const float*>(smem + L.sv);
  const unsigned char* real = smem + L.real;
  int8_t q[64];
  long byte_mismatches = 0, scale_mismatches = 0;
  auto row = [&](int t) { return qkv.data() + (static_cast<size_t>(b) * c.seq + t) * 3 * H + static_cast<size_t>(h) * D; };
  for (int r = 0; r < mk::kQueryTile && q0 + r < c.seq; ++r) {
    const float s = encrt::kernels::ref::quantize_symmetric_i8(row(q0 + r), D, q);
    scale_mismatches += sq[r] != s * scale;
    for (int d = 0; d < D; ++d) byte_mismatches += qs[r * L.ld_qk + d] != q[d];
  }
  for (int j = 0; j < L.keys; ++j) {
    const bool in = j < c.seq;
    const float s_k = in ? encrt::kernels::ref::quantize_symmetric_i8(row(j) + H, D, q) : 1.0f;
    if (!in) std::fill(q, q + D, int8_t{0});
    scale_mismatches += std::memcmp(&sk[j], &s_k, sizeof s_k) != 0;
    for (int d = 0; d < D; ++d) byte_mismatches += ks[j * L.ld_qk + d] != q[d];
    const float s_v = in ? encrt::kernels::ref::quantize_symmetric_i8(row(j) + 2 * H, D, q) : 1.0f;
    if (!in) std::fill(q, q + D, int8_t{0});
    scale_mismatches += std::memcmp(&sv[j], &s_v, sizeof s_v) != 0;
    for (int d = 0; d < D; ++d) byte_mismatches += vt[d * L.ld_vt + (j & ~31) + mk::pv_column(j & 31)] != q[d];
    const bool is_real = in && (!c.masked || mask[static_cast<size_t>(b) * c.seq + j] != 0);
    byte_mismatches += (real[j] != 0) != is_real;
  }
  INFO("shared memory of block (" << q0 / mk::kQueryTile << ", " << h << ", " << b << "): " << byte_mismatches
                                  << " byte mismatches, " << scale_mismatches << " scale mismatches");
  CHECK(byte_mismatches == 0);
  CHECK(scale_mismatches == 0);
}

// The pv_column permutation is one: every logical column of a 32-key step has one key.
TEST_CASE("attention_i8_mma (emulated): P·V key order is a permutation", "[cuda_emulation]") {
  std::vector<int> seen(32, 0);
  for (int p = 0; p < 32; ++p) ++seen[static_cast<size_t>(mk::pv_column(p))];
  CHECK(std::count(seen.begin(), seen.end(), 1) == 32);
}

// Runs one case on values in [-2, 2] (the given specials written over a few of them) and
// compares every output with the reference's (the header's bound).
void check(const Case& c, uint32_t seed, const std::vector<std::pair<size_t, float>>& specials = {}) {
  INFO(c.describe());
  const int D = c.head_dim, H = c.heads * D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::vector<int32_t> offsets(static_cast<size_t>(c.batch) + 1, 0), mask(static_cast<size_t>(c.batch) * c.seq, 1);
  for (int b = 0; b < c.batch; ++b) {
    offsets[static_cast<size_t>(b) + 1] = offsets[static_cast<size_t>(b)] + std::max(1, c.seq - 37 * b);
    for (int t = 0; t < c.seq; ++t) mask[static_cast<size_t>(b) * c.seq + t] = real_token(b, t, c.seq) ? 1 : 0;
  }
  const int rows = c.packed ? offsets.back() : c.batch * c.seq;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> qkv(static_cast<size_t>(rows) * 3 * H);
  for (float& v : qkv) v = u(rng);
  for (auto [at, value] : specials) qkv[at % qkv.size()] = value;

  std::vector<float> got(static_cast<size_t>(rows) * H, 12345.0f);
  AttentionArgs a;
  a.batch = c.batch;
  a.seq = c.seq;
  a.heads = c.heads;
  a.head_dim = D;
  a.qkv = qkv.data();
  a.mask = c.masked ? mask.data() : nullptr;
  a.scale = scale;
  a.out = got.data();
  a.type = Elem::kF32;
  a.offsets = c.packed ? offsets.data() : nullptr;
  run_kernel(a);
  if (!c.packed) check_shared_bytes(c, qkv, mask, scale);

  // The reference, one (sequence, head) at a time; a packed sequence as a batch of one with its
  // own length (all its tokens real).
  std::vector<float> want(got.size(), 0.0f);
  std::vector<unsigned char> scratch(encrt::kernels::ref::attention_i8_scratch(c.seq, D) + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  for (int b = 0; b < c.batch; ++b) {
    const int r0 = c.packed ? offsets[static_cast<size_t>(b)] : 0;
    encrt::kernels::AttentionArgs r;
    r.seq = c.packed ? offsets[static_cast<size_t>(b) + 1] - r0 : c.seq;
    r.heads = c.heads;
    r.head_dim = D;
    r.qkv = qkv.data() + static_cast<size_t>(r0) * 3 * H;
    r.ld_qkv = 3 * H;
    r.mask = c.masked && !c.packed ? mask.data() : nullptr;
    r.scale = scale;
    r.out = want.data() + static_cast<size_t>(r0) * H;
    r.ld_out = H;
    for (int h = 0; h < c.heads; ++h) encrt::kernels::ref::attention_i8(r, c.packed ? 0 : b, h, aligned);
  }

  // max |V| of the whole input (a bound on every row's).
  float vmax = 0.0f;
  for (int t = 0; t < rows; ++t)
    for (int d = 0; d < H; ++d) {
      const float v = std::fabs(qkv[static_cast<size_t>(t) * 3 * H + 2 * H + d]);
      if (std::isfinite(v)) vmax = std::max(vmax, v);
    }
  const double moved_u = 2.0 * vmax / 255.0;
  long nonfinite_mismatches = 0, far = 0, not_near = 0, finite = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(want[i]) || !std::isfinite(got[i])) {
      nonfinite_mismatches += std::isnan(want[i]) && std::isnan(got[i]) ? 0 : 1;
      continue;
    }
    ++finite;
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    worst = std::max(worst, e);
    far += e > moved_u + 1e-5 * std::fabs(want[i]);
    not_near += e > 1e-5 * std::fabs(want[i]) + 1e-7;
  }
  INFO("max abs error " << worst << " (bound " << moved_u << "), " << far << " past it, " << not_near << " of " << finite
                        << " past 1e-5 relative, non-finite mismatches " << nonfinite_mismatches);
  CHECK(nonfinite_mismatches == 0);
  CHECK(far == 0);
  CHECK(not_near <= finite / 100);
}

}  // namespace

TEST_CASE("attention_i8_mma (emulated): padded, with and without the mask", "[cuda_emulation]") {
  for (int head_dim : {32, 64})
    for (auto [batch, seq] : {std::pair{1, 1}, std::pair{3, 7}, std::pair{1, 64}, std::pair{3, 128}, std::pair{1, 200}})
      for (bool masked : {false, true}) check({head_dim, batch, seq, 2, masked, false}, 11 + static_cast<uint32_t>(seq));
  check({32, 3, 200, 1, true, false}, 12);  // sequence 1's first 100 keys padding, sequence 2 none real
}

TEST_CASE("attention_i8_mma (emulated): 512 tokens (the shared-memory bound)", "[cuda_emulation]") {
  check({64, 1, 512, 1, false, false}, 41);
  check({32, 3, 512, 1, true, false}, 42);
}

TEST_CASE("attention_i8_mma (emulated): packed layout", "[cuda_emulation]") {
  check({32, 3, 100, 2, false, true}, 21);  // sequences of 100, 63 and 26 tokens
  check({64, 1, 65, 1, false, true}, 22);
  check({64, 3, 130, 1, false, true}, 23);  // 130, 93, 56
}

TEST_CASE("attention_i8_mma (emulated): NaN and Inf (the reference's rule)", "[cuda_emulation]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const size_t H = 2 * 32, row = 3 * H;
  // A NaN in a query quantizes to 0 (a finite row). +Inf in a real key: its scale is inf, so every
  // query's score with it is inf or NaN (every row NaN). Inf in the V of a real key: the head's
  // rows NaN; of a padded key (sequence 0's token 3): nothing. A score past float's range (a query
  // and a key scaled by 1e20): that query's row NaN.
  check({32, 2, 70, 2, true, false}, 31, {{5 * row + 3, nan}});
  check({32, 2, 70, 2, true, false}, 32, {{9 * row + H + 7, inf}});
  check({32, 2, 70, 2, true, false}, 33, {{4 * row + 2 * H + 1, inf}});
  check({32, 2, 70, 2, true, false}, 34, {{3 * row + 2 * H + 1, inf}, {3 * row + 2 * H + 40, -inf}});
  std::vector<std::pair<size_t, float>> huge;
  for (size_t d = 0; d < 32; ++d) huge.push_back({6 * row + d, 1e20f}), huge.push_back({9 * row + H + d, 1e20f});
  check({32, 2, 70, 2, true, false}, 35, huge);
}
