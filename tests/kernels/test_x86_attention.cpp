// x86 attention kernels (attention_x86.h): the SIMD entries of the kernel lists
// kAttentionF32Kernels and kAttentionI8Kernels, called directly, one (sequence, head) per call as
// the runtime does, against ref::attention_f32 / ref::attention_i8 and against fp64 attention.
//
// Inputs and runs: attention_problem.h. The int8 kernels' contract against the reference (the
// near-tie bound) and its check: attention_i8_bound.h.
//
// Tolerances, u = 2^-24, max|V| over the real keys of the (sequence, head):
//   fp32, outputs: |got - ref| <= 1e-5 · max|V|. Both sides round the scores within
//     (D + 1)·u·scale·Σ|q k| (sequential, FMA or not) and the exp within 1 ulp (kernels'
//     exp: < 1e-7 relative, measured); the output is a convex combination of V, so a relative
//     perturbation ε of the probabilities moves it by at most 2ε·max|V|: ~1e-6 for these inputs.
//   fp32, probabilities: |got - ref| <= 1e-6 absolute; padded keys exactly 0.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ctime>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "kernels/kernel_lists.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_coefficients.h"
#include "attention_i8_bound.h"
#include "attention_pair_masks.h"
#include "attention_problem.h"
#include "emulated_kernels.h"
#include "emulated_tiles.h"
#include "naive_math.h"
#include "testable_kernels.h"

namespace {

using namespace encrt::kernels;
namespace naive = encrt::test_naive;


using Kernel = AttentionKernel;  // an entry of kAttentionF32Kernels or kAttentionI8Kernels
using encrt::kernels::test::can_test;
using encrt::kernels::test::compare_i8;
using encrt::kernels::test::I8Errors;
using encrt::kernels::test::kU;
using encrt::kernels::test::Layout;
using encrt::kernels::test::make_problem;
using encrt::kernels::test::mask_violations;
using encrt::kernels::test::out_at;
using encrt::kernels::test::Problem;
using encrt::kernels::test::prob_at;
using encrt::kernels::test::Result;
using encrt::kernels::test::run;
using encrt::kernels::test::Shape;
using encrt::kernels::test::shapes;
using encrt::kernels::test::make_pair_masks;
using encrt::kernels::test::pair_mask_sweep;
using encrt::kernels::test::PairMasks;
using encrt::kernels::test::testable_simd_kernels;

// ---- fp32

struct F32Errors {
  double worst_out = 0.0;   // max |err| / max|V|
  double worst_prob = 0.0;  // max |err|
  long bad_out = 0, bad_prob = 0;
};

void compare_f32(const Problem& p, const Result& got, const Result& want, F32Errors* e) {
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.heads; ++h) {
      const double vmax = p.vmax(b, h);
      for (int i = 0; i < p.seq; ++i) {
        for (int d = 0; d < p.dim; ++d) {
          const double err = std::fabs(static_cast<double>(out_at(p, got, b, h, i, d)) - out_at(p, want, b, h, i, d));
          e->bad_out += !(err <= 1e-5 * vmax);
          if (vmax > 0) e->worst_out = std::max(e->worst_out, err / vmax);
        }
        if (!got.probs.empty())
          for (int j = 0; j < p.seq; ++j) {
            const double err = std::fabs(static_cast<double>(prob_at(p, got, b, h, i, j)) - prob_at(p, want, b, h, i, j));
            e->bad_prob += !(err <= 1e-6);
            e->worst_prob = std::max(e->worst_prob, err);
          }
      }
    }
}

void check_f32_problem(const Problem& p, const Kernel& k, const Result& want, F32Errors* total) {
  for (bool with_probs : {false, true}) {
    const Result got = run(p, k.fn, k.scratch, with_probs);
    F32Errors e;
    compare_f32(p, got, want, &e);
    INFO(k.name << " seq=" << p.seq << " heads=" << p.heads << " dim=" << p.dim << " null_mask=" << p.null_mask
                << " fused=" << (p.layout == Layout::kFused) << " probs=" << with_probs << ": max|err|/max|V| "
                << e.worst_out << ", max prob err " << e.worst_prob);
    CHECK(e.bad_out == 0);
    CHECK(e.bad_prob == 0);
    CHECK(mask_violations(p, got) == 0);
    total->worst_out = std::max(total->worst_out, e.worst_out);
    total->worst_prob = std::max(total->worst_prob, e.worst_prob);
  }
}

}  // namespace

TEST_CASE("x86 vector exp: relative error below kExpMaxRelError", "[x86][attention][exp]") {
  // Every 2^-12 over [-104, 89] (790k points) and 300k random floats of the range; the bound
  // itself was measured over every float of the range (attention_x86.h).
  std::vector<float> x;
  for (int i = -104 * 4096; i <= 89 * 4096; ++i) x.push_back(static_cast<float>(i) / 4096.0f);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> any(-104.0f, 89.0f);
  for (int i = 0; i < 300000; ++i) x.push_back(any(rng));
  const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, 88.7228f, 88.73f, 89.0f, 100.0f, 1e30f,
                            -87.33f, -87.34f, -100.0f, -103.97f, -103.98f, -104.0f, -200.0f, -1e30f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  const size_t first_special = x.size();
  x.insert(x.end(), std::begin(specials), std::end(specials));
  x.push_back(std::numeric_limits<float>::quiet_NaN());

  struct Variant {
    IsaFeatures features;  // those of the file it is built in
    const char* name;
    void (*fn)(int, const float*, float*);
  };
  for (const Variant& v : {Variant{kIsaAvx2, "avx2", x86::f32_exp__avx2},
                           Variant{kIsaAvx2 | kIsaAvx512, "avx512", x86::f32_exp__avx512}}) {
    if (!isa_supported(v.features)) {
      WARN("exp " << v.name << " not tested: this CPU lacks " << isa_features_name(v.features & ~cpu_isa_features()));
      continue;
    }
    std::vector<float> y(x.size());
    v.fn(static_cast<int>(x.size()), x.data(), y.data());
    double worst_rel = 0.0, worst_sub = 0.0;
    long bad = 0;
    for (size_t i = 0; i + 1 < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      if (want > FLT_MAX) {
        bad += !(std::isinf(y[i]) && y[i] > 0);
      } else if (want >= FLT_MIN) {
        const double rel = std::fabs(y[i] - want) / want;
        worst_rel = std::max(worst_rel, rel);
        bad += !(rel <= x86::kExpMaxRelError);
      } else {
        const double abs_err = std::fabs(y[i] - want);
        worst_sub = std::max(worst_sub, abs_err);
        bad += !(abs_err <= std::ldexp(1.0, -149));
      }
    }
    INFO(v.name << ": max relative error " << worst_rel << ", max subnormal error " << worst_sub);
    CHECK(bad == 0);
    CHECK(worst_rel > 0.0);
    CHECK(y[first_special] == 1.0f);      // exp(0)
    CHECK(y[first_special + 1] == 1.0f);  // exp(-0)
    CHECK(y[first_special + 18] == std::numeric_limits<float>::infinity());
    CHECK(y[first_special + 19] == 0.0f);
    CHECK(std::isnan(y.back()));
    // A partial vector: lanes past n are neither read nor written.
    float in[3] = {0.5f, -1.0f, 2.0f}, outv[4] = {7.0f, 7.0f, 7.0f, 7.0f};
    v.fn(3, in, outv);
    CHECK(outv[3] == 7.0f);
    CHECK(std::fabs(outv[1] - std::exp(-1.0)) <= 1e-7 * std::exp(-1.0));
  }
}

TEST_CASE("x86 vector exp: the softmax's exp of x <= 0 is exp_avx2's, bit for bit", "[x86][attention][exp]") {
  if (!isa_supported(kIsaAvx2)) {
    WARN("not tested: this CPU lacks AVX2");
    return;
  }
  // Every float of [-104, 0] whose low 8 mantissa bits are 0 (2.1 million; both scaling paths),
  // then -inf, NaN and the floats around the paths' boundary (x · log2 e near -125.5), in runs of 8
  // that mix both sides, so that vectors take the two-factor path with fast-path lanes in them.
  std::vector<float> x;
  for (uint32_t bits = 0x80000000u; bits <= 0xC2D00000u; bits += 256) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    x.push_back(f);
  }
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());  // a NaN row's scores
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> near(-87.5f, -86.5f), any(-104.0f, 0.0f);
  for (int i = 0; i < 200000; ++i) x.push_back(i % 3 ? near(rng) : any(rng));
  std::vector<float> want(x.size()), got(x.size());
  x86::f32_exp__avx2(static_cast<int>(x.size()), x.data(), want.data());
  x86::f32_exp_nonpositive__avx2(static_cast<int>(x.size()), x.data(), got.data());
  long differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += std::memcmp(&want[i], &got[i], sizeof(float)) != 0;
  CHECK(differ == 0);
  CHECK(got[0] == 1.0f);  // exp(-0)
}

TEST_CASE("x86 int8-softmax 2^t and log2 within kExp2MaxRelError and kLog2MaxAbsError", "[x86][attention][exp]") {
  // The constants were measured over every float of the ranges (exp_coefficients.h); here a grid
  // of 2^-14 over [-126, 0] (2.1 million points) plus random floats, and log2 over positive
  // floats from the smallest subnormal to FLT_MAX: 2^-12 steps of the exponent and random bits.
  // 255·2^t of the zmm kernels and of the ymm ones (exp2_x255_avx2: the same polynomial, the
  // scaling built in the exponent field), each in the file of its attention kernel and needing
  // what it needs; log2 only the zmm kernels' (the ymm ones take the C library's).
  namespace c = x86::exp2_coefficients;
  std::vector<float> t;
  for (int i = -126 * 16384; i <= 0; ++i) t.push_back(static_cast<float>(i) / 16384.0f);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> any(-126.0f, 0.0f);
  for (int i = 0; i < 200000; ++i) t.push_back(any(rng));
  // Far below the normal range (and in the subnormal one) the results go to +0, never negative or
  // NaN; 2^-140 · 255 is a subnormal float, rounded once.
  const float deep[] = {-140.0f, -150.0f, -170.0f, -1e30f};
  using Exp2 = void (*)(int, const float*, float*);
  const struct {
    Exp2 fn;
    decltype(&x86::qs8_attention__avx2) kernel;
    const char* name;
  } variants[] = {{x86::f32_exp2_x255__avx512vnni, x86::qs8_attention__avx512vnni, "avx512vnni"},
                  {x86::f32_exp2_x255__avx2, x86::qs8_attention__avx2, "avx2"}};
  for (const auto& v : variants) {
    const Kernel* k = nullptr;
    for (const Kernel& kk : kAttentionI8Kernels)
      if (kk.fn == v.kernel) k = &kk;
    REQUIRE(k != nullptr);
    if (!can_test(*k)) continue;
    std::vector<float> y(t.size());
    v.fn(static_cast<int>(t.size()), t.data(), y.data());
    double worst = 0.0;
    long bad = 0;
    for (size_t i = 0; i < t.size(); ++i) {
      const double want = 255.0 * std::exp2(static_cast<double>(t[i]));
      const double rel = std::fabs(y[i] - want) / want;
      worst = std::max(worst, rel);
      bad += !(rel <= c::kExp2MaxRelError);
    }
    INFO(v.name << " 255·2^t: max relative error " << worst);
    CHECK(bad == 0);
    CHECK(worst > 0.0);
    float out[4];
    v.fn(4, deep, out);
    CHECK(out[0] > 0.0f);
    CHECK(std::fabs(out[0] - 255.0 * std::exp2(-140.0)) <= std::exp2(-149.0));  // one subnormal step
    CHECK(out[1] >= 0.0f);
    CHECK(out[1] < 1e-42f);
    CHECK(out[2] == 0.0f);
    CHECK(out[3] == 0.0f);
  }
  const Kernel* vnni = nullptr;
  for (const Kernel& k : kAttentionI8Kernels)
    if (k.fn == x86::qs8_attention__avx512vnni) vnni = &k;
  REQUIRE(vnni != nullptr);
  if (!can_test(*vnni)) return;

  std::vector<float> x;
  for (int i = -149 * 4096; i < 128 * 4096; ++i) x.push_back(std::exp2(static_cast<float>(i) / 4096.0f));
  std::uniform_int_distribution<uint32_t> bits(1u, 0x7f7fffffu);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = bits(rng);
    float v;
    std::memcpy(&v, &u, sizeof v);
    x.push_back(v);
  }
  std::vector<float> l(x.size());
  x86::f32_log2__avx512vnni(static_cast<int>(x.size()), x.data(), l.data());
  double worst_log = 0.0;
  long bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0.0f) || std::isinf(x[i])) continue;
    const double want = std::log2(static_cast<double>(x[i]));
    const double err = std::fabs(l[i] - want);
    worst_log = std::max(worst_log, err - kU * std::fabs(want));
    bad += !(err <= c::kLog2MaxAbsError + kU * std::fabs(want));
  }
  INFO("log2: max |error| beyond 2^-24·|log2 x|: " << worst_log);
  CHECK(bad == 0);
}

TEST_CASE("x86 f32 attention matches the reference", "[x86][attention][f32]") {
  uint32_t seed = 1000;
  F32Errors total;
  const auto kernels = testable_simd_kernels(kAttentionF32Kernels);
  for (const Shape& sh : shapes())
    for (bool null_mask : {false, true}) {
      if (null_mask && sh.seq >= 512 && sh.dim != 32) continue;  // the scalar reference is slow there
      for (Layout layout : {Layout::kFused, Layout::kStrided}) {
        if (layout == Layout::kStrided && sh.seq >= 512) continue;
        const Problem p = make_problem(sh.seq, sh.heads, sh.dim, null_mask, layout, seed++);
        const Result want = run(p, ref::attention_f32, ref::attention_f32_scratch, true);
        for (const Kernel* k : kernels) check_f32_problem(p, *k, want, &total);
      }
    }
  INFO("overall max|err|/max|V| " << total.worst_out << ", max prob err " << total.worst_prob);
  CHECK(total.worst_out < 1e-5);
}

TEST_CASE("x86 f32 attention: growing maxima, wide score ranges, exactly representable scores",
          "[x86][attention][f32]") {
  // Integer Q and K with a power-of-two scale: every score is exact in fp32 on both sides, so the
  // tolerances above hold however peaked the softmax is. K[j][0] grows with j and Q[i][0] = 2, so
  // each block of keys raises the running max (the online rescaling runs at every block); a
  // second set spreads scores over ±1000 so most exponentials underflow to 0.
  for (int spread : {3, 40})
    for (int S : {70, 300}) {
      const int H = 2, D = 16;
      Problem p = make_problem(S, H, D, false, Layout::kFused, 77 + S + spread);
      p.scale = 0.125f;
      std::mt19937 rng(5 + S);
      std::uniform_int_distribution<int> small(-spread, spread);
      for (int b = 0; b < p.batch; ++b)
        for (int t = 0; t < S; ++t)
          for (int h = 0; h < H; ++h) {
            float* q = const_cast<float*>(p.q(b, t, h));
            float* k = const_cast<float*>(p.k(b, t, h));
            for (int d = 0; d < D; ++d) q[d] = static_cast<float>(small(rng)), k[d] = static_cast<float>(small(rng));
            q[0] = 2.0f;
            k[0] = static_cast<float>(t / 4);
          }
      const Result want = run(p, ref::attention_f32, ref::attention_f32_scratch, true);
      for (const Kernel* k : testable_simd_kernels(kAttentionF32Kernels)) {
        F32Errors total;
        check_f32_problem(p, *k, want, &total);
      }
    }
}

TEST_CASE("x86 f32 attention: scratch is small and independent of the score matrix",
          "[x86][attention][f32]") {
  // O(64 · head_dim + seq): doubling seq at most adds ~12 bytes per token.
  for (size_t i = 1; i < std::size(kAttentionF32Kernels); ++i) {
    const Kernel& k = kAttentionF32Kernels[i];
    INFO(k.name);
    const size_t s512 = k.scratch(512, 64), s1024 = k.scratch(1024, 64);
    CHECK(s1024 - s512 <= 12 * 512 + 192);
    CHECK(s512 < 64 * 1024);
  }
}

TEST_CASE("x86 int8 attention matches the reference within its near-tie bound", "[x86][attention][i8]") {
  uint32_t seed = 5000;
  const auto kernels = testable_simd_kernels(kAttentionI8Kernels);
  std::vector<I8Errors> totals(kernels.size());
  for (const Shape& sh : shapes())
    for (bool null_mask : {false, true}) {
      if (null_mask && sh.seq >= 512 && sh.dim != 32) continue;
      for (Layout layout : {Layout::kFused, Layout::kStrided}) {
        if (layout == Layout::kStrided && sh.seq >= 512) continue;
        const Problem p = make_problem(sh.seq, sh.heads, sh.dim, null_mask, layout, seed++);
        const Result want = run(p, ref::attention_i8, ref::attention_i8_scratch, true);
        for (size_t n = 0; n < kernels.size(); ++n) {
          const Kernel& k = *kernels[n];
          for (bool with_probs : {false, true}) {
            const Result got = run(p, k.fn, k.scratch, with_probs);
            I8Errors one;
            compare_i8(p, got, want, &one);
            INFO(k.name << " seq=" << p.seq << " heads=" << p.heads << " dim=" << p.dim << " null_mask=" << null_mask
                        << " fused=" << (layout == Layout::kFused) << " probs=" << with_probs << ": max|err|/max|V| "
                        << one.worst_vs_ref << " (bound use " << one.worst_bound_use << "), vs fp64 "
                        << one.worst_vs_fp64 << " (reference: " << one.worst_ref_vs_fp64 << ")");
            CHECK(one.bad == 0);
            CHECK(one.bad_fp64 == 0);
            CHECK(one.bad_prob == 0);
            CHECK(mask_violations(p, got) == 0);
            I8Errors& e = totals[n];
            e.worst_vs_ref = std::max(e.worst_vs_ref, one.worst_vs_ref);
            e.worst_bound_use = std::max(e.worst_bound_use, one.worst_bound_use);
            e.worst_vs_fp64 = std::max(e.worst_vs_fp64, one.worst_vs_fp64);
            e.worst_ref_vs_fp64 = std::max(e.worst_ref_vs_fp64, one.worst_ref_vs_fp64);
            e.near_ties += one.near_ties;
            e.keys += one.keys;
            e.differing += one.differing;
          }
        }
      }
    }
  for (size_t n = 0; n < kernels.size(); ++n) {
    const I8Errors& e = totals[n];
    INFO(kernels[n]->name << ": near ties " << e.near_ties << " of " << e.keys
                            << " keys; outputs differing from the reference: " << e.differing
                            << "; max|err|/max|V| vs ref " << e.worst_vs_ref << " (max bound use "
                            << e.worst_bound_use << "), vs fp64 " << e.worst_vs_fp64 << " (reference vs fp64 "
                            << e.worst_ref_vs_fp64 << ")");
    CHECK(e.near_ties * 100 < e.keys);
    CHECK(e.worst_vs_fp64 <= 0.02);
  }
}

TEST_CASE("x86 int8 attention: zero rows, huge and NaN-free extremes quantize as the reference",
          "[x86][attention][i8]") {
  // All-zero K/V/Q rows (scale 1, q = 0), one dominant key, and values at the int8 clamp.
  const int S = 37, H = 2, D = 20;
  Problem p = make_problem(S, H, D, false, Layout::kStrided, 4242);
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < H; ++h) {
      float* q0 = const_cast<float*>(p.q(b, 0, h));
      float* k1 = const_cast<float*>(p.k(b, 1, h));
      float* v2 = const_cast<float*>(p.v(b, 2, h));
      float* k5 = const_cast<float*>(p.k(b, 5, h));
      for (int d = 0; d < D; ++d) q0[d] = 0.0f, k1[d] = 0.0f, v2[d] = 0.0f, k5[d] = 30.0f;
    }
  for (const Kernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    const Result want = run(p, ref::attention_i8, ref::attention_i8_scratch, true);
    const Result got = run(p, k->fn, k->scratch, true);
    I8Errors e;
    compare_i8(p, got, want, &e);
    INFO(k->name << ": max|err|/max|V| " << e.worst_vs_ref << ", bound use " << e.worst_bound_use);
    CHECK(e.bad == 0);
    CHECK(e.bad_prob == 0);
    CHECK(mask_violations(p, got) == 0);
  }
}

TEST_CASE("x86 int8 attention: NaN inputs and tiny rows quantize as the reference", "[x86][attention][i8]") {
  // NaN → 0 in Q, K and V (the max|x| of a row ignores them), and rows so small that their scale
  // is subnormal (1/s is then far from exact: the clamp to ±127 acts).
  const int S = 40, H = 2, D = 32;
  Problem p = make_problem(S, H, D, false, Layout::kFused, 777);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < H; ++h) {
      const_cast<float*>(p.q(b, 3, h))[5] = nan;
      const_cast<float*>(p.k(b, 4, h))[31] = nan;
      const_cast<float*>(p.v(b, 7, h))[0] = nan;
      for (int d = 0; d < D; ++d) {
        // In other blocks of 16 tokens than the NaNs (the kernels may treat a block at once).
        const_cast<float*>(p.q(b, 20, h))[d] *= 1e-38f;
        const_cast<float*>(p.k(b, 21, h))[d] *= 1e-38f;
        const_cast<float*>(p.v(b, 22, h))[d] *= 1e-38f;
      }
    }
  for (const Kernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    const Result want = run(p, ref::attention_i8, ref::attention_i8_scratch, true);
    const Result got = run(p, k->fn, k->scratch, true);
    I8Errors e;
    compare_i8(p, got, want, &e);
    INFO(k->name << ": max|err|/max|V| " << e.worst_vs_ref << ", bound use " << e.worst_bound_use);
    CHECK(e.bad == 0);
    CHECK(e.bad_prob == 0);
    CHECK(mask_violations(p, got) == 0);
  }
}

// Src masks and sliding windows (attention_pair_masks.h) on top of the padding masks: the same
// tolerances against the reference, which defines their semantics (kernel_types.h). Sequences
// longer than a 64-key block, so that the window skips whole blocks and rows meet their first
// key in a later block.
std::vector<Shape> pair_shapes() { return {{1, 1, 8}, {5, 2, 16}, {17, 3, 5}, {70, 2, 32}, {150, 2, 64}, {203, 1, 48}}; }

TEST_CASE("x86 f32 attention with src masks and windows matches the reference", "[x86][attention][f32][pairs]") {
  uint32_t seed = 9100;
  F32Errors total;
  const auto kernels = testable_simd_kernels(kAttentionF32Kernels);
  for (const Shape& sh : pair_shapes())
    for (bool null_mask : {false, true}) {
      Problem p = make_problem(sh.seq, sh.heads, sh.dim, null_mask, null_mask ? Layout::kFused : Layout::kStrided, seed++);
      for (const PairMasks& m : pair_mask_sweep(p.batch, sh.seq, seed++)) {
        INFO(m.name());
        p.pairs = &m;
        const Result want = run(p, ref::attention_f32, ref::attention_f32_scratch, true);
        for (const Kernel* k : kernels) check_f32_problem(p, *k, want, &total);
      }
    }
  INFO("overall max|err|/max|V| " << total.worst_out << ", max prob err " << total.worst_prob);
  CHECK(total.worst_out < 1e-5);
}

TEST_CASE("x86 f32 attention with a src mask: infinite V behind a masked key adds nothing", "[x86][attention][f32][pairs]") {
  // A key masked for some queries but not others, with +inf in its V: the rows that may not
  // attend it stay finite (exactly as the reference), the others get inf or NaN where it has.
  const int S = 70, H = 1, D = 16;
  Problem p = make_problem(S, H, D, true, Layout::kFused, 9300);
  for (int b = 0; b < p.batch; ++b) const_cast<float*>(p.v(b, 40, 0))[3] = std::numeric_limits<float>::infinity();
  const PairMasks m = make_pair_masks(PairMasks::kCausal, p.batch, S, false, 0, 1);
  p.pairs = &m;
  const Result want = run(p, ref::attention_f32, ref::attention_f32_scratch, true);
  for (const Kernel* k : testable_simd_kernels(kAttentionF32Kernels))
    for (bool with_probs : {false, true}) {
      const Result got = run(p, k->fn, k->scratch, with_probs);
      long mismatched = 0;
      for (int i = 0; i < S; ++i)
        for (int d = 0; d < D; ++d) {
          const float g = out_at(p, got, 0, 0, i, d), r = out_at(p, want, 0, 0, i, d);
          if (std::isfinite(r)) mismatched += !(std::fabs(g - r) <= 1e-5 * 2.0);
          else mismatched += std::isnan(r) != std::isnan(g) || (std::isinf(r) && g != r);
        }
      INFO(k->name << " probs=" << with_probs);
      CHECK(mismatched == 0);
      CHECK(std::isfinite(out_at(p, got, 0, 0, 39, 3)));
    }
}

TEST_CASE("x86 int8 attention with src masks and windows matches the reference within its bound",
          "[x86][attention][i8][pairs]") {
  uint32_t seed = 9500;
  const auto kernels = testable_simd_kernels(kAttentionI8Kernels);
  for (const Shape& sh : pair_shapes())
    for (bool null_mask : {false, true}) {
      Problem p = make_problem(sh.seq, sh.heads, sh.dim, null_mask, null_mask ? Layout::kFused : Layout::kStrided, seed++);
      for (const PairMasks& m : pair_mask_sweep(p.batch, sh.seq, seed++)) {
        p.pairs = &m;
        const Result want = run(p, ref::attention_i8, ref::attention_i8_scratch, true);
        for (const Kernel* k : kernels)
          for (bool with_probs : {false, true}) {
            const Result got = run(p, k->fn, k->scratch, with_probs);
            I8Errors e;
            compare_i8(p, got, want, &e);
            INFO(k->name << " " << m.name() << " seq=" << p.seq << " dim=" << p.dim << " null_mask=" << null_mask
                         << " probs=" << with_probs << ": max|err|/max|V| " << e.worst_vs_ref << " (bound use "
                         << e.worst_bound_use << "), vs fp64 " << e.worst_vs_fp64);
            CHECK(e.bad == 0);
            CHECK(e.bad_fp64 == 0);
            CHECK(e.bad_prob == 0);
            CHECK(mask_violations(p, got) == 0);
          }
      }
    }
}

// Whether two results hold the same floats, bit for bit (NaNs included).
bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
}

// Runs fn against `vnni` (the avx512vnni kernel, or another baseline) on every shape, padded or not, fused or strided, with
// and without probabilities, and requires the same bytes in the outputs and probabilities (NaN
// rows included). The shape whose seq is nan_seq also gets a NaN query value, an infinite key
// value (NaN rows) and a tiny V row; the one whose seq is pairs_seq every pair mask of the sweep.
// Returns the number of comparisons.
long compare_with_vnni(const Kernel& vnni, AttentionFn fn, AttentionScratchFn scratch, const std::vector<Shape>& shapes,
                       int nan_seq, int pairs_seq, uint32_t seed) {
  long compared = 0;
  for (const Shape& sh : shapes)
    for (bool null_mask : {false, true})
      for (Layout layout : {Layout::kFused, Layout::kStrided}) {
        Problem p = make_problem(sh.seq, sh.heads, sh.dim, null_mask, layout, seed++);
        if (sh.seq == nan_seq)
          for (int b = 0; b < p.batch; ++b) {
            const_cast<float*>(p.q(b, 3, 0))[1] = std::numeric_limits<float>::quiet_NaN();
            const_cast<float*>(p.k(b, sh.seq / 3, sh.heads - 1))[2] = std::numeric_limits<float>::infinity();
            for (int d = 0; d < sh.dim; ++d) const_cast<float*>(p.v(b, sh.seq / 2, 0))[d] *= 1e-38f;
          }
        const std::vector<PairMasks> sweep =
            sh.seq == pairs_seq ? pair_mask_sweep(p.batch, sh.seq, seed++) : std::vector<PairMasks>{};
        for (size_t m = 0; m <= sweep.size(); ++m) {
          p.pairs = m < sweep.size() ? &sweep[m] : nullptr;
          for (bool with_probs : {false, true}) {
            const Result want = run(p, vnni.fn, vnni.scratch, with_probs);
            const Result got = run(p, fn, scratch, with_probs);
            INFO("seq=" << p.seq << " heads=" << p.heads << " dim=" << p.dim << " null_mask=" << null_mask
                        << " fused=" << (layout == Layout::kFused) << " probs=" << with_probs
                        << (p.pairs ? " " + p.pairs->name() : std::string()));
            CHECK(same_bytes(got.out, want.out));
            CHECK(same_bytes(got.probs, want.probs));
            ++compared;
          }
        }
      }
  return compared;
}

const Kernel& i8_kernel(AttentionFn fn) {
  const Kernel* found = nullptr;
  for (const Kernel& k : kAttentionI8Kernels)
    if (k.fn == fn) found = &k;
  REQUIRE(found != nullptr);
  return *found;
}

// The AMX kernel runs the avx512vnni kernel's quantization and softmax with the same exact integer
// products on tiles (attention_i8_amx.h), so its floats must be that kernel's bit for bit: on the
// shapes where it uses tiles (seq >= 128, head_dim <= 64) and on those it hands to that kernel.
// On CPUs without AMX this is a WARN (the emulated-tile test below runs the same code there).
TEST_CASE("x86 int8 attention: the amx kernel gives the avx512vnni kernel's floats bit for bit",
          "[x86][attention][i8][amx]") {
  const Kernel& amx = i8_kernel(x86::qs8_attention__amx);
  if (!can_test(amx)) return;
  const std::vector<Shape> shapes = {{128, 12, 32}, {129, 3, 64}, {200, 2, 48}, {512, 2, 32}, {130, 2, 5},
                                     {140, 1, 1},   {133, 2, 16}, {130, 1, 80}, {127, 2, 32}, {16, 3, 32}};
  CHECK(compare_with_vnni(i8_kernel(x86::qs8_attention__avx512vnni), amx.fn, amx.scratch, shapes, 129, 133, 9900) > 80);
}

// The same AMX code (x86::AmxEngine) on emulated tiles (emulated_tiles.h), so that CPUs with
// AVX512-VNNI and no AMX check it too, at every seq (the native kernel hands seq < 128 to the VNNI
// kernel): bit for bit the avx512vnni kernel's floats, every tile instruction checked against the
// SDM's shape rules, the tiles released after every head.
using test::EmulatedTiles;
using test::qs8_attention_amx_emulated;
using test::qs8_attention_amx_emulated_scratch;

EmulatedTiles* g_emulated_tiles = nullptr;

void emulated_amx_attention(const AttentionArgs& args, int b, int h, void* scratch) {
  qs8_attention_amx_emulated(*g_emulated_tiles, args, b, h, scratch);
  CHECK_FALSE(g_emulated_tiles->configured());
}

TEST_CASE("x86 int8 attention: the AMX code on emulated tiles gives the avx512vnni kernel's floats bit for bit",
          "[x86][attention][i8][amx]") {
  const Kernel& vnni = i8_kernel(x86::qs8_attention__avx512vnni);
  if (!can_test(vnni)) return;
  EmulatedTiles tiles;
  g_emulated_tiles = &tiles;
  const std::vector<Shape> shapes = {{1, 1, 32},  {3, 2, 5},   {16, 3, 32},  {17, 2, 64}, {33, 1, 16},
                                     {64, 2, 48}, {70, 1, 32}, {100, 1, 1}, {130, 1, 64}};
  CHECK(compare_with_vnni(vnni, emulated_amx_attention, qs8_attention_amx_emulated_scratch, shapes, 33, 70, 9950) > 70);
  g_emulated_tiles = nullptr;
  CHECK(tiles.dpbssds > 0);
  CHECK(tiles.dpbsuds > 0);
  CHECK(tiles.dpbusds == 0);
}

// The avxvnni kernel is the avx2 kernel's code (attention_i8_avx2.h) on bytes with vpdpbusd: the
// same exact integer products, so the avx2 kernel's floats bit for bit. Shapes: head_dim 1-80 (not
// multiples of 4 or 8 too: the byte groups' padding), seq 1-200 (the key groups past the real
// keys), NaN and infinite inputs, every pair mask, probabilities.
const std::vector<Shape> kYmmShapes = {{1, 1, 32},  {3, 2, 5},   {16, 3, 32}, {17, 2, 64}, {33, 1, 16}, {64, 2, 48},
                                       {70, 1, 32}, {100, 1, 1}, {130, 1, 64}, {200, 2, 33}, {37, 1, 80}};

TEST_CASE("x86 int8 attention: the avxvnni kernel gives the avx2 kernel's floats bit for bit",
          "[x86][attention][i8][avxvnni]") {
  const Kernel& vnni = i8_kernel(x86::qs8_attention__avxvnni);
  if (!can_test(vnni)) return;
  CHECK(compare_with_vnni(i8_kernel(x86::qs8_attention__avx2), vnni.fn, vnni.scratch, kYmmShapes, 33, 70, 9970) > 80);
}

// The same code with an emulated vpdpbusd (emulated_attention_i8_vnni_avx2.cpp), so that CPUs with
// AVX2 and no AVX-VNNI (Zen 3, Zen 4, Skylake) check it too.
TEST_CASE("x86 int8 attention: the AVX-VNNI code with an emulated vpdpbusd gives the avx2 kernel's floats",
          "[x86][attention][i8][avxvnni]") {
  const Kernel& avx2 = i8_kernel(x86::qs8_attention__avx2);
  if (!can_test(avx2)) return;
  CHECK(compare_with_vnni(avx2, test::qs8_attention_vnni_ymm_emulated, test::qs8_attention_vnni_ymm_emulated_scratch,
                          kYmmShapes, 33, 70, 9990) > 80);
}

TEST_CASE("x86 attention timing: reference vs SIMD per (sequence, head)", "[.bench][attention_bench]") {
  // Hidden ([.bench]): prints microseconds per call at head_dim 32 (MiniLM), 12 heads, no mask.
  for (int S : {128, 512}) {
    const Problem p = make_problem(S, 12, 32, true, Layout::kFused, 99);
    AttentionArgs a;
    a.seq = S, a.heads = 12, a.head_dim = 32, a.qkv = p.qkv.data(), a.ld_qkv = p.ld_qkv, a.scale = p.scale;
    std::vector<float> out(static_cast<size_t>(p.batch) * S * p.ld_out);
    a.out = out.data(), a.ld_out = p.ld_out;
    std::vector<const Kernel*> entries;  // both lists, the references included
    for (const Kernel& k : kAttentionF32Kernels)
      if (isa_supported(k.features)) entries.push_back(&k);
    for (const Kernel& k : kAttentionI8Kernels)
      if (isa_supported(k.features)) entries.push_back(&k);
    for (const Kernel* entry : entries) {
      const Kernel& e = *entry;
      std::vector<unsigned char> storage(e.scratch(S, 32) + 64);
      void* scratch = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
      // CPU time of this process (single-threaded), so that other load on the machine does not
      // count as kernel time.
      int calls = 0;
      const std::clock_t t0 = std::clock();
      double seconds = 0.0;
      do {
        for (int h = 0; h < 12; ++h, ++calls) e.fn(a, calls % p.batch, h, scratch);
        seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
      } while (seconds < 0.5);
      WARN("seq " << S << " head_dim 32, " << e.name << ": " << 1e6 * seconds / calls << " us per (b, h)");
    }
  }
}

#endif  // ENCRT_ARCH_X86
