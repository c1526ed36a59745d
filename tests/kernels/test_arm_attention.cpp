// ARM NEON attention (the SIMD entries of kAttentionF32Kernels and kAttentionI8Kernels) and its
// exp, against the reference (under qemu-user on x86 hosts).
//   int8 attention: without pair masks (the dense path) the x86 kernels' contract, the base-2
//        softmax's near-tie bound against the reference (attention_i8_bound.h), on the x86 tests'
//        problems (attention_problem.h) up to seq 200, zero, NaN, tiny and huge rows, and the
//        reference's NaN rows for infinite inputs; with pair masks or a window (the masked path)
//        bit for bit the reference's outputs and probabilities.
//   255·2^t of that softmax: relative error below kExp2MaxRelError over [-126, 0].
//   exp: relative error below kExpNeonMaxRelError wherever exp(x) is a normal float, sampled
//        densely over [-104, 89]; special values as documented.
//   attention: outputs within 2e-5 of the largest |V| of the head plus 1e-7, probabilities within
//        1e-6 + 1e-5·p, on odd sequence lengths and head sizes, padded batches, an all-padding
//        sequence (zeros) and the probabilities path. A wrong index or a lost key moves outputs
//        by a sizeable fraction of |V|, far beyond that.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_ARM64)

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>
#include <random>
#include <vector>

#include "attention_i8_bound.h"
#include "attention_pair_masks.h"
#include "attention_problem.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/x86/exp_coefficients.h"
#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

namespace arm = encrt::kernels::arm;
namespace test = encrt::kernels::test;
using namespace encrt::kernels;
using encrt::kernels::test::pair_mask_sweep;
using encrt::kernels::test::PairMasks;
using encrt::kernels::test::testable_simd_kernels;

TEST_CASE("ARM vector exp: relative error below kExpNeonMaxRelError", "[arm][attention][exp]") {
  std::vector<float> x, y;
  for (double v = -104.0; v <= 89.0; v += 0.000731) x.push_back(static_cast<float>(v));
  y.resize(x.size());
  arm::f32_exp__neon(static_cast<int>(x.size()), x.data(), y.data());
  double worst = 0;
  int bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    if (want < FLT_MIN || want > FLT_MAX) continue;  // subnormal or overflowing results
    const double rel = std::fabs(y[i] - want) / want;
    worst = std::max(worst, rel);
    bad += !(rel <= arm::kExpNeonMaxRelError);
  }
  INFO(x.size() << " samples, worst relative error " << worst);
  CHECK(bad == 0);
  const float special[] = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), -200.0f, 200.0f, 0.0f};
  float out[6];
  arm::f32_exp__neon(6, special, out);
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == 0.0f);
  CHECK(out[4] == std::numeric_limits<float>::infinity());
  CHECK(out[5] == 1.0f);
}

namespace {

// One attention problem: batch 3 (row 0 all real, row 1 padded after S/2 + 1, row 2 no real
// token), 2 heads, random Q/K/V with padding between rows; `spread` scales the values.
struct AttentionProblem {
  static constexpr int kBatch = 3, kHeads = 2;
  AttentionArgs args;
  std::vector<float> qkv;
  std::vector<int32_t> mask;
  const PairMasks* pairs = nullptr;  // src masks and window, or none

  AttentionProblem(int S, int D, float spread, std::mt19937& rng) {
    const int H = kHeads * D;
    args.seq = S, args.heads = kHeads, args.head_dim = D;
    args.ld_qkv = 3 * H + 5;
    args.ld_out = H + 3;
    args.scale = 1.0f / std::sqrt(static_cast<float>(D));
    std::normal_distribution<float> dist(0.0f, 1.0f);
    qkv.resize(static_cast<size_t>(kBatch) * S * args.ld_qkv);
    for (float& v : qkv) v = spread * dist(rng);
    mask.assign(static_cast<size_t>(kBatch) * S, 1);
    for (int j = S / 2 + 1; j < S; ++j) mask[static_cast<size_t>(S) + j] = 0;
    for (int j = 0; j < S; ++j) mask[static_cast<size_t>(2) * S + j] = 0;
  }

  // Runs `kernel` on every (sequence, head) into out (and probs when not null).
  void run(AttentionFn kernel, AttentionScratchFn scratch_bytes, std::vector<float>* out, std::vector<float>* probs) {
    const int S = args.seq;
    out->assign(static_cast<size_t>(kBatch) * S * args.ld_out, 7.0f);
    if (probs) probs->assign(static_cast<size_t>(kBatch) * kHeads * S * S, 7.0f);
    std::vector<unsigned char> storage(scratch_bytes(S, args.head_dim) + 64);
    void* scratch = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    args.qkv = qkv.data();
    args.mask = mask.data();
    args.out = out->data();
    args.probs = probs ? probs->data() : nullptr;
    if (pairs) pairs->set_args(&args);
    for (int b = 0; b < kBatch; ++b)
      for (int h = 0; h < kHeads; ++h) kernel(args, b, h, scratch);
  }
};

}  // namespace

TEST_CASE("ARM f32 attention matches the reference", "[arm][attention][f32]") {
  for (const AttentionKernel* k : testable_simd_kernels(kAttentionF32Kernels)) {
    std::mt19937 rng(5);
    for (int S : {1, 3, 17, 129})
      for (int D : {20, 32, 64})
        for (bool with_probs : {false, true}) {
          AttentionProblem p(S, D, 1.5f, rng);
          std::vector<float> want, got, want_p, got_p;
          p.run(ref::attention_f32, ref::attention_f32_scratch, &want, with_probs ? &want_p : nullptr);
          p.run(k->fn, k->scratch, &got, with_probs ? &got_p : nullptr);
          const int H = AttentionProblem::kHeads * D;
          double vmax = 0;
          for (int r = 0; r < AttentionProblem::kBatch * S; ++r)
            for (int c = 2 * H; c < 3 * H; ++c)
              vmax = std::max(vmax, std::fabs(static_cast<double>(p.qkv[static_cast<size_t>(r) * p.args.ld_qkv + c])));
          int bad = 0, bad_p = 0;
          for (size_t i = 0; i < want.size(); ++i) bad += !(std::fabs(got[i] - want[i]) <= 2e-5 * vmax + 1e-7);
          for (size_t i = 0; i < want_p.size(); ++i)
            bad_p += !(std::fabs(got_p[i] - want_p[i]) <= 1e-6 + 1e-5 * std::fabs(want_p[i]));
          INFO(k->name << " S=" << S << " D=" << D << " probs=" << with_probs);
          CHECK(bad == 0);
          CHECK(bad_p == 0);
        }
  }
}

// The dense path (no pair masks) against the reference within the base-2 softmax's near-tie bound
// (attention_i8_bound.h): the x86 kernels' problems (attention_problem.h) and shapes, up to seq 200.
TEST_CASE("ARM int8 attention matches the reference within its near-tie bound", "[arm][attention][i8]") {
  uint32_t seed = 5000;
  const auto kernels = testable_simd_kernels(kAttentionI8Kernels);
  REQUIRE(!kernels.empty());
  long near_ties = 0, keys = 0;
  // Under qemu the fp64 model of compare_i8 dominates the time: past seq 64 one variant per shape
  // (padded, fused, with probabilities; 12 heads at seq 128) and every variant below.
  for (const test::Shape& sh : test::shapes()) {
    if (sh.seq > 200) continue;
    const bool all = sh.seq <= 64;
    for (bool null_mask : {false, true})
      for (test::Layout layout : {test::Layout::kFused, test::Layout::kStrided}) {
        if (!all && (null_mask || layout == test::Layout::kStrided)) continue;
        const test::Problem p = test::make_problem(sh.seq, sh.heads, sh.dim, null_mask, layout, seed++);
        const test::Result want = test::run(p, ref::attention_i8, ref::attention_i8_scratch, true);
        for (const AttentionKernel* k : kernels)
          for (bool with_probs : {false, true}) {
            if (!all && !with_probs) continue;
            const test::Result got = test::run(p, k->fn, k->scratch, with_probs);
            test::I8Errors e;
            test::compare_i8(p, got, want, &e);
            INFO(k->name << " seq=" << p.seq << " heads=" << p.heads << " dim=" << p.dim << " null_mask=" << null_mask
                         << " probs=" << with_probs << ": max|err|/max|V| " << e.worst_vs_ref << " (bound use "
                         << e.worst_bound_use << "), vs fp64 " << e.worst_vs_fp64 << "; near ties " << e.near_ties
                         << " of " << e.keys);
            CHECK(e.bad == 0);
            CHECK(e.bad_fp64 == 0);
            CHECK(e.bad_prob == 0);
            CHECK(test::mask_violations(p, got) == 0);
            near_ties += e.near_ties;
            keys += e.keys;
          }
      }
  }
  INFO("near ties " << near_ties << " of " << keys << " keys");
  CHECK(near_ties * 100 < keys);  // rare, as the x86 test requires
}

// The x86 tests' two special problems (test_x86_attention.cpp), as they are: all-zero Q/K/V rows
// (scale 1, q = 0), a dominant key and values at the int8 clamp; then NaN → 0 in Q, K and V (the
// max|x| of a row ignores them) and rows so small that their scale is subnormal.
void check_special_i8(const test::Problem& p) {
  const test::Result want = test::run(p, ref::attention_i8, ref::attention_i8_scratch, true);
  for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    const test::Result got = test::run(p, k->fn, k->scratch, true);
    test::I8Errors e;
    test::compare_i8(p, got, want, &e);
    INFO(k->name << " seq=" << p.seq << ": max|err|/max|V| " << e.worst_vs_ref << ", bound use " << e.worst_bound_use);
    CHECK(e.bad == 0);
    CHECK(e.bad_prob == 0);
    CHECK(test::mask_violations(p, got) == 0);
  }
}

// The i8mm kernel computes the dense path's Q·K two query rows at a time with smmla (exact int32
// sums, as sdot's) and the rest with the dot-product kernel's code: its outputs and probabilities
// are that kernel's, bit for bit, with padded and unpadded sequences, odd and even lengths (an odd
// last row takes the sdot path) and head sizes from 1 to 600.
TEST_CASE("ARM int8 attention: the i8mm kernel gives the dot-product kernel's bits", "[arm][attention][i8]") {
  const AttentionKernel* dot = nullptr;
  const AttentionKernel* mm = nullptr;
  for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    if (std::string(k->name) == "arm::qs8_attention__neondot") dot = k;
    if (std::string(k->name) == "arm::qs8_attention__neoni8mm") mm = k;
  }
  if (!dot || !mm) {
    WARN("this CPU lacks the dot product or i8mm: nothing to compare");
    return;
  }
  uint32_t seed = 9100;
  int compared = 0;
  for (const test::Shape& sh : test::shapes()) {
    if (sh.seq > 200) continue;
    for (bool null_mask : {false, true}) {
      const test::Problem p = test::make_problem(sh.seq, sh.heads, sh.dim, null_mask, test::Layout::kFused, seed++);
      const test::Result want = test::run(p, dot->fn, dot->scratch, true);
      const test::Result got = test::run(p, mm->fn, mm->scratch, true);
      INFO("seq=" << p.seq << " heads=" << p.heads << " dim=" << p.dim << " null_mask=" << null_mask);
      REQUIRE(got.out.size() == want.out.size());
      REQUIRE(got.probs.size() == want.probs.size());
      CHECK(std::memcmp(got.out.data(), want.out.data(), sizeof(float) * got.out.size()) == 0);
      CHECK(std::memcmp(got.probs.data(), want.probs.data(), sizeof(float) * got.probs.size()) == 0);
      ++compared;
    }
  }
  CHECK(compared > 20);
}

TEST_CASE("ARM int8 attention: zero rows, extremes, NaN inputs and tiny rows quantize as the reference",
          "[arm][attention][i8]") {
  {
    const int S = 37, H = 2, D = 20;
    test::Problem p = test::make_problem(S, H, D, false, test::Layout::kStrided, 4242);
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
          const_cast<float*>(p.q(b, 0, h))[d] = 0.0f;
          const_cast<float*>(p.k(b, 1, h))[d] = 0.0f;
          const_cast<float*>(p.v(b, 2, h))[d] = 0.0f;
          const_cast<float*>(p.k(b, 5, h))[d] = 30.0f;
        }
    check_special_i8(p);
  }
  {
    const int S = 40, H = 2, D = 32;
    test::Problem p = test::make_problem(S, H, D, false, test::Layout::kFused, 777);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int b = 0; b < p.batch; ++b)
      for (int h = 0; h < H; ++h) {
        const_cast<float*>(p.q(b, 3, h))[5] = nan;
        const_cast<float*>(p.k(b, 4, h))[31] = nan;
        const_cast<float*>(p.v(b, 7, h))[0] = nan;
        for (int d = 0; d < D; ++d) {
          const_cast<float*>(p.q(b, 20, h))[d] *= 1e-38f;
          const_cast<float*>(p.k(b, 21, h))[d] *= 1e-38f;
          const_cast<float*>(p.v(b, 22, h))[d] *= 1e-38f;
        }
      }
    check_special_i8(p);
  }
}

TEST_CASE("ARM int8 attention: infinite inputs give the reference's NaN rows", "[arm][attention][i8]") {
  // An infinite Q value (s_q = inf: that query's scores are NaN), an infinite K value (that key's
  // scores are NaN for every query) and an infinite V value (an infinite s_v: every row of the
  // head is NaN), each in its own head; rows of the reference that are NaN must be NaN here,
  // with NaN probabilities for the real keys; the other rows must be finite.
  const int S = 19, H = 3, D = 20;
  test::Problem p = test::make_problem(S, H, D, false, test::Layout::kFused, 31);
  const float inf = std::numeric_limits<float>::infinity();
  for (int b = 0; b < p.batch; ++b) {
    const_cast<float*>(p.q(b, 2, 0))[1] = inf;
    const_cast<float*>(p.k(b, 4, 1))[7] = -inf;
    const_cast<float*>(p.v(b, 0, 2))[3] = inf;
  }
  const test::Result want = test::run(p, ref::attention_i8, ref::attention_i8_scratch, true);
  long nan_rows = 0;
  for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    const test::Result got = test::run(p, k->fn, k->scratch, true);
    long mismatched = 0;
    nan_rows = 0;
    for (size_t i = 0; i < want.out.size(); ++i) {
      mismatched += std::isnan(want.out[i]) != std::isnan(got.out[i]);
      nan_rows += std::isnan(want.out[i]);
    }
    for (size_t i = 0; i < want.probs.size(); ++i) mismatched += std::isnan(want.probs[i]) != std::isnan(got.probs[i]);
    INFO(k->name);
    CHECK(mismatched == 0);
    CHECK(test::mask_violations(p, got) == 0);
  }
  CHECK(nan_rows > 0);
}

TEST_CASE("ARM int8-softmax 2^t within kExp2MaxRelError", "[arm][attention][exp]") {
  // A grid of 2^-12 over [-126, 0] plus random floats (the x86 test's, exp_coefficients.h), and
  // results far below the normal range: one rounding to a subnormal, +0 past 2^-150.
  namespace c = encrt::kernels::x86::exp2_coefficients;
  std::vector<float> t;
  for (int i = -126 * 4096; i <= 0; ++i) t.push_back(static_cast<float>(i) / 4096.0f);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> any(-126.0f, 0.0f);
  for (int i = 0; i < 100000; ++i) t.push_back(any(rng));
  std::vector<float> y(t.size());
  arm::f32_exp2_x255__neon(static_cast<int>(t.size()), t.data(), y.data());
  double worst = 0.0;
  long bad = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const double want = 255.0 * std::exp2(static_cast<double>(t[i]));
    const double rel = std::fabs(y[i] - want) / want;
    worst = std::max(worst, rel);
    bad += !(rel <= c::kExp2MaxRelError);
  }
  INFO("255·2^t: max relative error " << worst);
  CHECK(bad == 0);
  CHECK(worst > 0.0);
  const float deep[] = {-140.0f, -150.0f, -170.0f, -1e30f, 0.0f};
  float out[5];
  arm::f32_exp2_x255__neon(5, deep, out);
  CHECK(out[0] > 0.0f);
  CHECK(std::fabs(out[0] - 255.0 * std::exp2(-140.0)) <= std::exp2(-149.0));  // one subnormal step
  CHECK(out[1] >= 0.0f);
  CHECK(out[1] < 1e-42f);
  CHECK(out[2] == 0.0f);
  CHECK(out[3] == 0.0f);
  CHECK(std::fabs(out[4] - 255.0f) <= 255.0f * c::kExp2MaxRelError);
}

TEST_CASE("ARM attention with src masks and windows matches the reference", "[arm][attention][pairs]") {
  // fp32 within the tolerances above; int8 bit for bit (the kernels take the reference's masked
  // path over each row's window), but where the masks are none (below).
  std::mt19937 rng(23);
  for (int S : {1, 5, 17, 70})
    for (int D : {20, 32})
      for (const PairMasks& m : pair_mask_sweep(AttentionProblem::kBatch, S, static_cast<uint32_t>(S * 31 + D))) {
        AttentionProblem p(S, D, 1.5f, rng);
        p.pairs = &m;
        for (bool with_probs : {false, true}) {
          std::vector<float> want, got, want_p, got_p;
          p.run(ref::attention_f32, ref::attention_f32_scratch, &want, with_probs ? &want_p : nullptr);
          for (const AttentionKernel* k : testable_simd_kernels(kAttentionF32Kernels)) {
            p.run(k->fn, k->scratch, &got, with_probs ? &got_p : nullptr);
            int bad = 0, bad_p = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += !(std::fabs(got[i] - want[i]) <= 2e-5 * 8.0 + 1e-7);
            for (size_t i = 0; i < want_p.size(); ++i)
              bad_p += !(std::fabs(got_p[i] - want_p[i]) <= 1e-6 + 1e-5 * std::fabs(want_p[i]));
            INFO(k->name << " " << m.name() << " S=" << S << " D=" << D << " probs=" << with_probs);
            CHECK(bad == 0);
            CHECK(bad_p == 0);
          }
          p.run(ref::attention_i8, ref::attention_i8_scratch, &want, with_probs ? &want_p : nullptr);
          // A window as wide as the sequence is no mask (attention_pairs.h): the dense path runs,
          // whose contract is the near-tie bound checked above; here only within 0.02 of the
          // largest |V| (the level the reference itself keeps against fp64) and 1e-4 in the
          // probabilities. Every other mask: the masked path, bit for bit.
          const bool dense = m.kind == PairMasks::kWindowOnly && m.window >= S - 1;
          for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
            p.run(k->fn, k->scratch, &got, with_probs ? &got_p : nullptr);
            int bad = 0, bad_p = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += dense ? !(std::fabs(got[i] - want[i]) <= 0.02 * 8.0) : got[i] != want[i];
            for (size_t i = 0; i < want_p.size(); ++i)
              bad_p += dense ? !(std::fabs(got_p[i] - want_p[i]) <= 1e-4) : got_p[i] != want_p[i];
            INFO(k->name << " " << m.name() << " S=" << S << " D=" << D << " probs=" << with_probs);
            CHECK(bad == 0);
            CHECK(bad_p == 0);
          }
        }
      }
}

// Not a check: runs one kernel (ENCRT_COUNT_KERNEL, a kernel list name) on (sequence 0, head 0) of
// S = ENCRT_COUNT_SEQ (128), D = 32, ENCRT_COUNT_REPS times, for counting its instructions under
// qemu (benchmarks/qemu_instructions/arm_attention.sh): qemu's timings mean nothing, its
// instruction counts are exact.
TEST_CASE("ARM attention kernel run for instruction counts", "[.count]") {
  const char* name = std::getenv("ENCRT_COUNT_KERNEL");
  const char* reps_env = std::getenv("ENCRT_COUNT_REPS");
  const char* seq_env = std::getenv("ENCRT_COUNT_SEQ");
  if (name == nullptr) return;  // a filter that names no tag (e.g. "~[ref]") runs hidden cases too
  const int reps = reps_env ? std::atoi(reps_env) : 1;
  const int S = seq_env ? std::atoi(seq_env) : 128;
  const AttentionKernel* kernel = nullptr;
  for (const AttentionKernel& k : kAttentionF32Kernels)
    if (std::string(k.name) == name) kernel = &k;
  for (const AttentionKernel& k : kAttentionI8Kernels)
    if (std::string(k.name) == name) kernel = &k;
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(3);
  AttentionProblem p(S, 32, 2.0f, rng);
  std::vector<float> out(static_cast<size_t>(AttentionProblem::kBatch) * S * p.args.ld_out);
  std::vector<unsigned char> storage(kernel->scratch(S, 32) + 64);
  void* scratch = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  p.args.qkv = p.qkv.data();
  p.args.mask = p.mask.data();
  p.args.out = out.data();
  for (int r = 0; r < reps; ++r) kernel->fn(p.args, 0, 0, scratch);
  CHECK(std::isfinite(out[0]));
}

#endif  // ENCRT_ARCH_ARM64
