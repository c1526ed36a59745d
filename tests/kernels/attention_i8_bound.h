// The int8 attention kernels' contract against ref::attention_i8, for the kernels that form the
// softmax in base 2 (the x86 ones of attention_i8_avx2.h and attention_i8_avx512.h, the ARM ones'
// dense path in attention_i8_neon_common.h), and the check of it (compare_i8). Tolerances, u =
// 2^-24, max|V| over the real keys of the (sequence, head):
//   against the reference: every quantized value and integer dot product is the same; the
//     softmax differs. The kernels quantize t_j = 255 w_j / max w (w = e^S · s_v) to u_j =
//     rint(t_j) where the reference takes rint(P'_j / s_p), equal up to rounding; t_j is off by
//     a relative ε from its exact value (below), so u_j can differ by one step only where t_j lies
//     within ε·t_j of a half integer. The test models t_j in fp64 from the fp32 scores (which it
//     reproduces exactly) and calls a key a near tie when |t_j - (⌊t_j⌋ + ½)| <= 1.25·ε·max(t_j, 1).
//     Per output element:
//       |got - ref| <= s_p · Σ_{near ties} |v_j,d| + η · s_p · Σ_j (u_j + 1)|v_j,d|,
//     with η = 2ε + 2.5e-7 + (1.07·S + 8)·u covering s_p (Σ summed in another order: at most
//     (S - 1)u for the reference's sequential sum, S/4 + 4 for the kernels'). Near ties must stay
//     rare (< 1% of keys). As a plain number this is at most (#near ties)·127·s_p + η·|out|, and
//     s_p·127 <= max_j(p_j·max|V_j|)/255. ε, the same for every kernel: all of them (the ymm ones
//     of attention_i8_avx2.h and the zmm/AMX ones of attention_i8_avx512.h) form t_j in base 2,
//     y_j = S_j·log2 e + log2 s_v,j - C and t_j = 255·2^(y_j - max y) (attention_i8_avx512.h):
//     per query row, with Smax = max_j |S_j|, A = max_j |log2 s_v,j|, L = max_j |log2 s_v,j -
//     log2 max s_v|, Y = Smax·log2 e + L (a bound on |y|), each y is off by at most D = 4u·log2
//     e·Smax + u·Y + kLog2MaxAbsError + u·A + u·L (the scores' extra roundings, the log2), the
//     exponent y_j - max y by 2D + 2u·Y, so ε = kExp2MaxRelError + ln 2·(2D + 2u·Y) + 4u.
//   int8 probabilities: relative to the reference's, 2ε + 2.2e-7 + (1.07·S + 8)·u (2.2e-7 for the
//     reference's exp).
//   int8 against fp64 attention on the unquantized inputs: <= 0.02 · max|V|, the level the
//     reference itself is held to (test_ref_attention.cpp).
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attention_problem.h"
#include "kernels/x86/exp_coefficients.h"  // plain constants: the base-2 softmax's error bounds
#include "naive_math.h"

namespace encrt::kernels::test {

constexpr double kU = FLT_EPSILON / 2.0;

// Symmetric per-token int8 as documented in attention_i8_ref.cpp, in fp32.
inline float quantize_token(const float* x, int D, std::vector<int>* q) {
  float amax = 0.0f;
  for (int d = 0; d < D; ++d) amax = std::max(amax, std::fabs(x[d]));
  const float s = amax > 0.0f ? amax / 127.0f : 1.0f;
  const float inv = 1.0f / s;
  q->resize(D);
  for (int d = 0; d < D; ++d) {
    const float v = std::nearbyint(x[d] * inv);
    (*q)[d] = std::isnan(v) ? 0 : static_cast<int>(std::min(127.0f, std::max(-127.0f, v)));
  }
  return s;
}

struct I8Errors {
  double worst_vs_ref = 0.0;    // max |got - ref| / max|V|
  double worst_bound_use = 0.0; // max |got - ref| / bound
  double worst_vs_fp64 = 0.0;   // max |got - fp64| / max|V|
  double worst_ref_vs_fp64 = 0.0;
  long bad = 0, bad_fp64 = 0, bad_prob = 0;
  long near_ties = 0, keys = 0, differing = 0;
};

// The documented scheme in fp64 after the fp32 scores (which both kernels compute identically):
// per query row, the ratios t_j, u_j = rint(t_j), s_p, and the near-tie flags.
inline void compare_i8(const Problem& p, const Result& got, const Result& want, I8Errors* e) {
  const int S = p.seq, D = p.dim;
  const double log2e = 1.0 / std::log(2.0);
  std::vector<std::vector<int>> kq(S), vq(S);
  std::vector<float> sk(S), sv(S), score(S);
  std::vector<int> qq;
  std::vector<double> t(S), w(S);
  for (int b = 0; b < p.batch; ++b) {
    if (!p.any_real(b)) continue;  // zeros: mask_violations
    for (int h = 0; h < p.heads; ++h) {
      const double vmax = p.vmax(b, h);
      for (int j = 0; j < S; ++j) {
        sk[j] = quantize_token(p.k(b, j, h), D, &kq[j]);
        sv[j] = quantize_token(p.v(b, j, h), D, &vq[j]);
      }
      for (int i = 0; i < S; ++i) {
        if (!p.any_allowed(b, i)) continue;  // zeros: mask_violations
        const float sq = quantize_token(p.q(b, i, h), D, &qq);
        float smax = -INFINITY;
        for (int j = 0; j < S; ++j) {
          if (!p.allowed(b, i, j)) continue;
          int32_t dot = 0;
          for (int d = 0; d < D; ++d) dot += qq[d] * kq[j][d];
          score[j] = static_cast<float>(dot) * (sq * p.scale) * sk[j] + p.bias(b, i, j);
          smax = std::max(smax, score[j]);
        }
        double wmax = 0.0, esum = 0.0;
        double score_abs = 0.0, log2_sv_abs = 0.0, log2_sv_max = -INFINITY;
        for (int j = 0; j < S; ++j) {
          if (!p.allowed(b, i, j)) continue;
          const double ej = std::exp(static_cast<double>(score[j] - smax));
          esum += ej;
          w[j] = ej * sv[j];
          wmax = std::max(wmax, w[j]);
          score_abs = std::max(score_abs, std::fabs(static_cast<double>(score[j])));
          log2_sv_abs = std::max(log2_sv_abs, std::fabs(std::log2(static_cast<double>(sv[j]))));
          log2_sv_max = std::max(log2_sv_max, std::log2(static_cast<double>(sv[j])));
        }
        double log2_sv_spread = 0.0;
        for (int j = 0; j < S; ++j)
          if (p.allowed(b, i, j)) log2_sv_spread = std::max(log2_sv_spread, log2_sv_max - std::log2(static_cast<double>(sv[j])));
        // The relative error ε of the kernel's t_j and the resulting η and probability bounds
        // (header).
        const double y_bound = score_abs * log2e + log2_sv_spread;
        const double dy = 4 * kU * log2e * score_abs + kU * y_bound + x86::exp2_coefficients::kLog2MaxAbsError +
                          kU * log2_sv_abs + kU * log2_sv_spread;
        const double eps = x86::exp2_coefficients::kExp2MaxRelError + std::log(2.0) * (2 * dy + 2 * kU * y_bound) + 4 * kU;
        const double eta = 2 * eps + 2.5e-7 + (1.07 * S + 8) * kU;
        const double prob_rel = 2 * eps + 2.2e-7 + (1.07 * S + 8) * kU;
        const double sp = wmax / esum / 255.0;
        std::vector<double> tie_slack(D, 0.0), magnitude(D, 0.0);
        for (int j = 0; j < S; ++j) {
          if (!p.allowed(b, i, j)) continue;
          t[j] = 255.0 * w[j] / wmax;
          const double u = std::nearbyint(t[j]);
          const bool near_tie = std::fabs(t[j] - std::floor(t[j]) - 0.5) <= 1.25 * eps * std::max(t[j], 1.0);
          ++e->keys;
          e->near_ties += near_tie;
          for (int d = 0; d < D; ++d) {
            magnitude[d] += (u + 1.0) * std::abs(vq[j][d]);
            if (near_tie) tie_slack[d] += std::abs(vq[j][d]);
          }
        }
        // fp64 attention on the unquantized inputs.
        std::vector<double> scores(S), exact(D, 0.0);
        std::vector<bool> real(S);
        for (int j = 0; j < S; ++j) {
          real[j] = p.allowed(b, i, j);
          double dot = 0.0;
          for (int d = 0; d < D; ++d) dot += static_cast<double>(p.q(b, i, h)[d]) * p.k(b, j, h)[d];
          scores[j] = dot * p.scale + (real[j] ? p.bias(b, i, j) : 0.0);
        }
        const std::vector<double> probs = encrt::test_naive::softmax_masked(scores, real);
        for (int j = 0; j < S; ++j)
          for (int d = 0; d < D; ++d) exact[d] += probs[j] * p.v(b, j, h)[d];

        for (int d = 0; d < D; ++d) {
          const double g = out_at(p, got, b, h, i, d), r = out_at(p, want, b, h, i, d);
          const double err = std::fabs(g - r);
          const double bound = sp * (1.0 + 1e-5) * tie_slack[d] + eta * sp * magnitude[d] + 1e-30;
          e->bad += !(err <= bound);
          e->differing += g != r;
          e->worst_bound_use = std::max(e->worst_bound_use, err / bound);
          e->worst_vs_ref = std::max(e->worst_vs_ref, err / vmax);
          const double err64 = std::fabs(g - exact[d]);
          e->bad_fp64 += !(err64 <= 0.02 * vmax);
          e->worst_vs_fp64 = std::max(e->worst_vs_fp64, err64 / vmax);
          e->worst_ref_vs_fp64 = std::max(e->worst_ref_vs_fp64, std::fabs(r - exact[d]) / vmax);
        }
        if (!got.probs.empty()) {
          const double rel = prob_rel;
          for (int j = 0; j < S; ++j) {
            const double pg = prob_at(p, got, b, h, i, j), pr = prob_at(p, want, b, h, i, j);
            e->bad_prob += !(std::fabs(pg - pr) <= rel * pr + 1e-44);
          }
        }
      }
    }
  }
}

}  // namespace encrt::kernels::test
