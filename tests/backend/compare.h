// How a backend's fp32 output compares with the reference's: NaN and ±Inf must sit at the same
// places (NaN for NaN, the same infinity), and the finite values' largest difference is taken
// relative to the RMS of the reference's finite values.
#pragma once

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>

namespace encrt::conformance {

struct Comparison {
  double normalized_error = 0.0;  // max |got - ref| / rms(ref), over the finite values
  int nonfinite_mismatches = 0;   // places where one side is not finite and the two differ
  std::string first_mismatch;     // the first of those, for the failure message
};

inline Comparison compare_f32(const float* got, const float* ref, size_t n) {
  Comparison c;
  double worst = 0, sum2 = 0;
  size_t finite = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(got[i])) {
      const bool same = (std::isnan(ref[i]) && std::isnan(got[i])) || (std::isinf(ref[i]) && got[i] == ref[i]);
      if (!same && c.nonfinite_mismatches++ == 0) {
        std::ostringstream m;
        m << "element " << i << ": " << got[i] << " where the reference has " << ref[i];
        c.first_mismatch = m.str();
      }
      continue;
    }
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - ref[i]));
    sum2 += static_cast<double>(ref[i]) * ref[i];
    ++finite;
  }
  const double rms = finite ? std::sqrt(sum2 / static_cast<double>(finite)) : 0.0;
  c.normalized_error = rms > 0 ? worst / rms : worst;
  return c;
}

}  // namespace encrt::conformance
