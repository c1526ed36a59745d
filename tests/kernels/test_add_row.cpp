// Adding half-precision embedding rows: every kernel of the list is bit-exact with the reference.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#include "testable_kernels.h"

using namespace encrt::kernels;
using encrt::kernels::test::testable_kernels;

TEST_CASE("add_row_f16 matches the reference bit for bit", "[add_row]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const auto kernels = testable_kernels(kAddRowF16Kernels);
  for (int n : {1, 7, 8, 9, 31, 384, 1001}) {
    std::vector<uint16_t> src(static_cast<size_t>(n));
    std::vector<float> base(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      src[static_cast<size_t>(i)] = encrt::float_to_half(normal(rng));
      base[static_cast<size_t>(i)] = normal(rng);
    }
    std::vector<float> want = base;
    ref::add_row_f16(n, src.data(), 19.595918f, want.data());
    // The reference itself: exact widening, then a multiply and an add.
    CHECK(want[0] == base[0] + encrt::half_to_float(src[0]) * 19.595918f);
    for (const AddRowF16Kernel* k : kernels) {
      INFO("n " << n << ", " << k->name);
      std::vector<float> got = base;
      k->fn(n, src.data(), 19.595918f, got.data());
      CHECK(got == want);
    }
  }
}
