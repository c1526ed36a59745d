// x86 SIMD kernels. Each *_avx2.cpp / *_avx512.cpp / *_avx512vnni.cpp / *_amx.cpp file is compiled with its
// own ISA flags (runtime/CMakeLists.txt); this header is ISA-neutral (the kernel lists,
// kernel_lists.h, name these functions from code built without ISA flags), so nothing declared
// here may be inline code that uses vector types.
//
// Names follow XNNPACK: <dtype>_<op>_<MR>x<NR>__<isa>, MR rows × NR columns per register tile.
// Every kernel computes what its reference in kernels/ref/ computes (see kernel_types.h); the
// tests in tests/kernels/test_simd_*.cpp and test_x86_*.cpp hold each one to its reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_types.h"

namespace encrt::kernels::x86 {

void f16_add_row__avx2(int n, const uint16_t* src, float scale, float* dst);

// ---- int8 GEMM (GemmU8S8Fn): integer part exact, float part in the reference's order.
// AMX-INT8: tdpbusd on tiles, 2 × 2 tiles of 16 × 16 int32 = 32 rows × 32 columns; the float
// epilogue is the avx512vnni kernel's (bit for bit the same outputs).
void qu8s8_gemm_32x32__amx(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                           const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                           const GemmEpilogue& ep);
// AVX512-VNNI: vpdpbusd, 8 rows × 48 columns (24 zmm accumulators).
void qu8s8_gemm_8x48__avx512vnni(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                                 const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                                 const GemmEpilogue& ep);
// AVX-VNNI (ymm, VEX): vpdpbusd, 6 rows × 16 columns (12 ymm accumulators).
void qu8s8_gemm_6x16__avxvnni(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                              const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                              const GemmEpilogue& ep);
// AVX-512 without VNNI: u8 and s8 widened to int16, vpmaddwd (no int16 saturation); the rows
// widened once into QuantizedRows::workspace (qu8s8_encoded_rows_workspace(K) bytes, below).
void qu8s8_gemm_6x32__avx512(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                             const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                             const GemmEpilogue& ep);
// AVX2 without VNNI, two exact routes (gemm_u8s8_rows_avx2.h); both re-encode the activation
// rows into QuantizedRows::workspace:
//   widened: rows widened to int16 once, weights widened to int16 once per half panel and block of
//   rows, vpmaddwd; 6 rows × 8 columns; qu8s8_widened_workspace(K) bytes.
void qu8s8_gemm_6x8__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                          const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                          const GemmEpilogue& ep);
//   signed: |a'| and a' = q - 128 per row, vpsignb + vpmaddubsw + vpmaddwd; 4 rows × 16 columns;
//   qu8s8_encoded_rows_workspace(K) bytes.
//   Needs every weight in [-127, 127] (the converter's range; kSymmetricWeights in the list).
void qu8s8_gemm_4x16__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                           const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                           const GemmEpilogue& ep);
// AVX2 without VNNI, 7-bit weights (every |w| <= kNarrowInt8Weight, kernel_types.h): vpmaddubsw
// cannot saturate, so it runs on the rows as they are, vpmaddubsw + vpmaddwd + vpaddd in the
// AVX-VNNI kernel's 6 × 16 tile (gemm_u8s8_vnni_ymm.h). kNarrowWeights in the list.
void qu8s7_gemm_6x16__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                           const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                           const GemmEpilogue& ep);
// Their rows are encoded kEncodedGroupBytes per k-group of 4. The signed kernel's workspace
// (and the AVX-512 one's below): the rows of one tile (at most kEncodedRows); the widened
// kernel's: the rows of a block of up to kWidenedBlockRows rows and one half panel of weights
// widened to int16 (64 bytes per k-group), used from kWidenedCopyMinRows rows on (below that it
// widens the weights in its loop and needs only a tile's rows).
constexpr int kEncodedRows = 6;
constexpr int kEncodedGroupBytes = 8;
constexpr int kWidenedBlockRows = 128;
constexpr int kWidenedCopyMinRows = 48;
// The workspace bytes they need at depth K (encoded_rows.cpp, built without ISA flags).
size_t qu8s8_encoded_rows_workspace(int K);
size_t qu8s8_widened_workspace(int K);

// ---- fp32 GEMM (GemmF32Fn) and fp16-weight GEMM (GemmF16Fn, weights widened by vcvtph2ps).
void f32_gemm_6x64__avx512(int M, int N, int K, const float* A, int lda, const float* W, float* C,
                           int ldc, const GemmEpilogue& ep);
void f16w_gemm_6x64__avx512(int M, int N, int K, const float* A, int lda, const uint16_t* W,
                            float* C, int ldc, const GemmEpilogue& ep);
// AVX512-FP16: fp16 arithmetic in short blocks summed in fp32, exactly as ref::gemm_f16_arith
// (kernel_types.h, kF16ArithBlockK); 8 rows × 48 columns of vfmadd231ph.
void f16_gemm_8x48__avx512fp16(int M, int N, int K, const float* A, int lda, const uint16_t* W,
                               float* C, int ldc, const GemmEpilogue& ep);
void f32_gemm_6x16__avx2(int M, int N, int K, const float* A, int lda, const float* W, float* C,
                         int ldc, const GemmEpilogue& ep);
void f16w_gemm_6x16__avx2(int M, int N, int K, const float* A, int lda, const uint16_t* W,
                          float* C, int ldc, const GemmEpilogue& ep);

// ---- Per-row uint8 quantization (QuantizeRowsU8Fn), bit-exact with the reference.
void qu8_quantize_rows__avx512(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                               float* scale, int32_t* zero_point);
void qu8_quantize_rows__avx2(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                             float* scale, int32_t* zero_point);

// ---- LayerNorm (LayerNormFn), fp32 with a corrected two-pass variance.
void f32_layer_norm__avx512(int M, int N, const float* X, int ldx, const float* gamma,
                            const float* beta, float eps, float* Y, int ldy);
void f32_layer_norm__avx2(int M, int N, const float* X, int ldx, const float* gamma,
                          const float* beta, float eps, float* Y, int ldy);

// ---- GELU in the epilogues. AVX-512 (every fp32/fp16/int8 GEMM at that level) uses a
// piecewise-quartic form, GELU(x) = max(x, 0) - g(|x|) with g(a) = a·Φ(-a) from 16 table pieces
// (x86_erf_coefficients.h, gelu_table::kMaxAbsError): error <= 3.5e-7 + 2^-24·|GELU(x)|, no
// division. AVX2 uses the rational erf described next.
// The erf approximation behind the AVX2 GELU epilogues (x86_avx2_common.h),
// exposed over arrays so that it can be tested on its own. erf(z) ≈ z·P(z²)/Q(z²) with z clamped
// to ±3.92, P and Q of degree 5, fitted for minimax absolute error on [0, 3.92] (fit error
// 1.6e-8; 1 - erf(3.92) is 2.9e-8); coefficients in x86_erf_coefficients.h. Evaluated in fp32,
// the maximum absolute error against the exact erf is below kErfMaxAbsError: measured
// exhaustively over every float in [-10, 10] it is 3.73e-7, at |z| = 3.404, dominated by the fp32
// rounding of the Horner steps; beyond, the result is exactly ±1.
// The GELU epilogues evaluate the same rational function with x/√2 and the 1/2 folded into the
// coefficients: GELU(x) = x·clamp(0.5 + x·P̂(x²)/Q̂(x²), 0, 1). Its absolute error is at most
// 0.5·|x|·kErfMaxAbsError + 4u·(|x| + |GELU(x)|), u = 2^-24 (checked exhaustively over every
// float in [-12, 12]); it is exactly x for x >= 5.55 and -0 for x <= -5.55.
// Cost on Zen 4: 13 FMA-class zmm operations and a division per 16 outputs. FMAs and vpdpbusd
// share the same two pipes there, so a fused GELU costs about 15 % of a K = 384 int8 GEMM.
constexpr float kErfMaxAbsError = 4.0e-7f;
void f32_erf__avx512(int n, const float* x, float* y);
void f32_gelu__avx512(int n, const float* x, float* y);
void f32_erf__avx2(int n, const float* x, float* y);
void f32_gelu__avx2(int n, const float* x, float* y);

}  // namespace encrt::kernels::x86
