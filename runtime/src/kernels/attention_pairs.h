// What AttentionArgs' pair masks and window (kernel_types.h) mean for one sequence, in one place
// for every attention kernel (the references and the SIMD variants): the masked score of a
// (query, key) pair, and which queries and keys a window leaves to a block of work, so that the
// kernels skip the rest (cost seq × window, not seq²). ISA-neutral, inline, and included by
// kernel files built with ISA flags: so everything here has internal linkage and uses no inline
// std:: function or template (x86_avx2_common.h explains why).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/kernel_types.h"

namespace encrt::kernels {
namespace {

// The index of the first of the ascending keys[0..n) that is > value (strictly_greater) or
// >= value: std::upper_bound / std::lower_bound, written out.
int first_key_past(const int32_t* keys, int n, int value, bool strictly_greater) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (strictly_greater ? keys[mid] <= value : keys[mid] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

struct PairMask {
  const uint8_t* blocked = nullptr;  // this sequence's [seq, seq], or null
  const float* bias = nullptr;       // this sequence's [seq, seq], or null (finite or -inf)
  int seq = 0;
  int window = 0;  // > 0: |i - j| <= window

  // Whether anything beyond the key padding mask applies (else the kernels' unmasked path).
  bool active() const { return blocked || bias || window > 0; }

  // The score of query i for key j after the masks: -inf where i may not attend j (whatever
  // `score` is, NaN included), else score + bias.
  float apply(int i, int j, float score) const {
    if (window > 0 && (i - j > window || j - i > window)) return -INFINITY;
    const size_t at = static_cast<size_t>(i) * static_cast<size_t>(seq) + static_cast<size_t>(j);
    if (blocked) return blocked[at] ? -INFINITY : score;
    if (bias) return bias[at] == -INFINITY ? -INFINITY : score + bias[at];
    return score;
  }

  // Queries [*begin, *end) that may see a key at a position in [first_key, last_key].
  void queries_for_keys(int first_key, int last_key, int* begin, int* end) const {
    *begin = window > 0 && first_key - window > 0 ? first_key - window : 0;
    *end = window > 0 && last_key + window + 1 < seq ? last_key + window + 1 : seq;
  }

  // Indices [*lo, *hi) into the ascending key positions keys[0..n) that some query of
  // [i_begin, i_end) may see.
  void keys_for_queries(const int32_t* keys, int n, int i_begin, int i_end, int* lo, int* hi) const {
    if (window <= 0) {
      *lo = 0;
      *hi = n;
      return;
    }
    *lo = first_key_past(keys, n, i_begin - window, false);
    *hi = first_key_past(keys, n, i_end - 1 + window, true);
  }
};

PairMask pair_mask_of(const AttentionArgs& a, int b) {
  PairMask m;
  const size_t offset = static_cast<size_t>(b) * a.pair_batch_stride;
  m.blocked = a.pair_blocked ? a.pair_blocked + offset : nullptr;
  m.bias = a.pair_bias ? a.pair_bias + offset : nullptr;
  m.seq = a.seq;
  m.window = a.window > 0 && a.window < a.seq - 1 ? a.window : 0;  // a window as wide as the sequence is none
  return m;
}

}  // namespace
}  // namespace encrt::kernels
