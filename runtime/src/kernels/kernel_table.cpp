// Fills one KernelTable per ISA level. Each level starts from the level below it and replaces
// the entries it has faster variants for.
#include "kernels/kernel_table.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>

#include "kernels/cpu_features.h"
#include "kernels/kernel_lists.h"
#include "kernels/ref/ref_kernels.h"
#if defined(ENCRT_ARCH_X86)
#include "kernels/x86/x86_kernels.h"
#elif defined(ENCRT_ARCH_ARM64)
#include "kernels/arm/arm_kernels.h"
#endif

namespace encrt::kernels {

const char* isa_level_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar: return "scalar";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx2Vnni: return "avx2vnni";
    case IsaLevel::kAvx512: return "avx512";
    case IsaLevel::kAvx512Vnni: return "avx512vnni";
    case IsaLevel::kAvx512Fp16: return "avx512fp16";
    case IsaLevel::kNeon: return "neon";
    case IsaLevel::kNeonDot: return "neondot";
    case IsaLevel::kNeonFp16: return "neonfp16";
    case IsaLevel::kNeonI8mm: return "neoni8mm";
  }
  return "unknown";
}

bool parse_isa_level(const std::string& text, IsaLevel* level) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  for (IsaLevel l : kAllIsaLevels) {
    if (t == isa_level_name(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

namespace {

KernelTable scalar_table() {
  KernelTable t;
  t.level = IsaLevel::kScalar;
  t.gemm_f32 = ref::gemm_f32, t.gemm_f32_name = "f32-gemm-1x1__scalar";
  t.gemm_f16 = ref::gemm_f16, t.gemm_f16_name = "f16w-gemm-1x1__scalar";
  t.gemm_u8s8 = ref::gemm_u8s8, t.gemm_u8s8_name = "qu8s8-gemm-1x1__scalar";
  t.quantize_rows_u8 = ref::quantize_rows_u8;
  t.layer_norm = ref::layer_norm;
  t.add_row_f16 = ref::add_row_f16;
  t.attention_f32 = ref::attention_f32, t.attention_name = "f32-attention__scalar";
  t.attention_f32_scratch = ref::attention_f32_scratch;
  t.attention_i8 = ref::attention_i8, t.attention_i8_name = "qs8-attention__scalar";
  t.attention_i8_scratch = ref::attention_i8_scratch;
  return t;
}

KernelTable build_table(IsaLevel level) {
  KernelTable t = scalar_table();
#if defined(ENCRT_ARCH_X86)
  if (is_x86_level(level)) x86::fill_kernel_table(level, &t);
#elif defined(ENCRT_ARCH_ARM64)
  if (is_arm_level(level)) arm::fill_kernel_table(level, &t);
#endif
  t.level = level;
  return t;
}

}  // namespace

KernelTable make_kernel_table(IsaFeatures features) {
  KernelTable t;
  t.features = features;
  const GemmF32Kernel& gemm_f32 = choose_kernel(kGemmF32Kernels, features);
  t.gemm_f32 = gemm_f32.fn, t.gemm_f32_name = gemm_f32.name;
  const GemmF16Kernel& gemm_f16 = choose_kernel(kGemmF16Kernels, features);
  t.gemm_f16 = gemm_f16.fn, t.gemm_f16_name = gemm_f16.name, t.gemm_f16_arith = gemm_f16.arith;
  const GemmU8S8Kernel& gemm_u8s8 = choose_kernel(kGemmU8S8Kernels, features);
  t.gemm_u8s8 = gemm_u8s8.fn, t.gemm_u8s8_name = gemm_u8s8.name;
  const QuantizeRowsU8Kernel& quantize = choose_kernel(kQuantizeRowsU8Kernels, features);
  t.quantize_rows_u8 = quantize.fn, t.quantize_rows_u8_name = quantize.name;
  const LayerNormKernel& layer_norm = choose_kernel(kLayerNormKernels, features);
  t.layer_norm = layer_norm.fn, t.layer_norm_name = layer_norm.name;
  const AddRowF16Kernel& add_row = choose_kernel(kAddRowF16Kernels, features);
  t.add_row_f16 = add_row.fn, t.add_row_f16_name = add_row.name;
  const AttentionKernel& attention_f32 = choose_kernel(kAttentionF32Kernels, features);
  t.attention_f32 = attention_f32.fn, t.attention_f32_scratch = attention_f32.scratch;
  t.attention_f32_name = attention_f32.name;
  const AttentionKernel& attention_i8 = choose_kernel(kAttentionI8Kernels, features);
  t.attention_i8 = attention_i8.fn, t.attention_i8_scratch = attention_i8.scratch;
  t.attention_i8_name = attention_i8.name;
  return t;
}

IsaLevel detect_isa_level() {
  static const IsaLevel level = detect_cpu_isa_level();
  return level;
}

bool isa_level_supported(IsaLevel level) { return cpu_supports_isa_level(level); }

const KernelTable& kernel_table(IsaLevel level) {
  static const KernelTable tables[] = {build_table(IsaLevel::kScalar),     build_table(IsaLevel::kAvx2),
                                       build_table(IsaLevel::kAvx2Vnni),   build_table(IsaLevel::kAvx512),
                                       build_table(IsaLevel::kAvx512Vnni), build_table(IsaLevel::kAvx512Fp16),
                                       build_table(IsaLevel::kNeon),       build_table(IsaLevel::kNeonDot),
                                       build_table(IsaLevel::kNeonFp16),   build_table(IsaLevel::kNeonI8mm)};
  static_assert(std::size(kAllIsaLevels) == 10, "one table per level");
  return tables[static_cast<int>(level)];
}

const KernelTable& default_kernel_table() {
  static const IsaLevel level = [] {
    IsaLevel best = detect_isa_level();
    if (const char* env = std::getenv("ENCRT_ISA")) {
      IsaLevel forced;
      if (parse_isa_level(env, &forced) && isa_level_supported(forced)) return forced;
    }
    return best;
  }();
  return kernel_table(level);
}

}  // namespace encrt::kernels
