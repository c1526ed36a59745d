// One output value of an int8 linear from its exact int32 dot product D = Σ (q − 128)·w:
//   act(float(D + (128 − zp)·Σw) · s_x · s_w + bias)
// (the residual is added by the caller), shared by int8_epilogue.cu (D read from cuBLASLt's int32
// output) and the tensor-core GEMM (gemm_i8_mma_kernel.cuh: D in registers), so that both paths
// compute every value with the same operations: int8_math.h's, each rounded once as the
// reference's gemm_u8s8 and epilogue store (kernels/ref/gemm_ref.cpp) round them. Plain enough to
// compile for the host too (tests/cuda_emulation runs the GEMM's source there).
#pragma once

#include <cmath>
#include <cstdint>

#include "backends/cuda/kernels/int8_math.h"

namespace encrt::cuda::int8 {

// The reference's exact-erf GELU and NaN-keeping ReLU (kernels/ref/gemm_ref.cpp's apply_activation;
// activation 1 ReLU, 2 GELU, else none). x != x is the NaN test (no isnan overload to pick).
__device__ __forceinline__ float activate(float x, int activation) {
  if (activation == 1) return x != x ? x : x > 0.0f ? x : 0.0f;
  if (activation == 2) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  return x;
}

// Column n's value before the residual: bias may be null (no add at all, as the reference: not
// + 0, which would turn -0 into +0).
__device__ __forceinline__ float epilogue_value(int32_t d, int32_t zero_point, float x_scale, int32_t w_sum,
                                                float w_scale, const float* bias, int n, int activation) {
  float v = dequantize(fold_zero_point(d, zero_point, w_sum), x_scale, w_scale);
  if (bias) v = add_rn(v, bias[n]);
  return activate(v, activation);
}

}  // namespace encrt::cuda::int8
