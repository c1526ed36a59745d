// Reference scaled-dot-product attention for one (sequence, head): one query row at a time,
// the full row of scores materialized, softmax with the max subtracted.
#include <cmath>
#include <cstring>

#include "kernels/attention_pairs.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

namespace {

// With pair masks or a window (kernel_types.h): each query row over the keys it may attend.
// A row whose max is -inf (no key, or every allowed score -inf) has sum 0 and gets zeros.
void attention_f32_pairs(const AttentionArgs& a, int b, int h, const PairMask& pm, float* scores) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim;
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    const float* q = a.qkv + (row0 + i) * a.ld_qkv + static_cast<size_t>(h) * D;
    float max_score = -INFINITY;
    for (int j = 0; j < S; ++j) {
      scores[j] = -INFINITY;
      if (mask && mask[j] == 0) continue;
      if (pm.apply(i, j, 0.0f) == -INFINITY) continue;  // never reads K_j for a masked pair
      const float* k = a.qkv + (row0 + j) * a.ld_qkv + H + static_cast<size_t>(h) * D;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot += q[d] * k[d];
      scores[j] = pm.apply(i, j, dot * a.scale);
      if (scores[j] > max_score) max_score = scores[j];
    }
    const float shift = max_score == -INFINITY ? 0.0f : max_score;
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) {
      scores[j] = scores[j] == -INFINITY ? 0.0f : std::exp(scores[j] - shift);
      sum += scores[j];
    }
    const float inv_sum = sum == 0.0f ? 0.0f : 1.0f / sum;
    for (int d = 0; d < D; ++d) out[d] = 0.0f;
    for (int j = 0; j < S; ++j) {
      const float p = scores[j] * inv_sum;
      if (probs) probs[j] = p;
      if (p == 0.0f) continue;
      const float* v = a.qkv + (row0 + j) * a.ld_qkv + 2 * static_cast<size_t>(H) + static_cast<size_t>(h) * D;
      for (int d = 0; d < D; ++d) out[d] += p * v[d];
    }
  }
}

}  // namespace

size_t attention_f32_scratch(int seq, int /*head_dim*/) { return static_cast<size_t>(seq) * sizeof(float); }

void attention_f32(const AttentionArgs& a, int b, int h, void* scratch) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim;
  float* scores = static_cast<float*>(scratch);
  const PairMask pm = pair_mask_of(a, b);
  if (pm.active()) {
    attention_f32_pairs(a, b, h, pm, scores);
    return;
  }
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  bool any_real = false;
  for (int j = 0; j < S; ++j) any_real |= !mask || mask[j] != 0;

  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    if (!any_real) {
      std::memset(out, 0, sizeof(float) * D);
      if (probs) std::memset(probs, 0, sizeof(float) * S);
      continue;
    }
    const float* q = a.qkv + (row0 + i) * a.ld_qkv + static_cast<size_t>(h) * D;
    float max_score = -INFINITY;
    for (int j = 0; j < S; ++j) {
      if (mask && mask[j] == 0) continue;
      const float* k = a.qkv + (row0 + j) * a.ld_qkv + H + static_cast<size_t>(h) * D;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot += q[d] * k[d];
      scores[j] = dot * a.scale;
      if (scores[j] > max_score) max_score = scores[j];
    }
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) {
      scores[j] = (mask && mask[j] == 0) ? 0.0f : std::exp(scores[j] - max_score);
      sum += scores[j];
    }
    const float inv_sum = 1.0f / sum;
    for (int d = 0; d < D; ++d) out[d] = 0.0f;
    for (int j = 0; j < S; ++j) {
      const float p = scores[j] * inv_sum;
      if (probs) probs[j] = p;
      if (p == 0.0f) continue;
      const float* v = a.qkv + (row0 + j) * a.ld_qkv + 2 * static_cast<size_t>(H) + static_cast<size_t>(h) * D;
      for (int d = 0; d < D; ++d) out[d] += p * v[d];
    }
  }
}

}  // namespace encrt::kernels::ref
