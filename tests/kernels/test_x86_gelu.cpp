// The GELU of the x86 GEMM epilogues, against 0.5·x·erfc(-x/√2) in double on a dense grid of
// [-12, 12] and beyond:
//   AVX2: the rational erf approximation (x86_avx2_common.h), whose stated maximum absolute error
//     kErfMaxAbsError (x86_kernels.h) is checked on its own; GELU follows with
//     0.5·|x|·kErfMaxAbsError + 4u·(|x| + |gelu(x)|).
//   AVX-512: max(x, 0) - g(|x|) with g tabulated as quartic pieces (x86_avx512_common.h,
//     x86_erf_coefficients.h); absolute error at most gelu_table::kMaxAbsError plus the rounding
//     of the final subtraction, u·|gelu(x)| (u = 2^-24). The constant was measured over every
//     float in [-12, 12] (3.36e-7 beyond that rounding, 3.93e-7 in all); the grid below samples it.
//   The rational erf of AVX-512 (f32_erf__avx512, no longer behind the epilogues) keeps its test.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/isa.h"
#include "kernels/x86/x86_erf_coefficients.h"
#include "kernels/x86/x86_kernels.h"

namespace {

using namespace encrt::kernels;

enum class GeluKind { kRationalErf, kPiecewise };

struct Variant {
  IsaFeatures features;  // those of the file it is built in
  const char* name;
  void (*erf)(int, const float*, float*);
  void (*gelu)(int, const float*, float*);
  GeluKind gelu_kind;
};

const Variant kVariants[] = {
    {kIsaAvx2, "avx2", x86::f32_erf__avx2, x86::f32_gelu__avx2, GeluKind::kRationalErf},
    {kIsaAvx2 | kIsaAvx512, "avx512", x86::f32_erf__avx512, x86::f32_gelu__avx512, GeluKind::kPiecewise},
};

// Every float in [-12, 12] spaced by 2^-17 (3.1 million points, denser than the error's
// structure: the pieces of the AVX-512 table are 0.37 wide), plus the ends of the pieces, the
// values far out where erf or the table is clamped, tiny values, zeros and infinities.
std::vector<float> test_points() {
  std::vector<float> x;
  for (int i = -12 * 131072; i <= 12 * 131072; ++i) x.push_back(static_cast<float>(i) / 131072.0f);
  for (int i = 0; i <= 16; ++i) {
    const float edge = (static_cast<float>(i) + 0.5f) * x86::gelu_table::kStep;
    for (float v : {std::nextafter(edge, 0.0f), edge, std::nextafter(edge, 100.0f)}) {
      x.push_back(v);
      x.push_back(-v);
    }
  }
  for (float v : {1e-30f, 1e-10f, 1e-5f, 0.1f, 3.9f, 3.92f, 3.93f, 4.0f, 5.55f, x86::gelu_table::kClamp, 11.0f, 30.0f,
                  1e3f, 1e10f, FLT_MAX, std::numeric_limits<float>::infinity()}) {
    x.push_back(v);
    x.push_back(-v);
  }
  x.push_back(0.0f);
  x.push_back(-0.0f);
  return x;
}

}  // namespace

TEST_CASE("x86 erf stays within kErfMaxAbsError", "[x86][gelu]") {
  const std::vector<float> x = test_points();
  std::vector<float> y(x.size());
  for (const Variant& v : kVariants) {
    if (!isa_supported(v.features)) {
      WARN("erf/GELU of " << v.name << " not tested: this CPU lacks " << isa_features_name(v.features & ~cpu_isa_features()));
      continue;
    }
    v.erf(static_cast<int>(x.size()), x.data(), y.data());
    double worst = 0;
    float worst_at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = std::fabs(y[i] - std::erf(static_cast<double>(x[i])));
      if (!(e <= worst)) worst = e, worst_at = x[i];
    }
    INFO(v.name << ": max |erf error| " << worst << " at x = " << worst_at);
    CHECK(worst <= x86::kErfMaxAbsError);
    // Odd symmetry is exact, erf(0) = 0 and the clamp gives exactly ±1 far out.
    for (size_t i = 0; i + 1 < x.size(); i += 1)
      if (x[i] > 0 && x[i + 1] == -x[i]) CHECK(y[i + 1] == -y[i]);
    CHECK(y[x.size() - 2] == 0.0f);
    v.erf(1, &x[x.size() - 3], &y[0]);  // -inf
    CHECK(y[0] == -1.0f);
  }
}

TEST_CASE("x86 GELU stays within its derived bound", "[x86][gelu]") {
  const std::vector<float> x = test_points();
  std::vector<float> y(x.size());
  const double u = FLT_EPSILON / 2.0;
  for (const Variant& v : kVariants) {
    if (!isa_supported(v.features)) continue;
    v.gelu(static_cast<int>(x.size()), x.data(), y.data());
    int bad = 0;
    double worst = 0.0;
    float worst_at = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isinf(x[i]) || std::fabs(x[i]) > 1e30f) continue;  // 0.5·x overflows nothing, but inf·0 is NaN
      const double xd = x[i];
      // erfc(-z) = 1 + erf(z) without the cancellation of 1 + erf for negative x.
      const double want = 0.5 * xd * std::erfc(-xd / std::sqrt(2.0));
      const double err = std::fabs(y[i] - want);
      const double tol = v.gelu_kind == GeluKind::kPiecewise
                             ? x86::gelu_table::kMaxAbsError + u * std::fabs(want)
                             : 0.5 * std::fabs(xd) * x86::kErfMaxAbsError + 4 * u * (std::fabs(xd) + std::fabs(want));
      if (!(err <= tol)) ++bad;
      if (err > worst) worst = err, worst_at = x[i];
    }
    INFO(v.name << ": max |GELU error| " << worst << " at x = " << worst_at);
    CHECK(bad == 0);
    // Far from zero GELU is exact: x for large x, ±0 for large negative x.
    const float big[] = {30.0f, -30.0f, 5.55f, -5.55f};
    float out[4];
    v.gelu(4, big, out);
    CHECK(out[0] == 30.0f);
    CHECK(out[1] == 0.0f);
    CHECK(out[2] == 5.55f);
    CHECK(out[3] == 0.0f);
    if (v.gelu_kind == GeluKind::kPiecewise) {
      // GELU(0) = 0, +inf stays +inf, -inf gives NaN (-inf · Φ(-inf) = -inf · 0, as the reference
      // and PyTorch) and NaN stays NaN (the table drops g there).
      const float special[] = {0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
      float got[4];
      v.gelu(4, special, got);
      CHECK(got[0] == 0.0f);
      CHECK(got[1] == std::numeric_limits<float>::infinity());
      CHECK(std::isnan(got[2]));
      CHECK(std::isnan(got[3]));
      // Beyond 14.5 pieces g is dropped: exactly x / 0 from there on.
      const float edge = 14.5f * x86::gelu_table::kStep;
      const float past[] = {std::nextafter(edge, 100.0f) + 0.01f, -(std::nextafter(edge, 100.0f) + 0.01f)};
      v.gelu(2, past, got);
      CHECK(got[0] == past[0]);
      CHECK(got[1] == 0.0f);
      // Small |x| keep relative accuracy (piece 0 has no constant term): GELU(x) ≈ x/2.
      const float tiny[] = {1e-30f, -1e-30f};
      v.gelu(2, tiny, got);
      CHECK(std::fabs(got[0] - 0.5e-30) <= 1e-6 * 0.5e-30);
      CHECK(std::fabs(got[1] + 0.5e-30) <= 1e-6 * 0.5e-30);
    }
  }
}

#endif  // ENCRT_ARCH_X86
