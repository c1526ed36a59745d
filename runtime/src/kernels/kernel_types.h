// Signatures shared by every implementation of a kernel (reference, x86, ARM). A kernel computes
// exactly what its reference in kernels/ref/ computes; SIMD variants are tested against it.
//
// Packed weight layouts (written by the converter, read in place from the model file):
//   F32 / F16, "PanelN16":  W [N, K] stored as [ceil(N/16)][K][16];
//                           element (n, k) at ((n/16)*K + k)*16 + n%16.
//   I8, "PanelN16K4":       W [N, K] stored as [ceil(N/16)][ceil(K/4)][16][4];
//                           element (n, k) at (((n/16)*ceil(K/4) + k/4)*16 + n%16)*4 + k%4.
// Padding columns (n >= N) and padding depth (k >= K) hold zeros.
#pragma once

#include <cstddef>
#include <cstdint>

namespace encrt::kernels {

constexpr int kPanelN = 16;  // output columns per weight panel
constexpr int kPanelK = 4;   // int8 depth per group (one VNNI / sdot lane)

// The helpers below have internal linkage: kernel files built with ISA flags include this header,
// and an inline function with external linkage keeps one copy for the whole program, compiled
// with whichever file's flags the linker picks (x86_avx2_common.h says more).
namespace {

inline constexpr int round_up(int x, int m) { return (x + m - 1) / m * m; }

inline size_t panel_f32_index(int n, int k, int K) {
  return (static_cast<size_t>(n / kPanelN) * K + k) * kPanelN + n % kPanelN;
}
inline size_t panel_i8_index(int n, int k, int K) {
  const int K4 = (K + kPanelK - 1) / kPanelK;
  return ((static_cast<size_t>(n / kPanelN) * K4 + k / kPanelK) * kPanelN + n % kPanelN) * kPanelK +
         k % kPanelK;
}
inline size_t panel_f32_size(int N, int K) { return static_cast<size_t>(round_up(N, kPanelN)) * K; }
inline size_t panel_i8_size(int N, int K) {
  return static_cast<size_t>(round_up(N, kPanelN)) * round_up(K, kPanelK);
}

}  // namespace

// Limits the kernels test values against (constants, not std::numeric_limits calls: the ISA
// kernel files avoid inline std:: functions, x86_avx2_common.h explains why).
constexpr float kFloatMax = 3.40282347e+38f;       // the largest finite float
constexpr float kFloatMinNormal = 1.17549435e-38f;  // 2^-126: its reciprocal is finite
constexpr float kQuietNaN = __builtin_nanf("");

enum class Activation : uint8_t { kNone = 0, kRelu = 1, kGelu = 2 };

// What a GEMM does with each accumulated value before storing it:
//   C[m, n] = act(acc[m, n] + bias[n]) + residual[m * ldr + n]
// with PyTorch's non-finite semantics: ReLU(NaN) = NaN; GELU(NaN) = NaN, GELU(+inf) = +inf,
// GELU(-inf) = -inf · Φ(-inf) = NaN. Every kernel keeps NaN and ±Inf where the reference has them
// (the backend conformance suite checks it).
struct GemmEpilogue {
  const float* bias = nullptr;      // [N] or null
  const float* residual = nullptr;  // [M, ldr] or null; may alias C (same element read then written)
  int ldr = 0;
  Activation activation = Activation::kNone;
};

// C = epilogue(A · Wᵀ), A fp32 [M, K] (row stride lda), W packed PanelN16 fp32, C [M, ldc].
using GemmF32Fn = void (*)(int M, int N, int K, const float* A, int lda, const float* W, float* C,
                           int ldc, const GemmEpilogue& ep);

// As GemmF32Fn with W packed PanelN16 in IEEE half; products and sums in fp32.
using GemmF16Fn = void (*)(int M, int N, int K, const float* A, int lda, const uint16_t* W, float* C,
                           int ldc, const GemmEpilogue& ep);

// fp16 arithmetic (the GemmF16Fn of the avx512fp16 level, built on vfmadd231ph): the same inputs
// and epilogue as GemmF16Fn, twice the FMA lanes, and these exact semantics (the reference is
// ref::gemm_f16_arith; products are exact, so only the additions round):
//   a[m, k] = half(A[m, k]), round to nearest even; depth K is padded to even with zeros.
//   Each output has two lanes, one for even k and one for odd k. Depth is cut into blocks of
//   kF16ArithBlockK values; within a block each lane accumulates its products in fp16,
//     h = half(a[m, k] · W(n, k) + h)   (one rounding, k ascending, h = +0 at the block start),
//   and at the block's end adds h to its fp32 sum: s = s + float(h) (s = +0 at the start).
//   The pre-activation value is s_even + s_odd (fp32), then the epilogue as for GemmF16Fn.
// Short fp16 blocks bound the error: |x - exact| <= (kF16ArithBlockK / 2 + 1) · 2^-11 · Σ_k |a·w|
// plus fp32 terms (in practice ~1e-3 relative). An fp16 overflow (|partial| > 65504, or an A
// value outside half's range) would give ±inf or NaN: when a pre-activation value is not
// finite, the kernel recomputes its tile with fp32 arithmetic (GemmF16Fn semantics), so a
// non-finite output means a non-finite input, as on every other path.
constexpr int kF16ArithBlockK = 64;

// Rows of activations quantized asymmetrically to uint8, one (scale, zero point) per row:
// x ≈ scale * (q - zero_point). Rows are padded to a multiple of 4 bytes; the padding bytes are
// readable (their values do not matter: the matching weights are zero).
struct QuantizedRows {
  const uint8_t* data = nullptr;  // [M, ld]
  int ld = 0;                     // >= round_up(K, 4)
  const float* scale = nullptr;   // [M]
  const int32_t* zero_point = nullptr;  // [M], in [0, 255]
  // Scratch of the kernels that re-encode the rows (their list entry's `workspace`, kernel_lists.h:
  // that many bytes, any alignment); unused by the others.
  uint8_t* workspace = nullptr;
};

// Int8 weights: W packed PanelN16K4, w_scale[n] per output channel, w_sum[n] = Σ_k W(n, k).
//   acc[m, n] = (Σ_k q[m, k] * W(n, k) - zero_point[m] * w_sum[n]) * scale[m] * w_scale[n]
// The integer part is exact in int32 (modulo 2^32 past K = 32,896, where 2 · 255 · 128 · K
// exceeds it; every kernel wraps alike); the float part is evaluated in that order.
using GemmU8S8Fn = void (*)(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                            const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                            const GemmEpilogue& ep);
// The largest |weight| of 7-bit int8 weights (the converter's --weight-bits 7): with |w| <= 63 a
// pair of u8·s8 products sums to at most 255·63·2 = 32130, so vpmaddubsw's int16 pair sums never
// saturate and an AVX2 CPU without VNNI multiplies them exactly in three instructions
// (x86::qu8s7_gemm_6x16__avx2) instead of four.
constexpr int kNarrowInt8Weight = 63;
// The bytes of QuantizedRows::workspace a GemmU8S8Fn needs at depth K, whatever M and N.
using GemmU8S8WorkspaceFn = size_t (*)(int K);

// Quantizes rows of X [M, K] (stride ldx) to uint8 (stride ldq), exactly as follows, per row,
// where x[k] is X's value times multipliers[k] (one fp32 multiply) when `multipliers` is not null
// (the per-channel SmoothQuant factors of an int8 linear layer), else X's value:
//   lo = min(0, min_k x), hi = max(0, max_k x)
//   if hi == lo: scale = 1, zero_point = 0, q = 0
//   else: scale = (hi - lo) / 255 (fp32), inv = 1 / scale (fp32),
//         zero_point = clamp(rint(-lo * inv), 0, 255),
//         q[k] = clamp(rint(x[k] * inv) + zero_point, 0, 255)
// rint rounds half to even (the default rounding mode, as cvtps2dq does); a NaN input quantizes to
// 0 (as cvtps2dq's integer indefinite value does after the clamp). Bytes k in
// [K, round_up(K, 4)) are set to zero_point.
// Rows the formula cannot quantize, decided from the per-row scalars alone (so every ISA gives the
// same bits), before anything is converted to an integer:
//   1 / scale not finite (hi == lo, or a range below 255 · 2^-128): as hi == lo, scale = 1,
//     zero_point = 0, q = 0: the values are all within 2^-120 of zero;
//   scale not finite (a ±inf value, or a range wider than the largest float): scale = NaN,
//     zero_point = 0, q = 0, so every output computed from the row is NaN, as fp32 arithmetic
//     would make it non-finite (rather than finite numbers from an infinite input).
// NaN values are skipped by lo and hi, so a NaN does not make a row non-finite.
using QuantizeRowsU8Fn = void (*)(int M, int K, const float* X, int ldx, const float* multipliers,
                                  uint8_t* Q, int ldq, float* scale, int32_t* zero_point);

// y[i] = GELU(x[i]) for i in [0, n), y == x allowed: the GELU of the GEMM epilogues over an
// array, for backends whose own linear layers have no GELU (XNNPACK's).
using GeluFn = void (*)(int n, const float* x, float* y);

// dst[i] += half_to_float(src[i]) * scale for i in [0, n): embedding rows stored as IEEE half.
using AddRowF16Fn = void (*)(int n, const uint16_t* src, float scale, float* dst);

// y = (x - mean) / sqrt(var + eps) * gamma + beta per row, in place allowed (X == Y).
using LayerNormFn = void (*)(int M, int N, const float* X, int ldx, const float* gamma,
                             const float* beta, float eps, float* Y, int ldy);

}  // namespace encrt::kernels

namespace encrt::kernels {

// Multi-head self-attention for one (sequence, head) pair, reading a fused QKV buffer.
//   rows b*seq + s of qkv hold [Q (heads*head_dim) | K (heads*head_dim) | V (heads*head_dim)];
//   head h uses columns h*head_dim .. (h+1)*head_dim of each part.
// out[i, h*head_dim + d] = Σ_j softmax_j(scale * Q_i·K_j, keys with mask 0 excluded) V[j, d]
// Query rows whose sequence has no real token get zeros.
//
// With a pair mask (pair_blocked or pair_bias) or a window, query i attends key j only where
//   mask[j] != 0, pair_blocked[i, j] == 0, pair_bias[i, j] != -inf, and |i - j| <= window
//   (window > 0); its score is scale * Q_i·K_j + pair_bias[i, j].
// Such a key contributes nothing to query i, whatever K_j and V_j hold (as a padded key). A query
// row left with no key, or whose allowed scores are all -inf, gets a zero output and zero
// probabilities (PyTorch gives NaN there; the runtime's documented choice, README "Attention
// masks"); a masked key's probability is 0 · (1 / Σ), NaN where the row's sum is NaN. Without a
// pair mask and window the kernels run exactly as before (bit for bit).
struct AttentionArgs {
  int seq = 0;
  int heads = 0;
  int head_dim = 0;
  const float* qkv = nullptr;
  int ld_qkv = 0;
  const int32_t* mask = nullptr;  // [batch, seq]: 1 real token, 0 padding; null = all real
  float scale = 1.0f;             // usually 1/sqrt(head_dim)
  float* out = nullptr;           // [batch*seq, ld_out]
  int ld_out = 0;
  float* probs = nullptr;         // optional [batch, heads, seq, seq] probabilities
  // Optional masks over (query, key) pairs, rows of `seq` values: sequence b's is at
  // pair_* + b * pair_batch_stride (stride 0: one [seq, seq] mask for every sequence). At most
  // one of the two is set.
  const uint8_t* pair_blocked = nullptr;  // nonzero: query i may not attend key j (PyTorch's bool)
  const float* pair_bias = nullptr;       // added to the scaled scores; -inf: may not attend
  size_t pair_batch_stride = 0;
  int window = 0;                         // > 0: keys j with |i - j| <= window only (0: all)
};

// `scratch` holds at least attention_scratch_bytes(seq, head_dim) bytes, 64-byte aligned, owned
// by the calling thread.
using AttentionFn = void (*)(const AttentionArgs& args, int b, int h, void* scratch);
using AttentionScratchFn = size_t (*)(int seq, int head_dim);

// Int8 attention (reference semantics in kernels/ref/attention_i8_ref.cpp):
// Q, K, V rows of one head quantized symmetric int8 per token (scale = max|x| / 127),
// S = int32 Q·Kᵀ · (scale_q · scale) · scale_k, softmax in fp32, probabilities times V's
// per-token scale quantized per query row to uint8 (scale = row max / 255), P·V in int32.
// Non-finite rows, the same in every int8 attention kernel: a query row whose score against some
// real key is NaN or ±inf (an infinite Q or K value, or a product past float's range), or whose
// head has a real key whose V scale is infinite, gets NaN outputs and NaN probabilities over its
// real keys; NaN values inside Q, K and V quantize to 0 as in the activation quantizer. A row whose
// largest p · s_v is below 255 · 2^-126 gets s_p = 1 (every u is then 0). The kernels whose
// scores are not the reference's bit for bit (x86) can decide differently only for scores within
// their rounding of float's limit. With pair masks or a window, only the scores of the pairs the
// query attends count (a masked pair's score is -inf by definition), while an infinite V scale of
// any real key still makes every row of the head NaN, masked or not. A NaN row's probabilities
// are NaN over every real key (the x86 kernels leave those of keys outside a window-only block's
// key range at 0).

}  // namespace encrt::kernels
