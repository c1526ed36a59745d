// Coefficients of the GELU epilogues: the rational erf approximation of the AVX2 GELU (and of the
// AVX-512 erf kept for its tests), then the quartic table of the AVX-512 GELU (namespace
// gelu_table below). The rational erf:
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

// GELU of the AVX-512 GEMM epilogues (gelu_avx512, x86_avx512_common.h), without erf:
//   GELU(x) = max(x, 0) - g(|x|),  g(a) = a·Φ(-a) = a·erfc(a/√2)/2,
// g being smooth on [0, ∞), at most 0.17 and below 2.2e-7 beyond a = 5.365. g is tabulated as 16
// quartic pieces: piece i = round(a/h) covers [(i - ½)h, (i + ½)h], h = kStep, for i = 0..14;
// piece 15 is zero (g is dropped beyond 14.5h = 5.365) and a is clamped to 15.4h so that i never
// exceeds 15. Each piece is a minimax fit for absolute error (Lawson-weighted least squares in
// double) written in the variable a itself, so that the evaluation needs no local offset:
// g ≈ (((c4·a + c3)·a + c2)·a + c1)·a + c0, coefficients row k = c_k of pieces 0..15. Piece 0 has
// c0 = 0 and c1 = 1/2 exactly (g(0) = 0, g'(0) = Φ(0)), so GELU(0) = 0 and tiny x give exactly
// x/2. Fit error 3.09e-7 (Lawson iteration over 3001 points per piece, each piece fitted in
// the local variable a/h - i and expanded to powers of a in double, then rounded to float).
namespace encrt::kernels::x86::gelu_table {

constexpr float kStep = 0.37f;
constexpr float kInvStep = 1.0f / kStep;
constexpr float kClamp = 15.4f * kStep;     // a = min(|x|, kClamp): piece 15 at most
constexpr float kRoundBias = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer, in the low bits
// |gelu_avx512(x) - GELU(x)| <= kMaxAbsError + u·|GELU(x)|, u = 2^-24 (the last term is the rounding
// of the final subtraction). Measured over every float in [-12, 12] against 0.5·x·erfc(-x/√2) in
// double: at most 3.36e-7 beyond that rounding (3.93e-7 in all, at x = 4.159); beyond ±12 the
// result is exactly x or +0.
constexpr float kMaxAbsError = 3.5e-7f;
alignas(64) constexpr float kCoef[5][16] = {
    {0, -8.15083913e-05f, -0.00466196472f, -0.0283978749f, -0.0461535305f, 0.0491441675f, 0.320557773f, 0.642841756f, 0.801960647f, 0.717053294f, 0.488616586f, 0.262558818f, 0.113707118f, 0.0402878672f, 0.0118066808f, 0},
    {0.5f, 0.501229823f, 0.532065928f, 0.634323478f, 0.693561852f, 0.470312953f, -0.0617758408f, -0.601315081f, -0.835237443f, -0.729688227f, -0.469871223f, -0.236294493f, -0.0955974236f, -0.0316794887f, -0.00870357733f, 0},
    {-0.398950607f, -0.405923605f, -0.485119224f, -0.651656866f, -0.725687981f, -0.529223323f, -0.137402833f, 0.201717257f, 0.330755174f, 0.281549066f, 0.17067194f, 0.0801255703f, 0.0302358828f, 0.00936212391f, 0.0024098102f, 0},
    {0.000186835779f, 0.0181498975f, 0.110350974f, 0.231876701f, 0.272957027f, 0.195974678f, 0.0675257444f, -0.0273182504f, -0.0589727089f, -0.0487768687f, -0.0277354233f, -0.0121280933f, -0.00426279195f, -0.00123219495f, -0.000296977523f, 0},
    {0.0653870925f, 0.0471577197f, 0.00603137724f, -0.0274901949f, -0.0360316932f, -0.0246983618f, -0.00888121221f, 0.00107737596f, 0.00399096217f, 0.00319867977f, 0.00170043798f, 0.000691151363f, 0.000225982338f, 6.09316412e-05f, 1.37433199e-05f, 0},
};

}  // namespace encrt::kernels::x86::gelu_table
