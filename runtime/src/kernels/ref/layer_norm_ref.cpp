// Reference LayerNorm: two passes in double so that it is a trustworthy oracle.
#include <cmath>

#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

void layer_norm(int M, int N, const float* X, int ldx, const float* gamma, const float* beta,
                float eps, float* Y, int ldy) {
  for (int m = 0; m < M; ++m) {
    const float* x = X + static_cast<size_t>(m) * ldx;
    float* y = Y + static_cast<size_t>(m) * ldy;
    double mean = 0.0;
    for (int n = 0; n < N; ++n) mean += x[n];
    mean /= N;
    double var = 0.0;
    for (int n = 0; n < N; ++n) var += (x[n] - mean) * (x[n] - mean);
    var /= N;
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(eps));
    for (int n = 0; n < N; ++n)
      y[n] = static_cast<float>((x[n] - mean) * inv) * gamma[n] + beta[n];
  }
}

}  // namespace encrt::kernels::ref
