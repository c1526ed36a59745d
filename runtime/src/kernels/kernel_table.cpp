// Kernel tables from the kernel lists: per op family, the last (most preferred) entry whose
// required features the table's features contain.
#include "kernels/kernel_table.h"

#include <cstdlib>
#include <iterator>

#include "kernels/kernel_lists.h"

namespace encrt::kernels {

KernelTable make_kernel_table(IsaFeatures features) {
  KernelTable t;
  t.features = features;
  const GemmF32Kernel& gemm_f32 = choose_kernel(kGemmF32Kernels, features);
  t.gemm_f32 = gemm_f32.fn, t.gemm_f32_name = gemm_f32.name;
  const GemmF16Kernel& gemm_f16 = choose_kernel(kGemmF16Kernels, features);
  t.gemm_f16 = gemm_f16.fn, t.gemm_f16_name = gemm_f16.name, t.gemm_f16_arith = gemm_f16.arith;
  const GemmU8S8Kernel& gemm_u8s8 = choose_kernel(kGemmU8S8Kernels, features);
  t.gemm_u8s8 = gemm_u8s8.fn, t.gemm_u8s8_name = gemm_u8s8.name, t.gemm_u8s8_workspace = gemm_u8s8.workspace;
  t.gemm_u8s8_weight_bound = gemm_u8s8.weight_bound;
  t.gemm_u8s8_min_task_rows = gemm_u8s8.min_task_rows;
  t.gemm_u8s8_min_rows_per_thread = gemm_u8s8.min_rows_per_thread;
  // Without the preferences that chose a kernel for a narrower weight range: the list's kernels
  // that take any weights are those chosen without one (lists/gemm_u8s8.h).
  const GemmU8S8Kernel& any = gemm_u8s8.weight_bound < kAnyWeights
                                  ? choose_kernel(kGemmU8S8Kernels, features & ~kIsaPreferences)
                                  : gemm_u8s8;
  t.gemm_u8s8_any_weights = any.fn, t.gemm_u8s8_any_weights_name = any.name;
  t.gemm_u8s8_any_weights_workspace = any.workspace;
  t.gemm_u8s8_any_weights_min_task_rows = any.min_task_rows;
  t.gemm_u8s8_any_weights_min_rows_per_thread = any.min_rows_per_thread;
  // For 7-bit weights: the list's kernel that needs them, if these features have one.
  const GemmU8S8Kernel& narrow = choose_kernel(kGemmU8S8Kernels, features | kNarrowInt8Weights);
  if (&narrow != &gemm_u8s8) t.gemm_u8s7 = narrow.fn, t.gemm_u8s7_name = narrow.name;
  const QuantizeRowsU8Kernel& quantize = choose_kernel(kQuantizeRowsU8Kernels, features);
  t.quantize_rows_u8 = quantize.fn, t.quantize_rows_u8_name = quantize.name;
  const LayerNormKernel& layer_norm = choose_kernel(kLayerNormKernels, features);
  t.layer_norm = layer_norm.fn, t.layer_norm_name = layer_norm.name;
  const AddRowF16Kernel& add_row = choose_kernel(kAddRowF16Kernels, features);
  t.add_row_f16 = add_row.fn, t.add_row_f16_name = add_row.name;
  const GeluKernel& gelu = choose_kernel(kGeluKernels, features);
  t.gelu = gelu.fn, t.gelu_name = gelu.name;
  const AttentionKernel& attention_f32 = choose_kernel(kAttentionF32Kernels, features);
  t.attention_f32 = attention_f32.fn, t.attention_f32_scratch = attention_f32.scratch;
  t.attention_f32_name = attention_f32.name;
  const AttentionKernel& attention_i8 = choose_kernel(kAttentionI8Kernels, features);
  t.attention_i8 = attention_i8.fn, t.attention_i8_scratch = attention_i8.scratch;
  t.attention_i8_name = attention_i8.name;
  return t;
}

const KernelTable* preset_kernel_table(const IsaLevel& level) {
  constexpr size_t kPresets = std::size(kIsaLevels);
  static const struct Tables {
    KernelTable t[kPresets];
    Tables() {
      for (size_t i = 0; i < kPresets; ++i) t[i] = make_kernel_table(kIsaLevels[i].features);
    }
  } tables;
  for (size_t i = 0; i < kPresets; ++i)
    if (kIsaLevels[i].features == level.features) return &tables.t[i];
  return nullptr;
}

const KernelTable& default_kernel_table() {
  static const KernelTable table = [] {
    if (const char* env = std::getenv("ENCRT_ISA")) {
      const IsaLevel* forced = find_isa_level(env);
      if (forced && isa_supported(forced->features))
        return make_kernel_table(forced->features | (cpu_isa_features() & kIsaPreferences));
    }
    return make_kernel_table(cpu_isa_features());
  }();
  return table;
}

}  // namespace encrt::kernels
