// Chooses, per ISA level, the x86 kernel variants that replace the reference ones. A level only
// ever gets kernels built from instructions it guarantees (kernel_table.h): kAvx2 = AVX2 + FMA +
// F16C, kAvx2Vnni = + AVX-VNNI, kAvx512 = AVX2 level + AVX-512 F/BW/VL/DQ, kAvx512Vnni = +
// AVX512-VNNI, kAvx512Fp16 = + AVX512-FP16. The attention kernels
// (attention_x86.h) are written and tested with their own files; they are only wired in here.
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {

void fill_kernel_table(IsaLevel level, KernelTable* table) {
  if (level >= IsaLevel::kAvx2) {
    table->gemm_f32 = f32_gemm_6x16__avx2, table->gemm_f32_name = "f32-gemm-6x16__avx2";
    table->gemm_f16 = f16w_gemm_6x16__avx2, table->gemm_f16_name = "f16w-gemm-6x16__avx2";
    table->gemm_u8s8 = qu8s8_gemm_6x8__avx2, table->gemm_u8s8_name = "qu8s8-gemm-6x8__avx2";
    table->quantize_rows_u8 = qu8_quantize_rows__avx2;
    table->layer_norm = f32_layer_norm__avx2;
    table->add_row_f16 = f16_add_row__avx2;
    table->attention_f32 = f32_attention__avx2, table->attention_name = "f32-attention-6x16__avx2";
    table->attention_f32_scratch = f32_attention_scratch__avx2;
    table->attention_i8 = qs8_attention__avx2, table->attention_i8_name = "qs8-attention__avx2";
    table->attention_i8_scratch = qs8_attention_scratch__avx2;
  }
  if (level == IsaLevel::kAvx2Vnni) {  // beside the AVX-512 chain: those levels replace this entry
    table->gemm_u8s8 = qu8s8_gemm_6x16__avxvnni, table->gemm_u8s8_name = "qu8s8-gemm-6x16__avxvnni";
  }
  if (level >= IsaLevel::kAvx512) {
    table->gemm_f32 = f32_gemm_6x64__avx512, table->gemm_f32_name = "f32-gemm-6x64__avx512";
    table->gemm_f16 = f16w_gemm_6x64__avx512, table->gemm_f16_name = "f16w-gemm-6x64__avx512";
    table->gemm_u8s8 = qu8s8_gemm_6x32__avx512, table->gemm_u8s8_name = "qu8s8-gemm-6x32__avx512";
    table->quantize_rows_u8 = qu8_quantize_rows__avx512;
    table->layer_norm = f32_layer_norm__avx512;
    table->attention_f32 = f32_attention__avx512, table->attention_name = "f32-attention-8x32__avx512";
    table->attention_f32_scratch = f32_attention_scratch__avx512;
  }
  if (level >= IsaLevel::kAvx512Vnni) {
    table->gemm_u8s8 = qu8s8_gemm_8x48__avx512vnni, table->gemm_u8s8_name = "qu8s8-gemm-8x48__avx512vnni";
    table->attention_i8 = qs8_attention__avx512vnni, table->attention_i8_name = "qs8-attention__avx512vnni";
    table->attention_i8_scratch = qs8_attention_scratch__avx512vnni;
  }
  if (level >= IsaLevel::kAvx512Fp16) {
    table->gemm_f16 = f16_gemm_8x48__avx512fp16, table->gemm_f16_name = "f16-gemm-8x48__avx512fp16";
  }
}

}  // namespace encrt::kernels::x86
