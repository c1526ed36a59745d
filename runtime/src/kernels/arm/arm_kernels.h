// 64-bit ARM SIMD kernels. Each *_neon.cpp file uses ARMv8.0 Advanced SIMD only (every aarch64
// core has it); *_neondot.cpp files are built with -march=armv8.2-a+dotprod and run only where
// the CPU reports the dot product extension (isa.h: kIsaNeonDot), and so on for *_neonfp16.cpp
// and *_neoni8mm.cpp (runtime/CMakeLists.txt). This header is ISA-neutral (the kernel lists,
// kernel_lists.h, name these functions from code built without ISA flags). Names follow the x86 kernels: <dtype>_<op>_<MR>x<NR>__<isa>. Every kernel computes
// what its reference in kernels/ref/ computes; tests/kernels/test_simd_gemm.cpp holds them to it
// (under qemu-user on x86 hosts: scripts/test_aarch64.sh).
#pragma once

#include <cstdint>

#include "kernels/kernel_types.h"

namespace encrt::kernels::arm {

// fp32 GEMM (GemmF32Fn) and fp16-weight GEMM (GemmF16Fn, weights widened by fcvtl): 6 rows ×
// 16 columns (one PanelN16 panel) = 24 q-register accumulators, FMLA by element.
void f32_gemm_6x16__neon(int M, int N, int K, const float* A, int lda, const float* W, float* C, int ldc,
                         const GemmEpilogue& ep);
void f16w_gemm_6x16__neon(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                          const GemmEpilogue& ep);

// fp16-arithmetic GEMM (GemmF16Fn, needs kIsaNeonFp16): the semantics of ref::gemm_f16_arith
// (kernel_types.h, kF16ArithBlockK), bit for bit, 6 rows × 16 columns of fmla .8h.
void f16_gemm_6x16__neonfp16(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C, int ldc,
                             const GemmEpilogue& ep);

// Per-row uint8 quantization (QuantizeRowsU8Fn), bit-exact with the reference.
void qu8_quantize_rows__neon(int M, int K, const float* X, int ldx, const float* multipliers, uint8_t* Q, int ldq,
                             float* scale, int32_t* zero_point);
// LayerNorm (LayerNormFn), fp32 with the corrected two-pass variance of the x86 kernels.
void f32_layer_norm__neon(int M, int N, const float* X, int ldx, const float* gamma, const float* beta, float eps,
                          float* Y, int ldy);

// fp32 attention (AttentionFn) for one (sequence, head): the reference's algorithm vectorized,
// with exp_neon (exp_neon.h). f32_exp__neon is that exp over arrays, for the tests.
void f32_attention__neon(const AttentionArgs& args, int b, int h, void* scratch);
size_t f32_attention_scratch__neon(int seq, int head_dim);
void f32_exp__neon(int n, const float* x, float* y);
// exp_neon's relative error bound wherever exp(x) is a normal float (the evaluation of the x86
// exp, whose measured worst case is 8.91e-8).
constexpr float kExpNeonMaxRelError = 1.0e-7f;

// GELU over an array (GeluFn): the rational erf of the NEON epilogues (neon_common.h).
void f32_gelu__neon(int n, const float* x, float* y);

// Embedding rows stored as IEEE half (AddRowF16Fn), bit for bit the reference.
void f16_add_row__neon(int n, const uint16_t* src, float scale, float* dst);

// int8 attention (AttentionFn): ref::attention_i8's quantized values and exact integer products,
// widening multiplies (smull / smlal2 into int16, sadalp: ARMv8.0) or sdot (neondot); without pair
// masks the x86 kernels' base-2 softmax in vectors (within their near-tie bound of the reference),
// with them the reference's own steps bit for bit (attention_i8_neon_common.h).
void qs8_attention__neon(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__neon(int seq, int head_dim);
void qs8_attention__neondot(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__neondot(int seq, int head_dim);
// The same with smmla for the dense path's Q·K, two query rows at a time; the same outputs, bit for bit.
void qs8_attention__neoni8mm(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__neoni8mm(int seq, int head_dim);
// 255 · 2^t of that softmax (exp2_x255_neon, exp_neon.h) over arrays, for the tests: relative
// error at most x86::exp2_coefficients::kExp2MaxRelError where the result is a normal float.
void f32_exp2_x255__neon(int n, const float* t, float* y);

// The smull and sdot int8 GEMMs flip their uint8 activations to signed bytes; with
// QuantizedRows::workspace they flip blocks of kEncodedBlockRows rows once into it
// (u8s8_gemm_encoded_rows, gemm_u8s8_neon_common.h) instead of every row once per 16-column
// panel. A row there takes encoded_row_bytes(K) bytes; the workspace, one block
// (encoded_rows.cpp, built without ISA flags): 64 rows, 96 KiB at K = 1536.
constexpr int kEncodedBlockRows = 64;
inline size_t encoded_row_bytes(int K) { return K > 0 ? (static_cast<size_t>(K) + 15) / 16 * 16 : 0; }
size_t qu8s8_encoded_rows_workspace(int K);

// int8 GEMM (GemmU8S8Fn) with ARMv8.0 instructions only (no dot product): 2 rows × 16 columns of
// smull / smlsl into int16 and sadalp into int32. The activations are flipped to q - 128 in even
// k-groups and 127 - q in odd ones (one eor each), which keeps two products in an int16 lane for
// any int8 weights; the odd groups' weight sums (once per panel) and 128·w_sum[n] correct it:
//   Σ_k q·w - zp·w_sum = Σ_pairs ((q - 128)·w_g - (127 - q)·w_g+1) - Σ_odd w + (128 - zp)·w_sum.
void qu8s8_gemm_2x16__neon(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);

// int8 GEMM (GemmU8S8Fn) with sdot: 4 rows × 16 columns. sdot multiplies signed by signed, so
// the uint8 activations are flipped to q - 128 (one eor) and 128·w_sum[n] is added back:
//   Σ_k q·w - zp·w_sum = Σ_k (q - 128)·w + (128 - zp)·w_sum   (exact in int32).
void qu8s8_gemm_4x16__neondot(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                              const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);

// int8 GEMM with usmmla (u8 × s8 2×8 · 8×2 blocks): 4 rows × 16 columns, same layout and
// semantics as the sdot kernel. With QuantizedRows::workspace (qu8s8_i8mm_workspace(K) bytes) and
// at least 16 rows it zips each weight panel into usmmla's operand layout once, for all its row
// tiles; without one, each tile zips the weights it reads.
void qu8s8_gemm_4x16__neoni8mm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                               const float* w_scale, float* C, int ldc, const GemmEpilogue& ep);
// The workspace of qu8s8_gemm_4x16__neoni8mm at depth K: one panel's whole 16-k steps, 16 bytes
// per k of its whole steps (i8mm_workspace.cpp, built without ISA flags).
size_t qu8s8_i8mm_workspace(int K);

}  // namespace encrt::kernels::arm
