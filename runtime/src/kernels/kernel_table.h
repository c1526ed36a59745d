// The kernel table: one function pointer per op, filled once for the CPU we run on (or for a
// named level forced by the caller / ENCRT_ISA) from the kernel lists (kernel_lists.h). The hot
// path only follows these pointers.
#pragma once

#include "kernels/isa.h"
#include "kernels/kernel_types.h"

namespace encrt::kernels {

struct KernelTable {
  IsaFeatures features = 0;  // what the kernels were chosen for (make_kernel_table)
  // Names of the kernels chosen, for profiles and logs: their symbols, as in the kernel lists
  // ("x86::qu8s8_gemm_8x48__avx512vnni": dtype_op_tile__isa, XNNPACK style).
  const char* gemm_f32_name = "";
  const char* gemm_f16_name = "";
  const char* gemm_u8s8_name = "";
  const char* quantize_rows_u8_name = "";
  const char* layer_norm_name = "";
  const char* add_row_f16_name = "";
  const char* gelu_name = "";
  const char* attention_f32_name = "";
  const char* attention_i8_name = "";
  // Whether gemm_f16 computes in fp16 arithmetic (ref::gemm_f16_arith) rather than widening the
  // weights to fp32 (ref::gemm_f16).
  bool gemm_f16_arith = false;
  // The largest |weight| gemm_u8s8 is exact for (kAnyWeights = 128, kSymmetricWeights = 127 or
  // kNarrowWeights = 63, kernel_lists.h); below 128, gemm_u8s8_any_weights is the kernel for
  // models whose weights reach further (else the same kernel).
  int gemm_u8s8_weight_bound = 128;
  const char* gemm_u8s8_any_weights_name = "";

  GemmF32Fn gemm_f32 = nullptr;
  GemmF16Fn gemm_f16 = nullptr;
  GemmU8S8Fn gemm_u8s8 = nullptr;
  GemmU8S8WorkspaceFn gemm_u8s8_workspace = nullptr;  // null: it needs none
  // How the CPU backend cuts gemm_u8s8's linears across threads (lists/gemm_u8s8.h): by rows where
  // each thread gets at least gemm_u8s8_min_rows_per_thread rows (0: its default), no task with
  // fewer than gemm_u8s8_min_task_rows while every thread gets one (0: any).
  int gemm_u8s8_min_task_rows = 0;
  int gemm_u8s8_min_rows_per_thread = 0;
  // For int8 weights that all lie in [-63, 63] (7-bit, kNarrowInt8Weight): the kernel that needs
  // them, where the table's instruction sets have one other than gemm_u8s8 (AVX2 without VNNI);
  // else null. The CPU backend runs it on the linears whose weights allow it.
  GemmU8S8Fn gemm_u8s7 = nullptr;
  const char* gemm_u8s7_name = "";
  GemmU8S8Fn gemm_u8s8_any_weights = nullptr;
  GemmU8S8WorkspaceFn gemm_u8s8_any_weights_workspace = nullptr;
  int gemm_u8s8_any_weights_min_task_rows = 0;
  int gemm_u8s8_any_weights_min_rows_per_thread = 0;
  QuantizeRowsU8Fn quantize_rows_u8 = nullptr;
  LayerNormFn layer_norm = nullptr;
  AddRowF16Fn add_row_f16 = nullptr;
  GeluFn gelu = nullptr;
  AttentionFn attention_f32 = nullptr;
  AttentionScratchFn attention_f32_scratch = nullptr;
  AttentionFn attention_i8 = nullptr;
  AttentionScratchFn attention_i8_scratch = nullptr;
};

// For each op family, the most preferred kernel of its list (kernel_lists.h) whose required
// features are a subset of `features`: every entry is filled (at worst with the reference). The
// caller checks that the CPU supports `features` (isa_supported) before running the kernels.
KernelTable make_kernel_table(IsaFeatures features);

// The table of a preset (an element of kIsaLevels, as find_isa_level returns), made once and
// valid for the program's lifetime; nullptr if `level` is not a preset. The caller checks
// isa_supported(level.features) before running its kernels.
const KernelTable* preset_kernel_table(const IsaLevel& level);

// The table for this CPU, made once: make_kernel_table(cpu_isa_features()), or the table of the
// preset named by ENCRT_ISA (scalar|avx2|avx2vnni|avx512|avx512vnni|avx512fp16|amx|neon|neondot|
// neonfp16|neoni8mm) when it is set to one the CPU supports.
const KernelTable& default_kernel_table();

}  // namespace encrt::kernels
