// Reference kernels: plain portable C++, written for clarity. They define what every op means
// and are the oracle that SIMD variants are tested against.
#pragma once

#include "kernels/kernel_types.h"

namespace encrt::kernels::ref {

float gelu(float x);  // exact: 0.5 x (1 + erf(x / sqrt 2))
float apply_activation(float x, Activation act);
void gelu_rows(int n, const float* x, float* y);  // gelu() of each element (GeluFn)

void gemm_f32(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
              const GemmEpilogue& ep);
void gemm_f16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
              const GemmEpilogue& ep);
// a·b + c on IEEE halves with one rounding to nearest even, as one lane of vfmadd231ph.
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c);
// fp16 arithmetic in blocks, exactly as kernel_types.h (kF16ArithBlockK) defines it.
void gemm_f16_arith(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                    const GemmEpilogue& ep);
void gemm_u8s8(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);
void quantize_rows_u8(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                      float* scale, int32_t* zero_point);
void layer_norm(int M, int N, const float* X, int ldx, const float* gamma, const float* beta,
                float eps, float* Y, int ldy);

void add_row_f16(int n, const uint16_t* src, float scale, float* dst);

void attention_f32(const AttentionArgs& args, int b, int h, void* scratch);
size_t attention_f32_scratch(int seq, int head_dim);
void attention_i8(const AttentionArgs& args, int b, int h, void* scratch);
size_t attention_i8_scratch(int seq, int head_dim);
// attention_i8's quantization of one Q, K or V row of a head (its header's formula): returns the
// scale s = max|x| / 127 (1 for an all-zero row) and writes q = clamp(rint(x / s), -127, 127),
// NaN to 0. Other int8 attention kernels (the GPU's) must produce these bytes.
float quantize_symmetric_i8(const float* x, int n, int8_t* q);

// Helpers the converter and tests share with the kernels.
void pack_weights_f32(int N, int K, const float* W_rowmajor, float* packed);
void pack_weights_f16(int N, int K, const float* W_rowmajor, uint16_t* packed);
// Symmetric per-output-channel int8: scale[n] = max_k |W[n,k]| / max_level (1 for an all-zero
// row), q = clamp(rint(w * (1/scale)), -max_level, max_level) with 1/scale in fp32; NaN quantizes
// to 0. max_level 127 (8-bit weights), or 63 for 7-bit weights (kNarrowInt8Weight, kernel_types.h),
// which AVX2 CPUs without VNNI multiply faster (x86::qu8s7_gemm_6x16__avx2).
void quantize_pack_weights_i8(int N, int K, const float* W_rowmajor, int8_t* packed, float* scale,
                              int32_t* column_sum, int max_level = 127);

}  // namespace encrt::kernels::ref
