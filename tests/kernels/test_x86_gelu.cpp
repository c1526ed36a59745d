// The erf approximation behind the x86 GELU epilogues: its stated maximum absolute error
// kErfMaxAbsError (x86_kernels.h) holds on a dense grid of [-10, 10] and beyond, against
// std::erf in double; GELU follows with 0.5·|x|·kErfMaxAbsError + 4u·(|x| + |gelu(x)|).
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/x86/x86_kernels.h"

namespace {

using namespace encrt::kernels;

struct Variant {
  IsaLevel level;
  const char* name;
  void (*erf)(int, const float*, float*);
  void (*gelu)(int, const float*, float*);
};

const Variant kVariants[] = {
    {IsaLevel::kAvx2, "avx2", x86::f32_erf__avx2, x86::f32_gelu__avx2},
    {IsaLevel::kAvx512, "avx512", x86::f32_erf__avx512, x86::f32_gelu__avx512},
};

// Every float in [-10, 10] spaced by 2^-17 (2.6 million points, denser than the error's
// structure), plus the values far out where erf is clamped, zeros and infinities.
std::vector<float> test_points() {
  std::vector<float> x;
  for (int i = -10 * 131072; i <= 10 * 131072; ++i) x.push_back(static_cast<float>(i) / 131072.0f);
  for (float v : {1e-30f, 1e-10f, 0.1f, 3.9f, 3.92f, 3.93f, 4.0f, 5.55f, 11.0f, 30.0f, 1e3f, 1e10f, FLT_MAX,
                  std::numeric_limits<float>::infinity()}) {
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
    if (v.level > detect_isa_level()) {
      WARN("erf/GELU of " << v.name << " not tested: this CPU only supports " << isa_level_name(detect_isa_level()));
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
    if (v.level > detect_isa_level()) continue;
    v.gelu(static_cast<int>(x.size()), x.data(), y.data());
    int bad = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isinf(x[i]) || std::fabs(x[i]) > 1e30f) continue;  // 0.5·x overflows nothing, but inf·0 is NaN
      const double xd = x[i];
      const double want = 0.5 * xd * (1.0 + std::erf(xd / std::sqrt(2.0)));
      const double tol = 0.5 * std::fabs(xd) * x86::kErfMaxAbsError + 4 * u * (std::fabs(xd) + std::fabs(want));
      bad += !(std::fabs(y[i] - want) <= tol);
    }
    INFO(v.name);
    CHECK(bad == 0);
    // Far from zero GELU is exact: x for large x, -0 for large negative x.
    const float big[] = {30.0f, -30.0f};
    float out[2];
    v.gelu(2, big, out);
    CHECK(out[0] == 30.0f);
    CHECK(out[1] == 0.0f);
  }
}

#endif  // ENCRT_ARCH_X86
