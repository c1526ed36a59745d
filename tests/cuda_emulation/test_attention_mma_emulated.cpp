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
//
// fp32 QKV (the bf16 instance: an int8 model's attention) on the same shapes, the packed layout,
// values past fp16's range (Q to 2e5, V to 1e6) and the non-finite cases, against two references
// in double (u = 2^-8, bf16's rounding; W = Σ_j p_j |v_jd|, the reference's weights):
//   - on Q, K and V rounded to bf16 by this test (its own rounding, not the emulation's): only
//     P's rounding to bf16 is left, ≤ u · W, plus fp32 sums and expf (2^-14 · W: scores of at
//     most ~10 in fp32 move p by ~1e-6 relative);
//   - on the fp32 values (what the CPU's fp32 attention computes): Q's and K's rounding move a
//     score by at most Δ = 2.004u · scale · max_j Σ_d |q_d k_jd|, a probability by a factor within
//     e^{±2Δ}, and with V's and P's rounding an output by at most (e^{2Δ} (1 + u)^2 − 1) · W
//     (the kernel header's bound), plus the same 2^-14 · W.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "cuda_emulation/attention_cases.h"
#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/attention_mma_kernel.cuh"
#include "backends/cuda/kernels/attention_mma_whole_keys_kernel.cuh"

namespace {

using encrt::cuda::AttentionArgs;
using encrt::cuda::Elem;

using Case = encrt::emulation::AttentionCase;
using encrt::emulation::real_token;

// Which instance the checks below run: each warp owning 16 query rows (1), or 4 warps splitting
// the keys of 16 rows (4); every test case runs each (Catch2's GENERATE).
// (-1: each warp owning 16 rows, with the next key tile held in registers: AttentionArgs::prefetch_keys;
// -6: each warp owning 16 rows, the kernel compiled for 6 blocks a multiprocessor where the
// launcher takes it, head_dim 32: AttentionArgs::six_blocks; emulation runs it as it runs the
// others, so this checks that it is the unsplit layout's code, not the register cap itself;
// -2: each warp owning 16 rows, every key of the sequence in shared memory at once, where the
// launcher takes it (fp16, seq ≤ 128: AttentionArgs::whole_keys; else the tiled layout, as there);
// -8: the same in the split layout, 4 warps sharing 16 rows (fp16, seq ≤ 128, head_dim ≤ 32; else
// the tiled split layout).)
int g_key_split = 1;

// The whole-keys kernel of layout kSplit where the launcher takes it (fp16, seq ≤ 128, and
// head_dim ≤ 32 in the split layout), else that layout's tiled kernel, as attention_mma.cu does.
template <int D, typename Io, int kSplit>
void run_whole_keys_at(const AttentionArgs& a, const encrt::emulation::Index& grid) {
  using namespace encrt::cuda::mma_attention;
  if constexpr (std::is_same_v<Io, __half> && (kSplit == 1 || D <= 32)) {
    if (a.seq <= kWholeKeys) {
      encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_whole_keys_kernel<D, kSplit>(a); });
      return;
    }
  }
  encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<D, Io, kSplit>(a); });
}
template <typename Io, int kSplit>
void run_whole_keys(const AttentionArgs& a) {
  using namespace encrt::cuda::mma_attention;
  constexpr int rows = kQueryTileOf<kSplit>;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + rows - 1) / rows), static_cast<unsigned>(a.heads),
                                     static_cast<unsigned>(a.batch)};
  switch (a.head_dim) {
    case 16: run_whole_keys_at<16, Io, kSplit>(a, grid); break;
    case 32: run_whole_keys_at<32, Io, kSplit>(a, grid); break;
    default: run_whole_keys_at<64, Io, kSplit>(a, grid); break;
  }
}

template <typename Io>
void run_six_blocks(const AttentionArgs& a) {
  using namespace encrt::cuda::mma_attention;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + kQueryTile - 1) / kQueryTile),
                                     static_cast<unsigned>(a.heads), static_cast<unsigned>(a.batch)};
  switch (a.head_dim) {
    case 16: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<16, Io, 1>(a); }); break;
    case 32: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_six_blocks_kernel<32, Io>(a); }); break;
    default: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<64, Io, 1>(a); }); break;
  }
}

template <typename Io, int kSplit, bool kHold = (kSplit > 1)>
void run_split(const AttentionArgs& a) {
  using namespace encrt::cuda::mma_attention;
  constexpr int rows = kQueryTileOf<kSplit>;
  const encrt::emulation::Index grid{static_cast<unsigned>((a.seq + rows - 1) / rows), static_cast<unsigned>(a.heads),
                                     static_cast<unsigned>(a.batch)};
  switch (a.head_dim) {
    case 16: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<16, Io, kSplit, kHold>(a); }); break;
    case 32: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<32, Io, kSplit, kHold>(a); }); break;
    default: encrt::emulation::launch(grid, kMmaWarps * 32, [&] { attention_mma_kernel<64, Io, kSplit, kHold>(a); }); break;
  }
}

// Io: the activations' type (__half: the fp16 instance, float: the bf16 one).
template <typename Io>
void run_kernel(const AttentionArgs& a) {
  if (g_key_split == 4)
    run_split<Io, 4>(a);
  else if (g_key_split == -1)
    run_split<Io, 1, true>(a);
  else if (g_key_split == -6)
    run_six_blocks<Io>(a);
  else if (g_key_split == -2)
    run_whole_keys<Io, 1>(a);
  else if (g_key_split == -8)
    run_whole_keys<Io, 4>(a);
  else
    run_split<Io, 1>(a);
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
  encrt::emulation::reset_reads();
  encrt::emulation::allow_reads(qkv.data(), qkv.size() * sizeof(uint16_t));
  run_kernel<__half>(a);
  CHECK(encrt::emulation::reset_reads() == 0);  // no cp.async (the whole-keys kernel's) outside QKV
  std::vector<float> f(out.size());
  for (size_t i = 0; i < out.size(); ++i) f[i] = encrt::half_to_float(out[i]);
  return f;
}

// Attention's outputs in double, with what the bf16 bounds need of each: W = Σ_j p_j |v_jd| and
// scale · max_j Σ_d |q_d k_jd| (per output; the same along a row's head).
struct Reference {
  std::vector<double> out, weights, dots;
};

// The reference's semantics (kernels/ref/attention_ref.cpp) in double on the values at(row,
// column) of the [rows, 3H] QKV: zeros for a sequence without a real token, NaN rows where a
// score is NaN or +inf.
template <typename At>
Reference attend(const Case& c, At at, const std::vector<int32_t>& mask, const std::vector<int32_t>& offsets, int rows) {
  const int D = c.head_dim, H = c.heads * D;
  const double scale = 1.0f / std::sqrt(static_cast<float>(D));
  Reference ref;
  std::vector<double>& out = ref.out;
  out.assign(static_cast<size_t>(rows) * H, 0.0);
  ref.weights.assign(out.size(), 0.0);
  ref.dots.assign(out.size(), 0.0);
  for (int b = 0; b < c.batch; ++b) {
    const int r0 = c.packed ? offsets[b] : b * c.seq, n = c.packed ? offsets[b + 1] - offsets[b] : c.seq;
    for (int h = 0; h < c.heads; ++h)
      for (int i = 0; i < n; ++i) {
        std::vector<double> p(static_cast<size_t>(n), 0.0);
        double max = -INFINITY, max_abs_dot = 0;
        bool any = false;
        for (int j = 0; j < n; ++j) {
          if (c.masked && !mask[static_cast<size_t>(b) * c.seq + j]) continue;
          any = true;
          double dot = 0, abs_dot = 0;
          for (int d = 0; d < D; ++d) {
            const double product = at(r0 + i, h * D + d) * at(r0 + j, H + h * D + d);
            dot += product;
            abs_dot += std::fabs(product);
          }
          p[static_cast<size_t>(j)] = dot * scale;
          if (p[static_cast<size_t>(j)] > max) max = p[static_cast<size_t>(j)];
          max_abs_dot = std::max(max_abs_dot, abs_dot * scale);
        }
        if (!any) continue;
        double sum = 0;
        for (int j = 0; j < n; ++j) {
          const bool real = !c.masked || mask[static_cast<size_t>(b) * c.seq + j];
          p[static_cast<size_t>(j)] = real ? std::exp(p[static_cast<size_t>(j)] - max) : 0.0;
          sum += p[static_cast<size_t>(j)];
        }
        for (int d = 0; d < D; ++d) {
          double o = 0, w = 0;
          for (int j = 0; j < n; ++j)
            if (p[static_cast<size_t>(j)] != 0.0) {
              const double v = at(r0 + j, 2 * H + h * D + d);
              o += p[static_cast<size_t>(j)] / sum * v;
              w += p[static_cast<size_t>(j)] / sum * std::fabs(v);
            }
          const size_t k = static_cast<size_t>(r0 + i) * H + h * D + d;
          out[k] = o;
          ref.weights[k] = w;
          ref.dots[k] = max_abs_dot;
        }
      }
  }
  return ref;
}

std::vector<double> reference(const Case& c, const std::vector<uint16_t>& qkv, const std::vector<int32_t>& mask,
                              const std::vector<int32_t>& offsets, int rows) {
  const size_t ld = 3 * static_cast<size_t>(c.heads) * c.head_dim;
  auto at = [&](int row, int column) { return static_cast<double>(encrt::half_to_float(qkv[static_cast<size_t>(row) * ld + column])); };
  return attend(c, at, mask, offsets, rows).out;
}

// The case's packed offsets (sequence b: seq − 37b tokens, at least 1) and padding mask; returns
// the rows of QKV.
int layout(const Case& c, std::vector<int32_t>* offsets, std::vector<int32_t>* mask) {
  offsets->assign(static_cast<size_t>(c.batch) + 1, 0);
  mask->assign(static_cast<size_t>(c.batch) * c.seq, 1);
  for (int b = 0; b < c.batch; ++b) {
    (*offsets)[static_cast<size_t>(b) + 1] = (*offsets)[static_cast<size_t>(b)] + std::max(1, c.seq - 37 * b);
    for (int t = 0; t < c.seq; ++t) (*mask)[static_cast<size_t>(b) * c.seq + t] = real_token(b, t, c.seq) ? 1 : 0;
  }
  return c.packed ? offsets->back() : c.batch * c.seq;
}

// Runs one case on values in [-2, 2] (the given specials written over a few of them) and
// compares every output: non-finite where the reference is, within 2e-3 elsewhere.
void check(const Case& c, uint32_t seed, const std::vector<std::pair<size_t, float>>& specials = {}) {
  INFO(c.describe());
  const int H = c.heads * c.head_dim;
  std::vector<int32_t> offsets, mask;
  const int rows = layout(c, &offsets, &mask);
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
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  for (int head_dim : {16, 32, 64})
    for (auto [batch, seq] : {std::pair{1, 1}, std::pair{1, 7}, std::pair{3, 64}, std::pair{2, 130}})
      for (bool masked : {false, true}) check({head_dim, batch, seq, 2, masked, false}, 11 + static_cast<uint32_t>(seq));
  check({32, 3, 200, 1, true, false}, 12);  // sequence 1's first key tile wholly padded
  // 128 tokens, the whole-keys layout's longest: holes (sequence 0), the first 64 keys padded (1),
  // no real token (2).
  check({32, 3, 128, 2, true, false}, 13);
  check({64, 3, 128, 1, true, false}, 14);
  check({16, 3, 128, 1, true, false}, 15);
}

TEST_CASE("attention_mma (emulated): packed layout", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  check({32, 3, 100, 2, false, true}, 21);  // sequences of 100, 63 and 26 tokens
  check({64, 2, 65, 1, false, true}, 22);   // 65 and 28: a second key tile of one key
}

TEST_CASE("attention_mma (emulated): NaN and Inf", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int H = 2 * 32;
  // A NaN in a query: its row's scores are NaN (a NaN row). +Inf in a key: each query's score
  // with it is +inf (a NaN row) or -inf (no weight), by the sign of the query's value there.
  // ±Inf in values: ±Inf in that column of the rows that weigh the key, as the reference.
  check({32, 2, 70, 2, true, false}, 31, {{5 * 3 * H + 3, nan}});
  check({32, 2, 70, 2, true, false}, 32, {{9 * 3 * H + H + 7, inf}});
  check({32, 2, 70, 2, true, false}, 33, {{4 * 3 * H + 2 * H + 1, inf}, {20 * 3 * H + 2 * H + 33, -inf}});
  // A masked key (sequence 0 masks every fifth token from 3) whose value holds Inf and whose key
  // holds NaN: it has no weight, so no output changes (the kernel must not stage its rows: 0 · Inf
  // is NaN). Rows 8 and 13 are in the first 64-key tile, row 68 in the second.
  check({32, 2, 70, 2, true, false}, 34,
        {{8 * 3 * H + 2 * H + 5, inf}, {13 * 3 * H + H + 2, nan}, {68 * 3 * H + 2 * H + 40, -inf}});
  // A query whose every real score is -inf (-Inf in its dimension 5, every real key +1 there): a
  // NaN row, as the reference's exp(-inf - -inf). Sequence 1 of 64 tokens has real keys only from
  // 32 on, so under the split layout warps 0 and 1 see no real key and warps 2 and 3 only -inf
  // scores: the row is NaN only if the merge ORs "has a real key" over the warps (warp 0's own
  // flag would give zeros).
  std::vector<std::pair<size_t, float>> minus_inf_scores = {{(64 + 40) * 3 * H + 5, -inf}};
  for (int j = 32; j < 64; ++j)
    if (real_token(1, j, 64)) minus_inf_scores.push_back({static_cast<size_t>(64 + j) * 3 * H + H + 5, 1.0f});
  check({32, 3, 64, 2, true, false}, 35, minus_inf_scores);
}

namespace {

// fp32 to bf16 and back, round to nearest even, by this test's own arithmetic (the significand at
// 8 bits by nearbyint, fp32's exponent range; not the emulation's bit trick): the values the
// kernel stages. Non-finite values stay as they are.
double bf16_rounded(float f) {
  if (!std::isfinite(f) || f == 0.0f) return f;
  const int e = std::max(std::ilogb(f), -126);  // below 2^-126 bf16 is subnormal: a fixed step
  const double step = std::ldexp(1.0, e - 7);
  return std::nearbyint(static_cast<double>(f) / step) * step;  // the default mode: to nearest, ties even
}

// The ranges of Q, K and V values (uniform, symmetric about 0).
struct Ranges {
  float q = 1.0f, k = 1.0f, v = 2.0f;
};

// Runs one case of the bf16 instance on fp32 QKV (the given specials written over a few values)
// and holds it to both references (the file's header comment): non-finite where they are, and
// within u · W and (e^{2Δ} (1 + u)^2 − 1) · W (each + 2^-14 · W) elsewhere.
void check_f32(const Case& c, uint32_t seed, Ranges r = {}, const std::vector<std::pair<size_t, float>>& specials = {}) {
  INFO("fp32 QKV, " << c.describe() << ", |q| <= " << r.q << ", |k| <= " << r.k << ", |v| <= " << r.v);
  const int H = c.heads * c.head_dim;
  const size_t ld = 3 * static_cast<size_t>(H);
  std::vector<int32_t> offsets, mask;
  const int rows = layout(c, &offsets, &mask);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> qkv(static_cast<size_t>(rows) * ld);
  for (size_t i = 0; i < qkv.size(); ++i) {
    const size_t column = i % ld;
    qkv[i] = u(rng) * (column < static_cast<size_t>(H) ? r.q : column < 2 * static_cast<size_t>(H) ? r.k : r.v);
  }
  for (auto [at, value] : specials) qkv[at % qkv.size()] = value;

  std::vector<float> got(static_cast<size_t>(rows) * H, 12345.0f);
  AttentionArgs a;
  a.batch = c.batch;
  a.seq = c.seq;
  a.heads = c.heads;
  a.head_dim = c.head_dim;
  a.qkv = qkv.data();
  a.mask = c.masked ? mask.data() : nullptr;
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  a.out = got.data();
  a.type = Elem::kF32;
  a.offsets = c.packed ? offsets.data() : nullptr;
  run_kernel<float>(a);

  const Reference staged = attend(c, [&](int row, int column) { return bf16_rounded(qkv[static_cast<size_t>(row) * ld + column]); },
                                  mask, offsets, rows);
  const Reference exact = attend(c, [&](int row, int column) { return static_cast<double>(qkv[static_cast<size_t>(row) * ld + column]); },
                                 mask, offsets, rows);
  const double bf16_u = std::ldexp(1.0, -8), slack = std::ldexp(1.0, -14);
  double worst_staged = 0, worst_exact = 0;  // the largest error as a fraction of its bound
  int nonfinite_mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    if (!std::isfinite(staged.out[i]) || !std::isfinite(g)) {
      const bool same = (std::isnan(staged.out[i]) && std::isnan(g)) || (std::isinf(staged.out[i]) && g == staged.out[i]);
      nonfinite_mismatches += same ? 0 : 1;
      continue;
    }
    const double staged_bound = (bf16_u + slack) * staged.weights[i] + 1e-30;
    worst_staged = std::max(worst_staged, std::fabs(g - staged.out[i]) / staged_bound);
    if (!std::isfinite(exact.out[i])) continue;
    const double delta = 2.004 * bf16_u * exact.dots[i];
    const double exact_bound = (std::exp(2 * delta) * (1 + bf16_u) * (1 + bf16_u) - 1 + slack) * exact.weights[i] + 1e-30;
    worst_exact = std::max(worst_exact, std::fabs(g - exact.out[i]) / exact_bound);
  }
  double worst_abs = 0, sum_squares = 0;  // the conformance suite's measure: max |error| / RMS
  int finite = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::isfinite(exact.out[i]) && std::isfinite(got[i])) {
      worst_abs = std::max(worst_abs, std::fabs(got[i] - exact.out[i]));
      sum_squares += exact.out[i] * exact.out[i];
      ++finite;
    }
  const double rms = finite > 0 ? std::sqrt(sum_squares / finite) : 0.0;
  INFO("against the fp32 inputs: max |error| " << worst_abs << ", RMS " << rms << ", normalized "
                                               << (rms > 0 ? worst_abs / rms : worst_abs));
  INFO("largest error over its bound: " << worst_staged << " (bf16-rounded inputs), " << worst_exact
                                        << " (fp32 inputs); non-finite mismatches " << nonfinite_mismatches);
  CHECK(nonfinite_mismatches == 0);
  CHECK(worst_staged <= 1.0);
  CHECK(worst_exact <= 1.0);
}

}  // namespace

TEST_CASE("attention_mma (emulated): fp32 QKV on bf16 tensor cores, padded", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  for (int head_dim : {16, 32, 64})
    // batch 2 at seq 200: sequence 1's first key tile wholly padded (the online softmax starts
    // from a -inf max); batch 3: sequence 2 without a real token.
    for (auto [batch, seq] : {std::pair{1, 1}, std::pair{3, 1}, std::pair{1, 7}, std::pair{3, 64}, std::pair{1, 128},
                              std::pair{2, 200}})
      for (bool masked : {false, true})
        check_f32({head_dim, batch, seq, 2, masked, false}, 41 + static_cast<uint32_t>(seq + head_dim));
}

TEST_CASE("attention_mma (emulated): fp32 QKV on bf16 tensor cores, packed layout", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  check_f32({32, 3, 100, 2, false, true}, 51);  // sequences of 100, 63 and 26 tokens
  check_f32({64, 2, 65, 1, false, true}, 52);   // 65 and 28: a second key tile of one key
  check_f32({16, 3, 128, 2, false, true}, 53);
}

TEST_CASE("attention_mma (emulated): fp32 QKV past fp16's range", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  // Q to 2e5 (fp16 overflows past 65504), K to 2e-5 (fp16 subnormal: 8 significant bits or
  // fewer), V to 1e6: scores of the usual size, outputs of 1e5 and more.
  check_f32({32, 3, 128, 2, true, false}, 61, {2e5f, 2e-5f, 1e6f});
  check_f32({64, 1, 200, 2, false, false}, 62, {2e5f, 2e-5f, 1e6f});
  check_f32({32, 3, 100, 2, false, true}, 63, {1.0f, 1.0f, 3e7f});
}

TEST_CASE("attention_mma (emulated): fp32 QKV, NaN and Inf", "[cuda_emulation]") {
  g_key_split = GENERATE(1, -1, -6, -2, -8, 4);
  INFO("key split " << g_key_split);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int H = 2 * 32;
  check_f32({32, 2, 70, 2, true, false}, 71, {}, {{5 * 3 * H + 3, nan}});
  check_f32({32, 2, 70, 2, true, false}, 72, {}, {{9 * 3 * H + H + 7, inf}});
  check_f32({32, 2, 70, 2, true, false}, 73, {}, {{4 * 3 * H + 2 * H + 1, inf}, {20 * 3 * H + 2 * H + 33, -inf}});
  // Masked keys (rows 8, 13 and 68 of sequence 0) holding Inf in V and NaN in K: no output changes.
  check_f32({32, 2, 70, 2, true, false}, 74, {},
            {{8 * 3 * H + 2 * H + 5, inf}, {13 * 3 * H + H + 2, nan}, {68 * 3 * H + 2 * H + 40, -inf}});
}
