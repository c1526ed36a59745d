// The GEMM epilogues the kernel tests run: "plain" on every shape, the others rotating over the
// shapes (bias, activations, a residual beside C or aliasing it).
#pragma once

#include "kernels/kernel_types.h"

namespace encrt::kernels::test {

enum class Residual { kNone, kSeparate, kAliasC };

struct EpilogueCase {
  bool bias;
  Activation activation;
  Residual residual;
  const char* name;
};

inline constexpr EpilogueCase kPlain = {false, Activation::kNone, Residual::kNone, "plain"};
inline constexpr EpilogueCase kRotating[] = {
    {true, Activation::kNone, Residual::kNone, "bias"},
    {true, Activation::kGelu, Residual::kNone, "bias+gelu"},
    {true, Activation::kRelu, Residual::kSeparate, "bias+relu+residual"},
    {false, Activation::kGelu, Residual::kSeparate, "gelu+residual"},
    {true, Activation::kNone, Residual::kAliasC, "bias+residual aliasing C"},
    {true, Activation::kGelu, Residual::kAliasC, "bias+gelu+residual aliasing C"},
};

}  // namespace encrt::kernels::test
