// The integer and fp32 arithmetic of the CUDA int8 path, as inline functions that nvcc compiles
// for the device and the host compiler for the CPU: the kernels (quantize.cu, int8_epilogue.cu)
// call them, and tests/kernels/test_cuda_int8_math.cpp checks them against the reference kernels
// (kernels/ref/quantize_ref.cpp, gemm_ref.cpp) in CI, where no GPU runs them.
//
// cuBLASLt's int8 GEMMs take signed int8 for both operands, the reference's activations are
// asymmetric uint8 q with a zero point zp. The GPU stores q' = q - 128 (the same byte with its top
// bit flipped: q ^ 0x80 read as int8), so cuBLASLt computes D = Σ q'·w, and
//   Σ q·w − zp·Σw = Σ (q' + 128)·w − zp·Σw = D + (128 − zp)·Σw,
// exactly, modulo 2^32 like the reference (unsigned arithmetic: wrapping is defined).
// Plain C++ (no CUDA header): the test builds without the toolkit.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define ENCRT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ENCRT_HOST_DEVICE inline
#endif

namespace encrt::cuda::int8 {

// The bit flip that turns the reference's uint8 q into the GPU's int8 q − 128 (and back).
constexpr uint8_t kSignFlip = 0x80;

ENCRT_HOST_DEVICE int8_t to_signed(uint8_t q) { return static_cast<int8_t>(static_cast<uint8_t>(q ^ kSignFlip)); }
ENCRT_HOST_DEVICE uint8_t to_unsigned(int8_t q) { return static_cast<uint8_t>(static_cast<uint8_t>(q) ^ kSignFlip); }

// fp32 operations rounded once, to nearest even, never contracted into an FMA with a neighbour
// (nvcc contracts a*b + c by default; the reference rounds each operation).
ENCRT_HOST_DEVICE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
ENCRT_HOST_DEVICE float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
ENCRT_HOST_DEVICE float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
// Round to the nearest integer, ties to even (the reference's std::nearbyint in the default mode).
ENCRT_HOST_DEVICE float round_even(float x) {
#if defined(__CUDA_ARCH__)
  return rintf(x);
#else
  return std::rint(x);
#endif
}
ENCRT_HOST_DEVICE float quiet_nan() {
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7fc00000);
#else
  return __builtin_nanf("");
#endif
}

// The running minimum and maximum of the reference (std::min / std::max with the new value
// second): a NaN is never taken, so it is skipped.
ENCRT_HOST_DEVICE float range_min(float lo, float x) { return x < lo ? x : lo; }
ENCRT_HOST_DEVICE float range_max(float hi, float x) { return hi < x ? x : hi; }

constexpr float kFloatMax = 3.40282347e+38f;

// A row's quantization from its range (lo = min(0, min x), hi = max(0, max x)), as
// kernel_types.h states it, the two rows the formula cannot take included.
struct RowQuantization {
  float scale = 1.0f;
  float inv = 0.0f;     // 1 / scale, or 0 for a refused row (every q is then 0)
  int32_t zero_point = 0;
  bool refused = false;  // q = 0 for every k and the padding
};

ENCRT_HOST_DEVICE RowQuantization row_quantization(float lo, float hi) {
  RowQuantization r;
  const float s = div_rn(hi - lo, 255.0f);
  const float inv = div_rn(1.0f, s);
  if (!(inv <= kFloatMax) || !(s <= kFloatMax)) {
    r.scale = inv <= kFloatMax ? quiet_nan() : 1.0f;
    r.refused = true;
    return r;
  }
  float z = round_even(mul_rn(-lo, inv));
  z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
  r.scale = s;
  r.inv = inv;
  r.zero_point = static_cast<int32_t>(z);
  return r;
}

// q of one value of a row that is not refused (x: the value times its multiplier).
ENCRT_HOST_DEVICE uint8_t quantize_value(float x, const RowQuantization& r) {
  const float v = round_even(mul_rn(x, r.inv)) + static_cast<float>(r.zero_point);
  if (v != v) return 0;  // NaN
  return static_cast<uint8_t>(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
}

// The reference's accumulator from cuBLASLt's D = Σ (q − 128)·w: D + (128 − zp)·Σw mod 2^32.
ENCRT_HOST_DEVICE int32_t fold_zero_point(int32_t d, int32_t zero_point, int32_t w_sum) {
  const uint32_t fold = static_cast<uint32_t>(128 - zero_point) * static_cast<uint32_t>(w_sum);
  return static_cast<int32_t>(static_cast<uint32_t>(d) + fold);
}

// The dequantized value before the bias: float(acc) · s_x · s_w, rounded as the reference.
ENCRT_HOST_DEVICE float dequantize(int32_t acc, float x_scale, float w_scale) {
  return mul_rn(mul_rn(static_cast<float>(acc), x_scale), w_scale);
}

}  // namespace encrt::cuda::int8

#undef ENCRT_HOST_DEVICE
