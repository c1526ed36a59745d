// The GELU kernels over arrays (kernel list gelu.h, used by backends whose own GEMMs lack GELU),
// every entry this CPU runs, against 0.5·x·erfc(-x/√2) in double on a grid of [-12, 12]:
//   AVX-512 (the quartic table): gelu_table::kMaxAbsError + u·|gelu(x)|;
//   AVX2 and NEON (the rational erf): 0.5·|x|·kErfMaxAbsError + 4u·(|x| + |gelu(x)|);
//   the reference (std::erf in fp32): 8u·(|x| + |gelu(x)|);
// with u = 2^-24; in place (y == x) gives the same bits; odd lengths leave the rest untouched.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/x86/x86_erf_coefficients.h"
#include "kernels/x86/x86_kernels.h"
#include "testable_kernels.h"

namespace {

using namespace encrt::kernels;

double tolerance(const GeluKernel& k, double x, double want) {
  const double u = FLT_EPSILON / 2.0;
  if (k.features == 0) return 8 * u * (std::fabs(x) + std::fabs(want));
  if (k.features & kIsaAvx512) return x86::gelu_table::kMaxAbsError + u * std::fabs(want);
  return 0.5 * std::fabs(x) * 4.0e-7 + 4 * u * (std::fabs(x) + std::fabs(want));
}

}  // namespace

TEST_CASE("GELU kernels stay within their bounds, in place too", "[kernels][gelu]") {
  std::vector<float> x;
  for (int i = -12 * 4096; i <= 12 * 4096; ++i) x.push_back(static_cast<float>(i) / 4096.0f);
  x.push_back(1e-30f);
  x.push_back(-1e-30f);
  const int n = static_cast<int>(x.size());  // odd: every kernel's tail runs
  for (const GeluKernel* k : test::testable_kernels(kGeluKernels)) {
    INFO("kernel " << k->name);
    std::vector<float> y(x.size() + 3, -777.0f);
    k->fn(n, x.data(), y.data());
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double xd = x[i];
      const double want = 0.5 * xd * std::erfc(-xd / std::sqrt(2.0));
      const double err = std::fabs(y[i] - want);
      worst = std::max(worst, err);
      if (!(err <= tolerance(*k, xd, want))) ++bad;
    }
    INFO("max |error| " << worst);
    CHECK(bad == 0);
    for (size_t i = x.size(); i < y.size(); ++i) CHECK(y[i] == -777.0f);
    std::vector<float> in_place = x;
    k->fn(n, in_place.data(), in_place.data());
    CHECK(std::memcmp(in_place.data(), y.data(), x.size() * sizeof(float)) == 0);
  }
}
