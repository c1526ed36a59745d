// x86 SIMD attention kernels (AttentionFn / AttentionScratchFn, kernel_types.h) and the vector
// exp behind their softmax. ISA-neutral header: declarations only, as x86_kernels.h.
//
// Every kernel computes, for one (sequence b, head h), what its reference computes
// (kernels/ref/attention_ref.cpp, attention_i8_ref.cpp); tests/kernels/test_x86_attention.cpp
// holds them to it. The scratch functions return exactly the bytes the kernel uses (64-byte
// aligned by the caller); the kernels allocate nothing.
#pragma once

#include <cstddef>

#include "kernels/kernel_types.h"

namespace encrt::kernels::x86 {

// ---- fp32 attention: query rows in register tiles against blocks of up to 64 real keys, with
// an online softmax (running max and sum, the output rescaled when the max grows), so no [seq,
// seq] score matrix exists: scratch is O(64 · head_dim + seq). Padded keys are dropped up front
// (their indices never enter the loops). When args.probs is set, a two-pass variant runs
// instead: row max and sum first, then normalized probabilities and P·V exactly as the reference.
// AVX-512: 8 query rows × 32 keys per score tile, 8 rows × 32 dims per P·V tile.
void f32_attention__avx512(const AttentionArgs& args, int b, int h, void* scratch);
size_t f32_attention_scratch__avx512(int seq, int head_dim);
// AVX2: 6 query rows × 16 keys per score tile, 6 rows × 16 dims per P·V tile.
void f32_attention__avx2(const AttentionArgs& args, int b, int h, void* scratch);
size_t f32_attention_scratch__avx2(int seq, int head_dim);

// ---- int8 attention (AVX512-VNNI): the reference's quantization bit for bit (Q, K, V per-token
// symmetric int8, exact int32 Q·Kᵀ and P·V with vpdpbusd). Queries go 16 at a time, one per
// vector lane (transposed 16-query panels), against K stored as plain quantized rows, so the
// softmax max and sum are vertical operations. The softmax works in base 2 with log2 of each
// key's V scale folded into the exponent: u_j = rint(255 · 2^(y_j - max y)), which needs no
// normalization pass (exp2_x255 and log2 below). Scratch is O(seq · head_dim + 16 · seq).
void qs8_attention__avx512vnni(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__avx512vnni(int seq, int head_dim);
// AMX (Sapphire Rapids and later): the same kernel with Q·Kᵀ (tdpbssd) and P·V (tdpbsud) on tiles,
// for head_dim <= 64 (attention_i8_amx.h); bit for bit the avx512vnni kernel's floats.
void qs8_attention__amx(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__amx(int seq, int head_dim);
// The int8 kernel's base-2 exponential (times 255) and log2 over arrays, so that tests can
// measure them on their own (bounds in exp_coefficients.h). log2 needs positive finite x.
void f32_exp2_x255__avx512vnni(int n, const float* x, float* y);
void f32_log2__avx512vnni(int n, const float* x, float* y);
// AVX2 (also the int8 attention of AVX-512 CPUs without VNNI): the same scheme with the int8
// values widened to int16 and vpmaddwd (exact, no saturation); 6 query rows × 16 keys per score
// tile, 6 rows × 16 dims per P·V tile. Scratch O(2 · seq · head_dim + 6 · seq).
void qs8_attention__avx2(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__avx2(int seq, int head_dim);
// AVX-VNNI (attention_i8_avxvnni.cpp): the same code on bytes with the VEX vpdpbusd, four
// products per lane; the same bits.
void qs8_attention__avxvnni(const AttentionArgs& args, int b, int h, void* scratch);
size_t qs8_attention_scratch__avxvnni(int seq, int head_dim);
// The ymm kernels' base-2 exponential (times 255, exp_avx2.h) over an array, for the tests: the
// AVX-512 polynomial with its scaling by 2^n built in the exponent field.
void f32_exp2_x255__avx2(int n, const float* x, float* y);

// ---- exp(x) of the softmax (exp_avx512.h, exp_avx2.h), over arrays for the tests.
// Range reduction to r = x - n·ln2, |r| <= ln2/2, and a degree-6 minimax polynomial
// (exp_coefficients.h; fit error 1.9e-9), evaluated in fp32. Measured over every float in
// [-104, 89] against exp in double, for both variants: wherever exp(x) is a normal float the
// relative error is at most 8.91e-8 (at x = 5.2012; 0.75 ulp of 1.0), below kExpMaxRelError;
// subnormal results are off by at most 0.93 · 2^-149. -inf and x < -103.98 give +0, x > 88.73
// and +inf give +inf, NaN stays NaN.
constexpr float kExpMaxRelError = 1.0e-7f;
void f32_exp__avx512(int n, const float* x, float* y);
void f32_exp__avx2(int n, const float* x, float* y);
// exp_nonpositive_avx2 (exp_avx2.h, the fp32 avx2 attention's softmax) over an array: exp_avx2's
// bits for every x <= 0, with a shorter scaling where all 8 results of a vector are normal.
void f32_exp_nonpositive__avx2(int n, const float* x, float* y);

}  // namespace encrt::kernels::x86
