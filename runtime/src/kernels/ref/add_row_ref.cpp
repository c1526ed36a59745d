// Reference for adding a half-precision embedding row into fp32 activations.
#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

void add_row_f16(int n, const uint16_t* src, float scale, float* dst) {
  for (int i = 0; i < n; ++i) dst[i] += half_to_float(src[i]) * scale;
}

}  // namespace encrt::kernels::ref
