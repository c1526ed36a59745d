// Kernel tables made from the kernel lists (make_kernel_table) hold exactly the kernels of the
// per-level tables of x86_dispatch.cpp / arm_dispatch.cpp, for every level.
#include <catch2/catch.hpp>

#include "kernels/kernel_table.h"
#include "kernels/ref/ref_kernels.h"

using namespace encrt::kernels;

TEST_CASE("make_kernel_table chooses what the level tables hold", "[dispatch]") {
  const struct {
    IsaLevel level;
    IsaFeatures features;
  } levels[] = {
      {IsaLevel::kScalar, 0},
      {IsaLevel::kAvx2, kIsaAvx2},
      {IsaLevel::kAvx2Vnni, kIsaAvx2 | kIsaAvxVnni},
      {IsaLevel::kAvx512, kIsaAvx2 | kIsaAvx512},
      {IsaLevel::kAvx512Vnni, kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni},
      {IsaLevel::kAvx512Fp16, kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16},
      {IsaLevel::kNeon, kIsaNeon},
      {IsaLevel::kNeonDot, kIsaNeon | kIsaNeonDot},
      {IsaLevel::kNeonFp16, kIsaNeon | kIsaNeonDot | kIsaNeonFp16},
      {IsaLevel::kNeonI8mm, kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm},
  };
  for (const auto& l : levels) {
    INFO(isa_level_name(l.level));
    const KernelTable& want = kernel_table(l.level);
    const KernelTable got = make_kernel_table(l.features);
    CHECK(got.gemm_f32 == want.gemm_f32);
    CHECK(got.gemm_f16 == want.gemm_f16);
    // fp16_arithmetic() speaks of the level's kernels on its own architecture; elsewhere the
    // level's table holds the reference.
    CHECK(got.gemm_f16_arith == (fp16_arithmetic(l.level) && want.gemm_f16 != ref::gemm_f16));
    CHECK(got.gemm_u8s8 == want.gemm_u8s8);
    CHECK(got.quantize_rows_u8 == want.quantize_rows_u8);
    CHECK(got.layer_norm == want.layer_norm);
    CHECK(got.add_row_f16 == want.add_row_f16);
    CHECK(got.attention_f32 == want.attention_f32);
    CHECK(got.attention_f32_scratch == want.attention_f32_scratch);
    CHECK(got.attention_i8 == want.attention_i8);
    CHECK(got.attention_i8_scratch == want.attention_i8_scratch);
  }
}
