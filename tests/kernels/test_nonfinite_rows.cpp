// Rows that the int8 formulas cannot take as they stand: ±inf values, ranges wider than float's,
// ranges too small for 1 / scale, NaNs. kernel_types.h states what the quantizer and the int8
// attention make of them; every kernel of each list this CPU runs, the reference included, is held
// to that here. Before the rule, these rows converted NaN to int (undefined behaviour, which the
// sanitizer build, scripts/test_sanitizers.sh, stops at) and gave finite numbers from infinite
// inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernel_lists.h"
#include "kernels/kernel_types.h"
#include "testable_kernels.h"

namespace {

using namespace encrt::kernels;
using encrt::kernels::test::testable_kernels;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("quantize_rows_u8: rows with ±inf, overflowing or vanishing ranges, NaNs, as kernel_types.h says",
          "[quantize][nonfinite]") {
  for (int K : {5, 37, 100}) {  // SIMD bodies and tails
    const int ldx = K + 1, ldq = round_up(K, kPanelK) + 8;
    std::mt19937 rng(static_cast<uint32_t>(K));
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    enum Row { kMinusInf, kPlusInf, kBothInf, kWideRange, kTinyRange, kOneNaN, kAllNaN, kPlain, kRows };
    std::vector<float> X(static_cast<size_t>(kRows) * ldx);
    for (float& x : X) x = dist(rng);
    auto row = [&](int r) { return X.data() + static_cast<size_t>(r) * ldx; };
    row(kMinusInf)[K - 1] = -kInf;  // in the tail of the SIMD loops
    row(kPlusInf)[0] = kInf;
    row(kBothInf)[1] = kInf, row(kBothInf)[K / 2] = -kInf;
    row(kWideRange)[0] = 3.0e38f, row(kWideRange)[K - 1] = -3.0e38f;  // hi - lo overflows
    for (int k = 0; k < K; ++k) row(kTinyRange)[k] = 1.0e-39f * static_cast<float>(k % 3);  // (hi - lo) / 255 subnormal
    row(kOneNaN)[K / 3] = kNaN;
    for (int k = 0; k < K; ++k) row(kAllNaN)[k] = kNaN;

    for (const QuantizeRowsU8Kernel* kernel : testable_kernels(kQuantizeRowsU8Kernels)) {
      INFO(kernel->name << " K=" << K);
      std::vector<uint8_t> q(static_cast<size_t>(kRows) * ldq, 0xA5);
      std::vector<float> scale(kRows, -1.0f);
      std::vector<int32_t> zp(kRows, -1);
      kernel->fn(kRows, K, X.data(), ldx, nullptr, q.data(), ldq, scale.data(), zp.data());
      auto all_zero = [&](int r) {
        for (int k = 0; k < round_up(K, kPanelK); ++k)
          if (q[static_cast<size_t>(r) * ldq + k] != 0) return false;
        return true;
      };
      for (int r : {kMinusInf, kPlusInf, kBothInf, kWideRange}) {
        INFO("non-finite range, row " << r);
        CHECK(std::isnan(scale[r]));
        CHECK(zp[r] == 0);
        CHECK(all_zero(r));
      }
      for (int r : {kTinyRange, kAllNaN}) {
        INFO("no usable range, row " << r);
        CHECK(same_bits(scale[r], 1.0f));
        CHECK(zp[r] == 0);
        CHECK(all_zero(r));
      }
      for (int r : {kOneNaN, kPlain}) {
        INFO("finite row " << r);
        CHECK(std::isfinite(scale[r]));
        CHECK(scale[r] > 0.0f);
        CHECK(zp[r] >= 0);
        CHECK(zp[r] <= 255);
      }
      CHECK(q[static_cast<size_t>(kOneNaN) * ldq + K / 3] == 0);  // the NaN itself
      for (int r = 0; r < kRows; ++r) CHECK(q[static_cast<size_t>(r) * ldq + ldq - 1] == 0xA5);  // past the padding
    }
  }
}

namespace {

// One batch of S tokens, H heads of D: a fused QKV matrix of small random values.
struct Head8 {
  static constexpr int S = 24, H = 2, D = 16, ld = 3 * H * D;
  std::vector<float> qkv = std::vector<float>(static_cast<size_t>(S) * ld);
  std::vector<int32_t> mask = std::vector<int32_t>(S, 1);
  Head8() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& x : qkv) x = dist(rng);
  }
  float* q(int t, int h) { return qkv.data() + static_cast<size_t>(t) * ld + h * D; }
  float* k(int t, int h) { return q(t, h) + H * D; }
  float* v(int t, int h) { return q(t, h) + 2 * H * D; }
};

struct AttentionOut {
  std::vector<float> out, probs;
};

AttentionOut run_attention(const AttentionKernel& kernel, Head8& x, bool masked, const uint8_t* pair_blocked = nullptr) {
  AttentionOut r;
  r.out.assign(static_cast<size_t>(Head8::S) * Head8::H * Head8::D, -7.0f);
  r.probs.assign(static_cast<size_t>(Head8::H) * Head8::S * Head8::S, -7.0f);
  std::vector<unsigned char> scratch(kernel.scratch(Head8::S, Head8::D) + 64);
  AttentionArgs a;
  a.seq = Head8::S, a.heads = Head8::H, a.head_dim = Head8::D;
  a.qkv = x.qkv.data(), a.ld_qkv = Head8::ld;
  a.mask = masked ? x.mask.data() : nullptr;
  a.scale = 0.25f;
  a.out = r.out.data(), a.ld_out = Head8::H * Head8::D;
  a.probs = r.probs.data();
  a.pair_blocked = pair_blocked;
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  for (int h = 0; h < Head8::H; ++h) kernel.fn(a, 0, h, aligned);
  return r;
}

// Counts the outputs and real-key probabilities of (row i, head h) that are NaN and that are finite.
struct RowCount {
  int nan = 0, finite = 0;
};
RowCount count_row(const AttentionOut& r, const Head8& x, int i, int h) {
  RowCount c;
  for (int d = 0; d < Head8::D; ++d) {
    const float y = r.out[static_cast<size_t>(i) * Head8::H * Head8::D + h * Head8::D + d];
    c.nan += std::isnan(y), c.finite += std::isfinite(y);
  }
  for (int j = 0; j < Head8::S; ++j) {
    const float p = r.probs[(static_cast<size_t>(h) * Head8::S + i) * Head8::S + j];
    if (x.mask[j] == 0) {
      c.finite += p == 0.0f ? 0 : 1000;  // a padded key's probability is exactly 0
      continue;
    }
    c.nan += std::isnan(p), c.finite += std::isfinite(p);
  }
  return c;
}

}  // namespace

TEST_CASE("int8 attention: an infinite Q, K or V value makes the rows it reaches NaN, nothing else",
          "[attention][i8][nonfinite]") {
  const int per_row = Head8::D + Head8::S;  // outputs + probabilities of a row without padding
  for (const AttentionKernel* kernel : testable_kernels(kAttentionI8Kernels)) {
    INFO(kernel->name);
    {
      // +inf in query 3 of head 0: only that row's scores are NaN (0 · inf).
      Head8 x;
      x.q(3, 0)[5] = kInf;
      const AttentionOut r = run_attention(*kernel, x, false);
      for (int i = 0; i < Head8::S; ++i)
        for (int h = 0; h < Head8::H; ++h) {
          INFO("row " << i << " head " << h);
          const RowCount c = count_row(r, x, i, h);
          CHECK(c.nan == (i == 3 && h == 0 ? per_row : 0));
          CHECK(c.finite == (i == 3 && h == 0 ? 0 : per_row));
        }
    }
    for (bool pad_it : {false, true}) {
      // -inf in key 5 of head 1 (every query's score against it is NaN) and +inf in value 7 of
      // head 0 (an infinite V scale): every row of both heads, unless those keys are padding.
      Head8 x;
      x.k(5, 1)[0] = -kInf;
      x.v(7, 0)[15] = kInf;
      if (pad_it) x.mask[5] = 0, x.mask[7] = 0;
      const int real_row = Head8::D + Head8::S - (pad_it ? 2 : 0);
      const AttentionOut r = run_attention(*kernel, x, true);
      for (int i = 0; i < Head8::S; ++i)
        for (int h = 0; h < Head8::H; ++h) {
          INFO("row " << i << " head " << h << (pad_it ? ", the infinite keys padded" : ""));
          const RowCount c = count_row(r, x, i, h);
          CHECK(c.nan == (pad_it ? 0 : real_row));
          CHECK(c.finite == (pad_it ? real_row : 0));
        }
    }
    {
      // +inf in every key's V of head 0: no real key has a finite V scale, so the smallest one is
      // infinite too (found by fuzz/fuzz_model.cpp: the AVX-512 VNNI kernel converted its
      // exponent, +inf, to int: undefined behaviour, which the sanitizer build stops at). Every row
      // of head 0 is NaN, head 1 untouched.
      Head8 x;
      for (int j = 0; j < Head8::S; ++j) x.v(j, 0)[2] = kInf;
      const AttentionOut r = run_attention(*kernel, x, true);
      for (int i = 0; i < Head8::S; ++i)
        for (int h = 0; h < Head8::H; ++h) {
          INFO("row " << i << " head " << h << ", every V of head 0 infinite");
          const RowCount c = count_row(r, x, i, h);
          CHECK(c.nan == (h == 0 ? per_row : 0));
          CHECK(c.finite == (h == 0 ? 0 : per_row));
        }
    }
    {
      // Finite inputs whose product passes float's range: query 4 and key 9 of head 0 at ±1e20
      // make that one score about -1.6e40, -inf in float (and only that one: their other scores
      // stay below 1e17). Row 4 of head 0 is NaN, every other row finite. A kernel that let the
      // -inf score through would give that key weight 0 and a finite row.
      Head8 x;
      for (int d = 0; d < Head8::D; ++d) x.q(4, 0)[d] = 1.0e20f, x.k(9, 0)[d] = -1.0e20f;
      const AttentionOut r = run_attention(*kernel, x, false);
      for (int i = 0; i < Head8::S; ++i)
        for (int h = 0; h < Head8::H; ++h) {
          INFO("row " << i << " head " << h << ", one score past float's range");
          const RowCount c = count_row(r, x, i, h);
          CHECK(c.nan == (i == 4 && h == 0 ? per_row : 0));
          CHECK(c.finite == (i == 4 && h == 0 ? 0 : per_row));
        }
    }
    {
      // V rows so small that max p · s_v / 255 is subnormal: finite outputs (0 in the reference's
      // rule, at most V's magnitude in any kernel).
      Head8 x;
      for (int j = 0; j < Head8::S; ++j)
        for (int d = 0; d < Head8::D; ++d) x.v(j, 1)[d] *= 1.0e-37f;
      const AttentionOut r = run_attention(*kernel, x, false);
      for (int i = 0; i < Head8::S; ++i) {
        const RowCount c = count_row(r, x, i, 1);
        CHECK(c.finite == per_row);
        for (int d = 0; d < Head8::D; ++d)
          CHECK(std::fabs(r.out[static_cast<size_t>(i) * Head8::H * Head8::D + Head8::D + d]) <= 1.0e-37f);
      }
    }
  }
}

TEST_CASE("int8 attention with a pair mask: the NaN rule over the pairs a query attends, and V of every key",
          "[attention][i8][nonfinite][pairs]") {
  // A causal mask (query i attends keys j <= i). +inf in query 3's Q of head 1: that row is NaN.
  // +inf in value 5 of head 0: an infinite V scale makes every row of head 0 NaN, queries 0..4
  // (which never see key 5) too, as without masks: the rule is per head for V (kernel_types.h).
  std::vector<uint8_t> causal(static_cast<size_t>(Head8::S) * Head8::S);
  for (int i = 0; i < Head8::S; ++i)
    for (int j = 0; j < Head8::S; ++j) causal[static_cast<size_t>(i) * Head8::S + j] = j > i;
  const int per_row = Head8::D + Head8::S;
  for (const AttentionKernel* kernel : testable_kernels(kAttentionI8Kernels)) {
    INFO(kernel->name);
    Head8 x;
    x.v(5, 0)[3] = kInf;
    x.q(3, 1)[2] = kInf;
    const AttentionOut r = run_attention(*kernel, x, false, causal.data());
    for (int i = 0; i < Head8::S; ++i)
      for (int h = 0; h < Head8::H; ++h) {
        INFO("row " << i << " head " << h);
        const bool nan_row = h == 0 || i == 3;
        const RowCount c = count_row(r, x, i, h);
        CHECK(c.nan == (nan_row ? per_row : 0));
        CHECK(c.finite == (nan_row ? 0 : per_row));
      }
  }
}
