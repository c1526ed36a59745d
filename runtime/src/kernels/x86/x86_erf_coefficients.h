// Coefficients of the erf approximation shared by the AVX2 and AVX-512 GELU code:
//   erf(z) ≈ z · P(z²) / Q(z²),  |z| clamped to kErfClamp,
// fitted (Lawson-weighted linearized least squares, i.e. minimax) for absolute error on
// [0, kErfClamp]; the fit's own error is 1.6e-8. The error bound of the fp32 evaluation is
// kErfMaxAbsError in x86_kernels.h. Plain constants: safe to include from any ISA file.
#pragma once

namespace encrt::kernels::x86::erf_coefficients {

// Beyond 3.92, 1 - erf(z) < 2.9e-8, below half an ulp of 1.0f: clamping there loses nothing.
constexpr float kErfClamp = 3.92f;
constexpr float kP0 = 1.1283790227416083f;  // ≈ 2/√π, the slope at 0
constexpr float kP1 = 0.19275659648600681f;
constexpr float kP2 = 0.053059363375009413f;
constexpr float kP3 = 0.003867965535430472f;
constexpr float kP4 = 0.00028746430499690518f;
constexpr float kP5 = 2.0347054495866538e-6f;
// Q0 = 1.
constexpr float kQ1 = 0.50415775621192708f;
constexpr float kQ2 = 0.11508141343446713f;
constexpr float kQ3 = 0.015171585073334169f;
constexpr float kQ4 = 0.0011880139253716144f;
constexpr float kQ5 = 3.8069537065850894e-5f;

// GELU(x) = 0.5·x·(1 + erf(x/√2)) rewritten with the substitution z = x/√2 folded into the
// coefficients, which saves three operations per vector in the GEMM epilogues:
//   GELU(x) = x · (0.5 + xc · P̂(xc²) / Q̂(xc²)),  xc = clamp(x, ±kGeluClamp),
//   P̂_i = P_i / (2·√2·2^i),  Q̂_i = Q_i / 2^i   (so that xc·P̂/Q̂ = erf(xc/√2) / 2).
// The same rational function up to the rounding of the coefficients to float; its error bound
// is checked on its own (tests/kernels/test_x86_gelu.cpp).
constexpr double kSqrt2 = 1.4142135623730951;
constexpr float kGeluClamp = static_cast<float>(kErfClamp * kSqrt2);
constexpr float kGP0 = static_cast<float>(kP0 / (2 * kSqrt2));
constexpr float kGP1 = static_cast<float>(kP1 / (2 * kSqrt2 * 2));
constexpr float kGP2 = static_cast<float>(kP2 / (2 * kSqrt2 * 4));
constexpr float kGP3 = static_cast<float>(kP3 / (2 * kSqrt2 * 8));
constexpr float kGP4 = static_cast<float>(kP4 / (2 * kSqrt2 * 16));
constexpr float kGP5 = static_cast<float>(kP5 / (2 * kSqrt2 * 32));
constexpr float kGQ1 = static_cast<float>(kQ1 / 2.0);
constexpr float kGQ2 = static_cast<float>(kQ2 / 4.0);
constexpr float kGQ3 = static_cast<float>(kQ3 / 8.0);
constexpr float kGQ4 = static_cast<float>(kQ4 / 16.0);
constexpr float kGQ5 = static_cast<float>(kQ5 / 32.0);

}  // namespace encrt::kernels::x86::erf_coefficients
