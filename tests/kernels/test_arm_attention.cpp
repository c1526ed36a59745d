// ARM NEON attention (the SIMD entries of kAttentionF32Kernels and kAttentionI8Kernels) and its
// exp, against the reference (under qemu-user on x86 hosts).
//   int8 attention: bit for bit the reference's outputs and probabilities (same quantization,
//        exact integer products, the same float steps and the same scalar expf), including zero,
//        NaN and infinite inputs and rows whose every quantized value is ±127.
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
#include <string>
#include <limits>
#include <random>
#include <vector>

#include "attention_pair_masks.h"
#include "kernels/arm/arm_kernels.h"
#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

namespace arm = encrt::kernels::arm;
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

TEST_CASE("ARM int8 attention is bit for bit the reference", "[arm][attention][i8]") {
  for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
    std::mt19937 rng(11);
    for (int S : {1, 3, 4, 17, 129})
      for (int D : {8, 20, 32, 40, 64})
        for (bool with_probs : {false, true}) {
          AttentionProblem p(S, D, 2.0f, rng);
          // Batch 0, token 0: an all-zero K/V row, a NaN and an infinity in Q of head 0.
          const int H = AttentionProblem::kHeads * D;
          for (int c = H; c < 3 * H; ++c) p.qkv[c] = 0.0f;
          p.qkv[1] = std::numeric_limits<float>::quiet_NaN();
          p.qkv[2] = std::numeric_limits<float>::infinity();
          // Tokens 1 and 2: constant Q and K rows, which quantize to ±127 everywhere: the largest
          // products (two of them fill an int16 lane of the ARMv8.0 kernel's Q·K).
          if (S > 2) {
            const size_t ld = static_cast<size_t>(p.args.ld_qkv);
            for (int c = 0; c < H; ++c) {
              p.qkv[ld + c] = 3.0f;
              p.qkv[ld + H + c] = -3.0f;
              p.qkv[2 * ld + H + c] = 3.0f;
            }
          }
          std::vector<float> want, got, want_p, got_p;
          p.run(ref::attention_i8, ref::attention_i8_scratch, &want, with_probs ? &want_p : nullptr);
          p.run(k->fn, k->scratch, &got, with_probs ? &got_p : nullptr);
          int bad = 0, bad_p = 0;
          auto same = [](float x, float y) { return x == y || (std::isnan(x) && std::isnan(y)); };
          for (size_t i = 0; i < want.size(); ++i) bad += !same(got[i], want[i]);
          for (size_t i = 0; i < want_p.size(); ++i) bad_p += !same(got_p[i], want_p[i]);
          INFO(k->name << " S=" << S << " D=" << D << " probs=" << with_probs);
          CHECK(bad == 0);
          CHECK(bad_p == 0);
        }
  }
}

TEST_CASE("ARM attention with src masks and windows matches the reference", "[arm][attention][pairs]") {
  // fp32 within the tolerances above; int8 bit for bit (the kernels take the reference's masked
  // path over each row's window).
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
          for (const AttentionKernel* k : testable_simd_kernels(kAttentionI8Kernels)) {
            p.run(k->fn, k->scratch, &got, with_probs ? &got_p : nullptr);
            int bad = 0, bad_p = 0;
            for (size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
            for (size_t i = 0; i < want_p.size(); ++i) bad_p += got_p[i] != want_p[i];
            INFO(k->name << " " << m.name() << " S=" << S << " D=" << D << " probs=" << with_probs);
            CHECK(bad == 0);
            CHECK(bad_p == 0);
          }
        }
      }
}

// Not a check: runs one kernel (ENCRT_COUNT_KERNEL, a kernel list name) on (sequence 0, head 0) of
// S = ENCRT_COUNT_SEQ (128), D = 32, ENCRT_COUNT_REPS times, for counting its instructions under
// qemu (benchmarks/qemu_instructions.sh): qemu's timings mean nothing, its instruction counts are
// exact.
TEST_CASE("ARM attention kernel run for instruction counts", "[.count]") {
  const char* name = std::getenv("ENCRT_COUNT_KERNEL");
  const char* reps_env = std::getenv("ENCRT_COUNT_REPS");
  const char* seq_env = std::getenv("ENCRT_COUNT_SEQ");
  REQUIRE(name != nullptr);
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
