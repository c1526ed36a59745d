// The real keys of one (sequence, head) of an attention kernel: the positions whose key padding
// mask is set, and what the reference does with the rest, in one place for the SIMD kernels. As
// attention_pairs.h: ISA-neutral, inline, included by kernel files built with ISA flags, so
// everything here has internal linkage and uses no inline std:: function or template.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace encrt::kernels {
namespace {

// The indices j < S with mask[j] != 0 (every j without a mask), ascending, into keys[0..S);
// returns how many. When there is none, the head's output (S rows of D floats, stride ld_out)
// and its S × S probabilities (when probs is set) are zeroed, the reference's rule, and the
// kernel has nothing more to do.
inline int list_real_keys(const int32_t* mask, int S, int D, float* out, size_t ld_out, float* probs, int32_t* keys) {
  int real = 0;
  for (int j = 0; j < S; ++j)
    if (!mask || mask[j] != 0) keys[real++] = j;
  if (real == 0) {
    for (int i = 0; i < S; ++i) std::memset(out + static_cast<size_t>(i) * ld_out, 0, sizeof(float) * D);
    if (probs) std::memset(probs, 0, sizeof(float) * S * S);
  }
  return real;
}

// The probabilities of the padded keys (mask[j] == 0), exactly 0 in each of the S rows of probs;
// nothing when every key is real.
inline void zero_padded_probs(const int32_t* mask, int S, int real, float* probs) {
  if (!probs || real == S) return;
  for (size_t i = 0; i < static_cast<size_t>(S); ++i)
    for (int j = 0; j < S; ++j)
      if (mask[j] == 0) probs[i * S + j] = 0.0f;
}

}  // namespace
}  // namespace encrt::kernels
