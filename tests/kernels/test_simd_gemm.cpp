// SIMD GEMM kernels (fp32, fp16 weights, u8×s8): every entry of their kernel lists that this CPU
// supports, x86 or ARM, against the reference kernels on odd shapes, epilogues, strides and
// residual aliasing.
//
// Tolerances, with u = 2^-24 (fp32 unit roundoff) and mag = Σ_k |a_k·w_k|:
//   fp32 / fp16-weight GEMMs: the kernels sum k = 0..K-1 like the reference but with FMA, so the
//     pre-activation values may differ by  u·(4·√K·mag + 2·(|x| + |bias|))  (a few ulps × √K);
//   u8×s8: the integer part must be bit-exact, so with no epilogue the outputs must be identical
//     (same float(acc)·scale·w_scale, same order); with an epilogue, 2u·(|x| + |bias|) covers a
//     fused multiply-add the compiler may form in the bias addition;
//   then activation: ReLU keeps the bound; GELU is 1.13-Lipschitz, plus the kernel's own GELU
//     error and the reference's fp32 GELU (a few ulps, 8u·(|x| + |gelu(x)|) with the former):
//     AVX2 uses the rational erf (absolute error kErfMaxAbsError): + 0.5·|x|·kErfMaxAbsError;
//     AVX-512 the piecewise-quartic GELU (x86_erf_coefficients.h): + gelu_table::kMaxAbsError
//     (its own final rounding, u·|gelu(x)|, is inside the 8u term);
//   then + residual: + 4u·(|y| + |residual|).
// Columns between N and ldc must keep their sentinel (masked tails must not write past N).
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86) || defined(ENCRT_ARCH_ARM64)

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_lists.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/x86/x86_erf_coefficients.h"
#include "kernels/x86/x86_kernels.h"
#include "testable_kernels.h"
#include "epilogue_cases.h"

namespace {

using namespace encrt::kernels;

constexpr double kU = FLT_EPSILON / 2.0;
constexpr float kSentinel = -777.25f;

using encrt::kernels::test::testable_simd_kernels;

std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

using namespace encrt::kernels::test;  // EpilogueCase, kPlain, kRotating (epilogue_cases.h)

const int kMs[] = {1, 3, 7, 128};
const int kNs[] = {1, 15, 17, 64, 100};
const int kKs[] = {1, 3, 4, 5, 64, 384, 1537};

double gelu_exact(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// The bound on |kernel - reference| for one output, given the bound `pre_err` on the difference
// of the pre-activation values and the exact pre-activation value x, for a kernel that requires
// `features`.
double output_tolerance(IsaFeatures features, const EpilogueCase& e, double pre_err, double x, double residual) {
  double err = pre_err;
  double y = x;
  if (e.activation == Activation::kRelu) {
    y = x > 0 ? x : 0;
  } else if (e.activation == Activation::kGelu) {
    y = gelu_exact(x);
    // AVX-512 kernels use the quartic GELU table; AVX2, AVX-VNNI and NEON the rational erf.
    const bool table = (features & kIsaAvx512) != 0;
    const double own = table ? static_cast<double>(x86::gelu_table::kMaxAbsError)
                             : 0.5 * std::fabs(x) * x86::kErfMaxAbsError;
    err = 1.13 * pre_err + own + 8 * kU * (std::fabs(x) + std::fabs(y));
  }
  if (e.residual != Residual::kNone) err += 4 * kU * (std::fabs(y) + std::fabs(residual));
  return err;
}

// One problem: shapes, strides, inputs and the epilogue buffers shared by every GEMM type.
struct Problem {
  int M, N, K, lda, ldc, ldr;
  EpilogueCase epilogue;
  std::vector<float> a, w_rowmajor, bias, residual;

  Problem(int M_, int N_, int K_, const EpilogueCase& e, uint32_t seed)
      : M(M_), N(N_), K(K_), lda(K_ + 5), ldc(N_ + 3), ldr(N_ + 7), epilogue(e) {
    a = random_floats(static_cast<size_t>(M) * lda, -1.0f, 1.0f, seed);
    w_rowmajor = random_floats(static_cast<size_t>(N) * K, -0.5f, 0.5f, seed + 1);
    bias = random_floats(static_cast<size_t>(N), -2.0f, 2.0f, seed + 2);
    residual = random_floats(static_cast<size_t>(M) * ldr, -3.0f, 3.0f, seed + 3);
    if (e.residual == Residual::kAliasC) ldr = ldc;
  }

  // The output buffer before the call: sentinels, or the residual when it aliases C.
  std::vector<float> initial_c() const {
    std::vector<float> c(static_cast<size_t>(M) * ldc, kSentinel);
    if (epilogue.residual == Residual::kAliasC)
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) c[static_cast<size_t>(m) * ldc + n] = residual_at(m, n);
    return c;
  }
  float residual_at(int m, int n) const { return residual[static_cast<size_t>(m) * ldr + n]; }

  // The epilogue pointing into `c` when the residual aliases it.
  GemmEpilogue make_epilogue(float* c) const {
    GemmEpilogue ep;
    ep.bias = epilogue.bias ? bias.data() : nullptr;
    ep.activation = epilogue.activation;
    if (epilogue.residual == Residual::kSeparate) {
      ep.residual = residual.data();
      ep.ldr = ldr;
    } else if (epilogue.residual == Residual::kAliasC) {
      ep.residual = c;
      ep.ldr = ldc;
    }
    return ep;
  }
  double bias_at(int n) const { return epilogue.bias ? bias[n] : 0.0; }
  double residual_or_zero(int m, int n) const {
    return epilogue.residual == Residual::kNone ? 0.0 : residual_at(m, n);
  }
  std::string describe() const {
    std::ostringstream s;
    s << "M=" << M << " N=" << N << " K=" << K << " lda=" << lda << " ldc=" << ldc << " epilogue=" << epilogue.name;
    return s.str();
  }
};

// Counts outputs outside tolerance and damaged padding; reports the first failures.
template <typename ToleranceFn>
void compare(const Problem& p, const std::vector<float>& got, const std::vector<float>& want, const char* kernel,
             ToleranceFn tolerance) {
  int bad = 0, bad_padding = 0;
  std::ostringstream first;
  for (int m = 0; m < p.M; ++m) {
    for (int n = 0; n < p.ldc; ++n) {
      const size_t i = static_cast<size_t>(m) * p.ldc + n;
      if (n >= p.N) {
        if (got[i] != kSentinel) ++bad_padding;
        continue;
      }
      const double tol = tolerance(m, n);
      const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
      if (!(diff <= tol)) {
        if (bad++ < 3)
          first << " (m=" << m << " n=" << n << " got " << got[i] << " want " << want[i] << " tol " << tol << ")";
      }
    }
  }
  INFO(kernel << ": " << p.describe() << first.str());
  CHECK(bad == 0);
  CHECK(bad_padding == 0);
}

// The fp16-arithmetic GEMM (avx512fp16) against ref::gemm_f16_arith, which emulates its exact
// rounding: without an epilogue the outputs must be identical; with one, the pre-activation
// values are identical and only the epilogue's fp32 steps may differ (as for u8s8).
void compare_f16_arith(const Problem& p, const std::vector<uint16_t>& w, const std::vector<float>& got,
                       IsaFeatures features, const char* name) {
  std::vector<float> want = p.initial_c();
  ref::gemm_f16_arith(p.M, p.N, p.K, p.a.data(), p.lda, w.data(), want.data(), p.ldc, p.make_epilogue(want.data()));
  std::vector<float> plain(static_cast<size_t>(p.M) * p.ldc, kSentinel);
  ref::gemm_f16_arith(p.M, p.N, p.K, p.a.data(), p.lda, w.data(), plain.data(), p.ldc, GemmEpilogue{});
  const bool exact = p.epilogue.residual == Residual::kNone && !p.epilogue.bias &&
                     p.epilogue.activation == Activation::kNone;
  compare(p, got, want, name, [&](int m, int n) {
    if (exact) return 0.0;
    const double x = plain[static_cast<size_t>(m) * p.ldc + n] + p.bias_at(n);
    const double pre = 2 * kU * (std::fabs(x) + std::fabs(p.bias_at(n)));
    return output_tolerance(features, p.epilogue, pre, x, p.residual_or_zero(m, n));
  });
}

// fp32 and fp16-weight GEMMs share everything but the packed weights (WT) and the kernel list
// entries (GemmF32Kernel or GemmF16Kernel).
template <typename WT, typename Kernel>
void run_float_case(const Problem& p, const std::vector<const Kernel*>& kernels) {
  std::vector<WT> w(panel_f32_size(p.N, p.K));
  if constexpr (std::is_same_v<WT, float>)
    ref::pack_weights_f32(p.N, p.K, p.w_rowmajor.data(), w.data());
  else
    ref::pack_weights_f16(p.N, p.K, p.w_rowmajor.data(), w.data());
  auto weight = [&](int n, int k) -> double {
    if constexpr (std::is_same_v<WT, float>)
      return w[panel_f32_index(n, k, p.K)];
    else
      return encrt::half_to_float(w[panel_f32_index(n, k, p.K)]);
  };
  // Exact pre-activation values and magnitudes, in double.
  std::vector<double> x(static_cast<size_t>(p.M) * p.N), mag(x.size());
  for (int m = 0; m < p.M; ++m)
    for (int n = 0; n < p.N; ++n) {
      double s = 0, a = 0;
      for (int k = 0; k < p.K; ++k) {
        const double t = static_cast<double>(p.a[static_cast<size_t>(m) * p.lda + k]) * weight(n, k);
        s += t;
        a += std::fabs(t);
      }
      x[static_cast<size_t>(m) * p.N + n] = s + p.bias_at(n);
      mag[static_cast<size_t>(m) * p.N + n] = a;
    }

  std::vector<float> want = p.initial_c();
  const GemmEpilogue ep_ref = p.make_epilogue(want.data());
  if constexpr (std::is_same_v<WT, float>)
    ref::gemm_f32(p.M, p.N, p.K, p.a.data(), p.lda, w.data(), want.data(), p.ldc, ep_ref);
  else
    ref::gemm_f16(p.M, p.N, p.K, p.a.data(), p.lda, w.data(), want.data(), p.ldc, ep_ref);

  const double sqrt_k = std::sqrt(static_cast<double>(p.K));
  auto tolerance = [&](IsaFeatures features, int m, int n) {
    const size_t i = static_cast<size_t>(m) * p.N + n;
    const double pre = kU * (4 * sqrt_k * mag[i] + 2 * (std::fabs(x[i]) + std::fabs(p.bias_at(n))));
    return output_tolerance(features, p.epilogue, pre, x[i], p.residual_or_zero(m, n));
  };
  for (const Kernel* k : kernels) {
    std::vector<float> got = p.initial_c();
    const GemmEpilogue ep = p.make_epilogue(got.data());
    auto tolerance_here = [&](int m, int n) { return tolerance(k->features, m, n); };
    k->fn(p.M, p.N, p.K, p.a.data(), p.lda, w.data(), got.data(), p.ldc, ep);
    if constexpr (std::is_same_v<WT, float>) {
      compare(p, got, want, k->name, tolerance_here);
    } else if (k->arith) {
      compare_f16_arith(p, w, got, k->features, k->name);
    } else {
      compare(p, got, want, k->name, tolerance_here);
    }
  }
}

// Quantized operands of a u8×s8 problem.
struct QuantizedProblem {
  int ldq;
  std::vector<uint8_t> q;
  std::vector<float> scale, w_scale;
  std::vector<int32_t> zp, w_sum;
  std::vector<int8_t> w;
  mutable std::vector<uint8_t> workspace;  // for the kernels that re-encode rows

  // max_level: the weights' largest |q|, 127, or 63 for kernels that need 7-bit weights
  // (weight_levels_for below).
  explicit QuantizedProblem(const Problem& p, int max_level = 127) : workspace(max_gemm_u8s8_workspace(p.K)) {
    // Rows are padded to a multiple of 4 plus 8 more bytes (an ld larger than needed).
    ldq = round_up(p.K, kPanelK) + 8;
    q.assign(static_cast<size_t>(p.M) * ldq, 0xA5);
    scale.resize(p.M);
    zp.resize(p.M);
    ref::quantize_rows_u8(p.M, p.K, p.a.data(), p.lda, nullptr, q.data(), ldq, scale.data(), zp.data());
    w.resize(panel_i8_size(p.N, p.K));
    w_scale.resize(p.N);
    w_sum.resize(p.N);
    ref::quantize_pack_weights_i8(p.N, p.K, p.w_rowmajor.data(), w.data(), w_scale.data(), w_sum.data(), max_level);
  }
  QuantizedRows rows() const { return {q.data(), ldq, scale.data(), zp.data(), workspace.data()}; }
};

// Every kernel of `kernels` against the reference on the problem's weights quantized to
// [-max_level, max_level].
void run_u8s8_case_at(const Problem& p, const std::vector<const GemmU8S8Kernel*>& kernels, int max_level) {
  const QuantizedProblem qp(p, max_level);
  std::vector<float> want = p.initial_c();
  const GemmEpilogue ep_ref = p.make_epilogue(want.data());
  ref::gemm_u8s8(p.M, p.N, p.K, qp.rows(), qp.w.data(), qp.w_sum.data(), qp.w_scale.data(), want.data(), p.ldc,
                 ep_ref);
  // Dequantized pre-epilogue values (exact integer part, reference float part).
  std::vector<float> plain(static_cast<size_t>(p.M) * p.ldc, kSentinel);
  ref::gemm_u8s8(p.M, p.N, p.K, qp.rows(), qp.w.data(), qp.w_sum.data(), qp.w_scale.data(), plain.data(), p.ldc,
                 GemmEpilogue{});
  const bool exact = p.epilogue.residual == Residual::kNone && !p.epilogue.bias &&
                     p.epilogue.activation == Activation::kNone;
  auto tolerance = [&](IsaFeatures features, int m, int n) {
    if (exact) return 0.0;
    const double v = plain[static_cast<size_t>(m) * p.ldc + n];
    const double x = v + p.bias_at(n);
    const double pre = 2 * kU * (std::fabs(x) + std::fabs(p.bias_at(n)));
    return output_tolerance(features, p.epilogue, pre, x, p.residual_or_zero(m, n));
  };
  for (const GemmU8S8Kernel* k : kernels) {
    std::vector<float> got = p.initial_c();
    const GemmEpilogue ep = p.make_epilogue(got.data());
    INFO("weights in [-" << max_level << ", " << max_level << "]");
    k->fn(p.M, p.N, p.K, qp.rows(), qp.w.data(), qp.w_sum.data(), qp.w_scale.data(), got.data(), p.ldc, ep);
    compare(p, got, want, k->name, [&](int m, int n) { return tolerance(k->features, m, n); });
  }
}

// The weights' largest |q| a kernel is tested with: the converter's 8-bit weights
// ([-127, 127]), or 7-bit ones ([-63, 63]) for a kernel that needs them (kNarrowWeights).
int weight_levels_for(const GemmU8S8Kernel& k) { return k.weight_bound < kSymmetricWeights ? k.weight_bound : 127; }

// Every kernel on 8-bit weights unless it needs 7-bit ones, and every kernel on 7-bit weights.
void run_u8s8_case(const Problem& p, const std::vector<const GemmU8S8Kernel*>& all) {
  for (const int levels : {127, kNarrowInt8Weight}) {
    std::vector<const GemmU8S8Kernel*> kernels;
    for (const GemmU8S8Kernel* k : all)
      if (levels == kNarrowInt8Weight || weight_levels_for(*k) == 127) kernels.push_back(k);
    run_u8s8_case_at(p, kernels, levels);
  }
}

template <typename Fn>
void for_each_problem(Fn fn) {
  uint32_t seed = 1000;
  size_t rotation = 0;
  for (int M : kMs)
    for (int N : kNs)
      for (int K : kKs) {
        fn(Problem(M, N, K, kPlain, seed));
        fn(Problem(M, N, K, kRotating[rotation++ % std::size(kRotating)], seed + 7));
        seed += 11;
      }
}

}  // namespace

TEST_CASE("SIMD f32 GEMM matches the reference", "[simd][gemm][f32]") {
  const auto kernels = testable_simd_kernels(kGemmF32Kernels);
  for_each_problem([&](const Problem& p) { run_float_case<float>(p, kernels); });
}

TEST_CASE("SIMD f16-weight GEMM matches the reference", "[simd][gemm][f16]") {
  const auto kernels = testable_simd_kernels(kGemmF16Kernels);
  for_each_problem([&](const Problem& p) { run_float_case<uint16_t>(p, kernels); });
}

TEST_CASE("SIMD u8s8 GEMM matches the reference, integer part bit-exact", "[simd][gemm][u8s8]") {
  const auto kernels = testable_simd_kernels(kGemmU8S8Kernels);
  for_each_problem([&](const Problem& p) { run_u8s8_case(p, kernels); });
}

TEST_CASE("SIMD u8s8 GEMM saturating inputs stay exact", "[simd][gemm][u8s8]") {
  // All activations 255 and all weights ±127: every vpmaddubsw-style int16 pair sum would
  // saturate (255·127·2 > 32767); an exact kernel still matches the reference bit for bit. A
  // kernel for 7-bit weights gets ±63, its extremes (255·63·2 = 32130, just below 32767).
  for (const int bound : {127, kNarrowInt8Weight}) {
    const int M = 5, N = 33, K = 37;
    const int ldq = round_up(K, kPanelK);
    std::vector<uint8_t> q(static_cast<size_t>(M) * ldq, 255);
    std::vector<float> scale(M, 0.01f), w_scale(N, 0.02f);
    std::vector<int32_t> zp(M, 3), w_sum(N, 0);
    std::vector<int8_t> w(panel_i8_size(N, K), 0);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) {
        const int8_t v = static_cast<int8_t>(((n + k) % 3 == 0) ? -bound : bound);
        w[panel_i8_index(n, k, K)] = v;
        w_sum[n] += v;
      }
    std::vector<uint8_t> workspace(max_gemm_u8s8_workspace(K));
    const QuantizedRows rows{q.data(), ldq, scale.data(), zp.data(), workspace.data()};
    std::vector<float> want(static_cast<size_t>(M) * N), got(want.size());
    ref::gemm_u8s8(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), want.data(), N, GemmEpilogue{});
    int checked = 0;
    for (const GemmU8S8Kernel* k : testable_simd_kernels(kGemmU8S8Kernels)) {
      if (weight_levels_for(*k) < bound) continue;
      std::fill(got.begin(), got.end(), 0.0f);
      k->fn(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), got.data(), N, GemmEpilogue{});
      INFO(k->name << ", weights ±" << bound);
      CHECK(got == want);
      ++checked;
    }
    CHECK((checked > 0 || testable_simd_kernels(kGemmU8S8Kernels).empty()));
  }
}

TEST_CASE("SIMD u8s8 GEMMs that take any weights are exact with -128", "[simd][gemm][u8s8]") {
  // Weights of -128 next to 127 and activations over the whole range, 0 and 255 included: the
  // kernels listed kAnyWeights match the reference bit for bit; those listed kSymmetricWeights
  // (the CPU backend gives them no -128, test_int8_weight_range.cpp) are held to [-127, 127] by
  // the other cases.
  const int M = 7, N = 37, K = 41;
  const int ldq = round_up(K, kPanelK);
  std::vector<uint8_t> q(static_cast<size_t>(M) * ldq);
  for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>((i * 37) % 256);
  std::vector<float> scale(M, 0.01f), w_scale(N, 0.02f);
  std::vector<int32_t> zp(M), w_sum(N, 0);
  for (int m = 0; m < M; ++m) zp[m] = (m * 41) % 256;
  std::vector<int8_t> w(panel_i8_size(N, K), 0);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      const int8_t v = (n + k) % 2 == 0 ? -128 : static_cast<int8_t>(127 - (n * k) % 255);
      w[panel_i8_index(n, k, K)] = v;
      w_sum[n] += v;
    }
  std::vector<uint8_t> workspace(max_gemm_u8s8_workspace(K));
  const QuantizedRows rows{q.data(), ldq, scale.data(), zp.data(), workspace.data()};
  std::vector<float> want(static_cast<size_t>(M) * N), got(want.size());
  ref::gemm_u8s8(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), want.data(), N, GemmEpilogue{});
  int checked = 0;
  for (const GemmU8S8Kernel* k : testable_simd_kernels(kGemmU8S8Kernels)) {
    if (k->weight_bound < kAnyWeights) continue;
    std::fill(got.begin(), got.end(), 0.0f);
    k->fn(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), got.data(), N, GemmEpilogue{});
    INFO(k->name);
    CHECK(got == want);
    ++checked;
  }
  CHECK((checked > 0 || testable_simd_kernels(kGemmU8S8Kernels).empty()));
}

TEST_CASE("SIMD u8s8 GEMM stays exact at the int8 extremes (weights -128)", "[simd][gemm][u8s8]") {
  // Kernels listed kAnyWeights take every int8 weight, -128 included (the converter writes
  // [-127, 127], but a file may hold -128: the CPU backend then keeps kSymmetricWeights kernels
  // away from it). Activations 0 and 255 against weights -128 and
  // 127 are the extremes of every product: they fill the int16 lanes of the neon kernel
  // (q·w of two groups as (q - 128)·w - (127 - q)·w' reaches ±32640) and would overflow a kernel
  // that sums two flipped products (q - 128)·w in int16 ((-128)·(-128) · 2 = 32768). K = 1029
  // (an odd count of k-groups, more than 128 of them) and rows of the four patterns: all 0, all
  // 255, alternating 0/255 by group, and a ramp. M = 7 and 16 (the AVX2 widened kernel's 5-row
  // tiles with the weights widened in the loop) and, for its blocks of rows with copied weights
  // (x86_kernels.h), 150 (two balanced blocks, 5-row tiles) and 181 (128 + 53).
  for (const int M : {7, 16, 150, 181}) {
    const int N = 37, K = 1029;
    const int ldq = round_up(K, kPanelK) + 4;
    std::vector<uint8_t> q(static_cast<size_t>(M) * ldq, 0x5A);
    std::vector<float> scale(M), w_scale(N);
    std::vector<int32_t> zp(M), w_sum(N, 0);
    for (int m = 0; m < M; ++m) {
      scale[m] = 0.001f * (m + 1);
      zp[m] = (m * 37) % 256;
      for (int k = 0; k < K; ++k) {
        const int pattern = m % 4;
        uint8_t v = pattern == 0 ? 0 : pattern == 1 ? 255 : pattern == 2 ? ((k / 4) % 2 ? 255 : 0) : (k * 7) % 256;
        q[static_cast<size_t>(m) * ldq + k] = v;
      }
    }
    std::vector<int8_t> w(panel_i8_size(N, K), 0);
    for (int n = 0; n < N; ++n) {
      w_scale[n] = 0.002f * (n + 1);
      for (int k = 0; k < K; ++k) {
        // Columns: all -128, all 127, -128 and 127 by group, then mixed values.
        const int pattern = n % 4;
        const int v = pattern == 0 ? -128 : pattern == 1 ? 127 : pattern == 2 ? ((k / 4) % 2 ? 127 : -128) : (n * 31 + k * 17) % 256 - 128;
        w[panel_i8_index(n, k, K)] = static_cast<int8_t>(v);
        w_sum[n] += v;
      }
    }
    std::vector<uint8_t> workspace(max_gemm_u8s8_workspace(K));
    const QuantizedRows rows{q.data(), ldq, scale.data(), zp.data(), workspace.data()};
    std::vector<float> want(static_cast<size_t>(M) * N), got(want.size());
    ref::gemm_u8s8(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), want.data(), N, GemmEpilogue{});
    for (const GemmU8S8Kernel* k : testable_simd_kernels(kGemmU8S8Kernels)) {
      if (k->weight_bound < kAnyWeights) continue;
      std::fill(got.begin(), got.end(), 0.0f);
      k->fn(M, N, K, rows, w.data(), w_sum.data(), w_scale.data(), got.data(), N, GemmEpilogue{});
      INFO(k->name << ", M = " << M);
      CHECK(got == want);
    }
  }
}

TEST_CASE("SIMD GEMMs called on row and panel-aligned column blocks equal one call", "[simd][gemm]") {
  // How the runtime splits work across threads: rows by offsetting A/C/residual, columns by whole
  // 16-column panels (W, bias, w_sum, w_scale and C offset alike). Results must be identical.
  const int M = 7, N = 100, K = 64;
  const Problem p(M, N, K, {true, Activation::kGelu, Residual::kSeparate, "bias+gelu+residual"}, 77);
  const QuantizedProblem qp8(p);
  std::vector<float> wf(panel_f32_size(N, K));
  ref::pack_weights_f32(N, K, p.w_rowmajor.data(), wf.data());
  const int row_split = 3, col_split = 48;  // 48 = 3 panels
  const GemmEpilogue ep = p.make_epilogue(nullptr);
  // The epilogue of the block at (r0, c0).
  auto sub_epilogue = [&](int r0, int c0) {
    GemmEpilogue sub = ep;
    sub.bias = ep.bias + c0;
    sub.residual = ep.residual + static_cast<size_t>(r0) * ep.ldr + c0;
    return sub;
  };
  for (const GemmF32Kernel* k : testable_simd_kernels(kGemmF32Kernels)) {
    std::vector<float> whole(static_cast<size_t>(M) * p.ldc, kSentinel), split = whole;
    k->fn(M, N, K, p.a.data(), p.lda, wf.data(), whole.data(), p.ldc, ep);
    for (int r0 : {0, row_split}) {
      const int rows = r0 == 0 ? row_split : M - row_split;
      for (int c0 : {0, col_split}) {
        const int cols = c0 == 0 ? col_split : N - col_split;
        const size_t c_off = static_cast<size_t>(r0) * p.ldc + c0;
        k->fn(rows, cols, K, p.a.data() + static_cast<size_t>(r0) * p.lda, p.lda,
              wf.data() + static_cast<size_t>(c0 / kPanelN) * K * kPanelN, split.data() + c_off, p.ldc,
              sub_epilogue(r0, c0));
      }
    }
    INFO(k->name);
    CHECK(split == whole);
  }
  const QuantizedProblem qp7(p, kNarrowInt8Weight);
  for (const GemmU8S8Kernel* k : testable_simd_kernels(kGemmU8S8Kernels)) {
    const QuantizedProblem& qp = weight_levels_for(*k) == 127 ? qp8 : qp7;
    std::vector<float> whole(static_cast<size_t>(M) * p.ldc, kSentinel), split = whole;
    k->fn(M, N, K, qp.rows(), qp.w.data(), qp.w_sum.data(), qp.w_scale.data(), whole.data(), p.ldc, ep);
    for (int r0 : {0, row_split}) {
      const int rows = r0 == 0 ? row_split : M - row_split;
      for (int c0 : {0, col_split}) {
        const int cols = c0 == 0 ? col_split : N - col_split;
        const size_t c_off = static_cast<size_t>(r0) * p.ldc + c0;
        QuantizedRows qr = qp.rows();
        qr.data += static_cast<size_t>(r0) * qp.ldq;
        qr.scale += r0;
        qr.zero_point += r0;
        k->fn(rows, cols, K, qr, qp.w.data() + static_cast<size_t>(c0 / kPanelN) * panel_i8_size(kPanelN, K),
              qp.w_sum.data() + c0, qp.w_scale.data() + c0, split.data() + c_off, p.ldc, sub_epilogue(r0, c0));
      }
    }
    INFO(k->name);
    CHECK(split == whole);
  }
}

TEST_CASE("SIMD f16 GEMM stays finite and close where fp16 arithmetic would overflow", "[simd][gemm][f16]") {
  // Rows 0..2 of A hold values whose products (4000 · [1, 2] per term, 32 terms per lane and block) overflow an
  // fp16 partial sum; the other rows are ordinary. Every output must be finite and within the
  // fp16-arithmetic bound of the exact value, for every kernel (the fp16-arithmetic kernels
  // recompute the overflowing tiles in fp32; the others never leave fp32).
  const int M = 19, N = 70, K = 384;
  std::vector<float> a = random_floats(static_cast<size_t>(M) * K, -1.0f, 1.0f, 77);
  for (int m = 0; m < 3; ++m)
    for (int k = 0; k < K; ++k) a[static_cast<size_t>(m) * K + k] = 4000.0f;
  std::vector<float> w_rowmajor = random_floats(static_cast<size_t>(N) * K, 1.0f, 2.0f, 78);
  std::vector<uint16_t> w(panel_f32_size(N, K));
  ref::pack_weights_f16(N, K, w_rowmajor.data(), w.data());
  for (const GemmF16Kernel* k : testable_simd_kernels(kGemmF16Kernels)) {
    std::vector<float> c(static_cast<size_t>(M) * N, kSentinel);
    k->fn(M, N, K, a.data(), K, w.data(), c.data(), N, GemmEpilogue{});
    int bad = 0;
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        double exact = 0, mag = 0;
        for (int k = 0; k < K; ++k) {
          const double p = static_cast<double>(a[static_cast<size_t>(m) * K + k]) *
                           encrt::half_to_float(w[panel_f32_index(n, k, K)]);
          exact += p;
          mag += std::fabs(p);
        }
        const double bound = (kF16ArithBlockK / 2 + 2) * std::ldexp(1.0, -11) * mag + 1e-5 * mag;
        const float got = c[static_cast<size_t>(m) * N + n];
        if (!std::isfinite(got) || std::fabs(got - exact) > bound) ++bad;
      }
    INFO(k->name);
    CHECK(bad == 0);
  }
}

#endif  // ENCRT_ARCH_X86 || ENCRT_ARCH_ARM64
