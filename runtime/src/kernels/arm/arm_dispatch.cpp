// Chooses, per ARM level, the kernels that replace the reference ones: kNeon gets the float
// GEMMs, quantization, LayerNorm, fp32 attention and the fp16 embedding gather, kNeonDot also the
// int8 GEMM and int8 attention, kNeonFp16 the fp16-arithmetic GEMM for fp16 models, kNeonI8mm
// the int8 GEMM with usmmla.
#include "kernels/arm/arm_kernels.h"

namespace encrt::kernels::arm {

void fill_kernel_table(IsaLevel level, KernelTable* table) {
  if (level >= IsaLevel::kNeon) {
    table->gemm_f32 = f32_gemm_6x16__neon, table->gemm_f32_name = "f32-gemm-6x16__neon";
    table->gemm_f16 = f16w_gemm_6x16__neon, table->gemm_f16_name = "f16w-gemm-6x16__neon";
    table->quantize_rows_u8 = qu8_quantize_rows__neon;
    table->layer_norm = f32_layer_norm__neon;
    table->add_row_f16 = f16_add_row__neon;
    table->attention_f32 = f32_attention__neon, table->attention_name = "f32-attention__neon";
    table->attention_f32_scratch = f32_attention_scratch__neon;
  }
  if (level >= IsaLevel::kNeonDot) {
    table->gemm_u8s8 = qu8s8_gemm_4x16__neondot, table->gemm_u8s8_name = "qu8s8-gemm-4x16__neondot";
    table->attention_i8 = qs8_attention__neondot, table->attention_i8_name = "qs8-attention__neondot";
    table->attention_i8_scratch = qs8_attention_scratch__neondot;
  }
  if (level >= IsaLevel::kNeonFp16) {
    table->gemm_f16 = f16_gemm_6x16__neonfp16, table->gemm_f16_name = "f16-gemm-6x16__neonfp16";
  }
  if (level >= IsaLevel::kNeonI8mm) {
    table->gemm_u8s8 = qu8s8_gemm_4x16__neoni8mm, table->gemm_u8s8_name = "qu8s8-gemm-4x16__neoni8mm";
  }
}

}  // namespace encrt::kernels::arm
