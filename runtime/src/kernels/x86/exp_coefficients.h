// Constants of the vector exp shared by the AVX2 and AVX-512 attention kernels (exp_avx2.h,
// exp_avx512.h). Plain constants: safe to include from any ISA file.
//
//   exp(x) = 2^n · exp(r),  n = round(x · log2 e),  r = x - n · ln 2  (|r| <= ln2/2 + 1e-5)
//   exp(r) ≈ c0 + c1 r + ... + c6 r^6
//
// r is formed with two FMAs against ln 2 split in two parts (Cody–Waite): kLn2Hi has its 12 low
// mantissa bits zero, so n · kLn2Hi is exact for |n| < 2^12 and x - n · kLn2Hi loses nothing.
// The polynomial is the degree-6 minimax fit for relative error on [-0.3469, 0.3469] (ln2/2 with
// 0.1% margin for the rounding of n), found by a Remez exchange in double precision; its own
// relative error is 1.9e-9, far below fp32 resolution, so the result's error is the fp32
// rounding of the Horner steps and of the final scaling (measured bound: kExpMaxRelError in
// attention_x86.h).
#pragma once

namespace encrt::kernels::x86::exp_coefficients {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;         // 0x3f317200
constexpr float kLn2Lo = 1.428606820309417232e-6f;   // ln 2 - kLn2Hi
constexpr float kC0 = 1.0000000005585943f;
constexpr float kC1 = 1.0000000365391177f;
constexpr float kC2 = 0.49999992032319523f;
constexpr float kC3 = 0.16666419190341203f;
constexpr float kC4 = 0.041668231801348453f;
constexpr float kC5 = 0.0083748983634598182f;
constexpr float kC6 = 0.0013836742033267629f;
// Inputs are clamped to [kMinArg, kMaxArg] before the reduction: exp(-104) < 2^-150 rounds to
// +0 and exp(89) > FLT_MAX overflows to +inf, so the clamp changes no result, and it keeps n
// within [-150, 129] where the scaling by 2^n is exact.
constexpr float kMinArg = -104.0f;
constexpr float kMaxArg = 89.0f;

}  // namespace encrt::kernels::x86::exp_coefficients

// ---- 2^t and log2 for the int8 attention's softmax (exp_avx512.h: exp2_x255_avx512,
// log2_avx512; exp_avx2.h: exp2_x255_avx2, the same polynomial). There the probabilities are quantized to 8 bits right away, so 2^t needs far less
// than fp32 accuracy: a degree-4 polynomial on the reduced argument.
//   2^t = 2^n · 2^f,  n = round(t),  f = t - n in [-1/2, 1/2] (exact),
//   255 · 2^f ≈ c0 + c1 f + ... + c4 f^4,  minimax for relative error on [-1/2, 1/2] (Lawson
//   iteration in double), with the factor 255 of the uint8 quantization folded in. Fit error
//   2.59e-6; with the fp32 Horner steps kExp2MaxRelError. The scaling by 2^n is exact (vscalefps),
//   down to 0 for very negative t.
//   log2(x) = e + log2(m), x = m · 2^e with m in [0.75, 1.5) (vgetmantps / vgetexpps), and
//   log2(m) = (2/ln 2) · atanh(z) = Σ_k (2/(k ln 2)) z^k over odd k <= 11, z = (m - 1)/(m + 1) in
//   [-1/7, 1/5]: truncation error below 2e-10, fp32 evaluation within kLog2MaxAbsError + u·|log2 x|.
namespace encrt::kernels::x86::exp2_coefficients {

constexpr float kC0 = 255.0f * 0.999999285f;
constexpr float kC1 = 255.0f * 0.693121791f;
constexpr float kC2 = 255.0f * 0.240247443f;
constexpr float kC3 = 255.0f * 0.0559178591f;
constexpr float kC4 = 255.0f * 0.0095700901f;
// |exp2_x255_avx512(t) / (255 · 2^t) - 1| <= kExp2MaxRelError for t in [-126, 0] (where the
// result is a normal float; exp2_x255_avx2 too: the same operations, and its scaling is exact
// there), measured over every float of [-126, 0] and checked by
// tests/kernels/test_x86_attention.cpp.
constexpr float kExp2MaxRelError = 3.0e-6f;

constexpr float kLog2Odd[6] = {2.88539004f, 0.961796701f, 0.577078044f, 0.412198573f, 0.3205989f, 0.26230818f};
// |log2_avx512(x) - log2(x)| <= kLog2MaxAbsError + 2^-24 · |log2 x| for every positive finite x.
constexpr float kLog2MaxAbsError = 1.5e-7f;

}  // namespace encrt::kernels::x86::exp2_coefficients
