// Naive double-precision implementations used as independent oracles for the reference kernels.
// Everything here is written from the formulas in kernels/kernel_types.h and ref_kernels.h, not
// from the kernels' code: packed layouts are produced by walking the documented array nests in
// storage order (no index formula), half precision is decoded/encoded from the IEEE definition.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace encrt::test_naive {

// ---------------------------------------------------------------------------------------------
// Random data

inline std::vector<float> random_floats(size_t count, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Packed weight layouts, built by enumerating the storage nest in order.

// PanelN16: [ceil(N/16)][K][16]; slot (panel, k, lane) holds W[panel*16 + lane, k] or 0.
template <typename T>
std::vector<T> naive_pack_panel_n16(int N, int K, const std::vector<T>& w_rowmajor) {
  std::vector<T> out;
  const int panels = (N + 15) / 16;
  for (int p = 0; p < panels; ++p)
    for (int k = 0; k < K; ++k)
      for (int lane = 0; lane < 16; ++lane) {
        const int n = p * 16 + lane;
        out.push_back(n < N ? w_rowmajor[static_cast<size_t>(n) * K + k] : T(0));
      }
  return out;
}

// PanelN16K4: [ceil(N/16)][ceil(K/4)][16][4]; slot (panel, kg, lane, kk) holds
// W[panel*16 + lane, kg*4 + kk] or 0.
template <typename T>
std::vector<T> naive_pack_panel_n16k4(int N, int K, const std::vector<T>& w_rowmajor) {
  std::vector<T> out;
  const int panels = (N + 15) / 16;
  const int groups = (K + 3) / 4;
  for (int p = 0; p < panels; ++p)
    for (int g = 0; g < groups; ++g)
      for (int lane = 0; lane < 16; ++lane)
        for (int kk = 0; kk < 4; ++kk) {
          const int n = p * 16 + lane;
          const int k = g * 4 + kk;
          out.push_back(n < N && k < K ? w_rowmajor[static_cast<size_t>(n) * K + k] : T(0));
        }
  return out;
}

// Inverse of naive_pack_panel_n16 (reads the real elements back to row-major).
template <typename T>
std::vector<T> naive_unpack_panel_n16(int N, int K, const T* packed) {
  std::vector<T> w(static_cast<size_t>(N) * K);
  size_t pos = 0;
  const int panels = (N + 15) / 16;
  for (int p = 0; p < panels; ++p)
    for (int k = 0; k < K; ++k)
      for (int lane = 0; lane < 16; ++lane, ++pos) {
        const int n = p * 16 + lane;
        if (n < N) w[static_cast<size_t>(n) * K + k] = packed[pos];
      }
  return w;
}

template <typename T>
std::vector<T> naive_unpack_panel_n16k4(int N, int K, const T* packed) {
  std::vector<T> w(static_cast<size_t>(N) * K);
  size_t pos = 0;
  const int panels = (N + 15) / 16;
  const int groups = (K + 3) / 4;
  for (int p = 0; p < panels; ++p)
    for (int g = 0; g < groups; ++g)
      for (int lane = 0; lane < 16; ++lane)
        for (int kk = 0; kk < 4; ++kk, ++pos) {
          const int n = p * 16 + lane;
          const int k = g * 4 + kk;
          if (n < N && k < K) w[static_cast<size_t>(n) * K + k] = packed[pos];
        }
  return w;
}

// ---------------------------------------------------------------------------------------------
// IEEE 754 binary16, from the definition.

// Value of a half bit pattern (NaN for NaN patterns): (-1)^s 2^(e-15) (1 + m/1024), subnormals
// 2^-14 (m/1024), e == 31 is inf/NaN. Exact in double.
inline double naive_half_value(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  double mag;
  if (e == 31) {
    mag = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), -24);
  } else {
    mag = std::ldexp(1024.0 + m, e - 25);
  }
  return sign ? -mag : mag;
}

// Nearest half to a finite or infinite double, ties to the even mantissa, overflow to inf.
// Works on magnitudes: the positive halves 0x0000..0x7c00 are ordered like their values, so a
// binary search over bit patterns finds the two neighbours.
inline uint16_t naive_double_to_half(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return static_cast<uint16_t>(sign | 0x7e00);
  const double a = std::fabs(x);
  // Find the largest finite-or-inf pattern whose value is <= a.
  int lo = 0, hi = 0x7c00;  // value(lo) <= a is maintained; 0x7c00 is +inf
  if (a >= naive_half_value(0x7c00)) return static_cast<uint16_t>(sign | 0x7c00);
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (naive_half_value(static_cast<uint16_t>(mid)) <= a) lo = mid; else hi = mid;
  }
  // Candidates lo and lo+1 (lo+1 may be 0x7c00 = inf; rounding beyond 65504 uses the virtual
  // next value 65536 for the tie, as IEEE specifies for overflow).
  const double v_lo = naive_half_value(static_cast<uint16_t>(lo));
  const double v_hi = lo + 1 == 0x7c00 ? 65536.0 : naive_half_value(static_cast<uint16_t>(lo + 1));
  uint16_t pick;
  if (a - v_lo < v_hi - a) pick = static_cast<uint16_t>(lo);
  else if (a - v_lo > v_hi - a) pick = static_cast<uint16_t>(lo + 1);
  else pick = static_cast<uint16_t>((lo & 1) ? lo + 1 : lo);
  return static_cast<uint16_t>(sign | pick);
}

// ---------------------------------------------------------------------------------------------
// Math

inline double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// C[m, n] = Σ_k A[m, k] W[n, k] in double, also returning Σ_k |A[m,k] W[n,k]| for error bounds.
inline void matmul_abt(int M, int N, int K, const std::vector<double>& A, const std::vector<double>& W,
                       std::vector<double>* C, std::vector<double>* abs_sum) {
  C->assign(static_cast<size_t>(M) * N, 0.0);
  abs_sum->assign(static_cast<size_t>(M) * N, 0.0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0.0, sa = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = A[static_cast<size_t>(m) * K + k] * W[static_cast<size_t>(n) * K + k];
        s += p;
        sa += std::fabs(p);
      }
      (*C)[static_cast<size_t>(m) * N + n] = s;
      (*abs_sum)[static_cast<size_t>(m) * N + n] = sa;
    }
}

// Softmax attention for one query against keys 0..S-1, keys with real[j] == false excluded.
// Returns the probabilities (0 on excluded keys); all zero if no key is real.
inline std::vector<double> softmax_masked(const std::vector<double>& scores, const std::vector<bool>& real) {
  const size_t S = scores.size();
  std::vector<double> p(S, 0.0);
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < S; ++j)
    if (real[j]) mx = std::max(mx, scores[j]);
  if (mx == -std::numeric_limits<double>::infinity()) return p;
  double sum = 0.0;
  for (size_t j = 0; j < S; ++j)
    if (real[j]) sum += (p[j] = std::exp(scores[j] - mx));
  for (size_t j = 0; j < S; ++j) p[j] /= sum;
  return p;
}

// LayerNorm of one row in double: (x - mean) / sqrt(var + eps) * gamma + beta (biased variance).
inline std::vector<double> layer_norm_row(const std::vector<double>& x, const std::vector<double>& gamma,
                                          const std::vector<double>& beta, double eps) {
  const size_t N = x.size();
  double mean = 0.0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(N);
  double var = 0.0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(N);
  std::vector<double> y(N);
  for (size_t n = 0; n < N; ++n) y[n] = (x[n] - mean) / std::sqrt(var + eps) * gamma[n] + beta[n];
  return y;
}

}  // namespace encrt::test_naive
