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
