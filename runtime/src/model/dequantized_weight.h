// One weight of an int8 linear run as fp16 (model/dequantized_linears.h): half(float(q · s · m)),
// q · s exact in double (8 × 24 bits), the product with the multiplier m rounded once, then round
// to nearest even to float and to half. The host's panels and the cuda backend's kernel
// (dequantize_weights_kernel.cuh) compute it alike; the tests hold both to this function.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace encrt::detail {

inline uint16_t dequantized_weight(int8_t q, float scale, float multiplier) {
  return float_to_half(static_cast<float>(static_cast<double>(q) * static_cast<double>(scale) *
                                          static_cast<double>(multiplier)));
}

}  // namespace encrt::detail
