// f32_attention__neon: scaled-dot-product attention for one (sequence, head), the reference's
// algorithm (kernels/ref/attention_ref.cpp) in NEON: per query row, the scores of all keys four at
// a time (dot products over head_dim, 4 lanes each, one load of the query row per four keys), their
// max, exp (exp_neon.h) and sum, the normalization, then P·V accumulated 32 dims at a time in
// registers. Padding keys get -inf, whose exp is exactly 0, so they add nothing; a sequence with no
// real key gives zeros, as in the reference. Scratch: one row of scores (seq floats, rounded up to
// whole vectors).
// Work per call, counted under qemu (instructions, not time: benchmarks/qemu_instructions/
// arm_attention.sh), seq 128, head_dim 32: 1.09 M instructions, 66 per (query, key) pair; 1.99 M
// with one key per dot product and P·V 16 dims at a time.
#include <cmath>
#include <cstring>

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/exp_neon.h"
#include "kernels/attention_pairs.h"

namespace encrt::kernels::arm {

size_t f32_attention_scratch__neon(int seq, int /*head_dim*/) {
  return static_cast<size_t>(round_up(seq, 4)) * sizeof(float);
}

namespace {

float dot(const float* a, const float* b, int D) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  int d = 0;
  for (; d + 4 <= D; d += 4) acc = vfmaq_f32(acc, vld1q_f32(a + d), vld1q_f32(b + d));
  float s = vaddvq_f32(acc);
  for (; d < D; ++d) s = std::fma(a[d], b[d], s);
  return s;
}

// dot(q, k_l, D) for the four rows k0..k3, as lanes 0..3: the same sums in the same order as dot
// (four lanes, then across them, then the dims left over), one load of q per four keys.
float32x4_t dot4(const float* q, const float* k0, const float* k1, const float* k2, const float* k3, int D) {
  float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
  int d = 0;
  for (; d + 4 <= D; d += 4) {
    const float32x4_t vq = vld1q_f32(q + d);
    a0 = vfmaq_f32(a0, vq, vld1q_f32(k0 + d));
    a1 = vfmaq_f32(a1, vq, vld1q_f32(k1 + d));
    a2 = vfmaq_f32(a2, vq, vld1q_f32(k2 + d));
    a3 = vfmaq_f32(a3, vq, vld1q_f32(k3 + d));
  }
  // Across each accumulator's lanes pairwise, as vaddvq_f32: (l0 + l1) + (l2 + l3).
  const float32x4_t sums = vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3));
  if (d == D) return sums;
  float s[4];
  vst1q_f32(s, sums);
  for (; d < D; ++d) {
    s[0] = std::fma(q[d], k0[d], s[0]);
    s[1] = std::fma(q[d], k1[d], s[1]);
    s[2] = std::fma(q[d], k2[d], s[2]);
    s[3] = std::fma(q[d], k3[d], s[3]);
  }
  return vld1q_f32(s);
}

// out[0 .. 4·kVecs) = Σ_k p_k · v_k over the keys with p_k != 0 (v_k = v + k · ld), the sums in
// registers.
template <int kVecs>
void pv_dims(const float* p, int S, const float* v0, size_t ld, float* out) {
  float32x4_t acc[kVecs];
  for (int c = 0; c < kVecs; ++c) acc[c] = vdupq_n_f32(0.0f);
  for (int k = 0; k < S; ++k) {
    if (p[k] == 0.0f) continue;
    const float* v = v0 + static_cast<size_t>(k) * ld;
    for (int c = 0; c < kVecs; ++c) acc[c] = vfmaq_n_f32(acc[c], vld1q_f32(v + 4 * c), p[k]);
  }
  for (int c = 0; c < kVecs; ++c) vst1q_f32(out + 4 * c, acc[c]);
}

// With pair masks or a window (kernel_types.h): the reference's masked path (attention_ref.cpp)
// per query row over the keys a window leaves it, [j_lo, j_hi) (all keys without a window),
// scores -inf where a pair is masked; a row whose max is -inf gets sum 0 and zeros.
void attention_pairs(const AttentionArgs& a, int b, int h, const PairMask& pm, float* scores) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim;
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  auto row = [&](int j, int part) {
    return a.qkv + (row0 + j) * a.ld_qkv + static_cast<size_t>(part) * H + static_cast<size_t>(h) * D;
  };
  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    int j_lo, j_hi;
    pm.queries_for_keys(i, i, &j_lo, &j_hi);  // symmetric: the keys within ±window of i
    const int v_lo = j_lo & ~3, v_hi = round_up(j_hi, 4);  // whole vectors (scratch holds round_up(S, 4))
    const float* q = row(i, 0);
    float max_score = -INFINITY;
    for (int j = v_lo; j < v_hi; ++j) {
      scores[j] = -INFINITY;
      if (j < j_lo || j >= j_hi || (mask && mask[j] == 0) || pm.apply(i, j, 0.0f) == -INFINITY) continue;
      scores[j] = pm.apply(i, j, dot(q, row(j, 1), D) * a.scale);
      max_score = scores[j] > max_score ? scores[j] : max_score;
    }
    const float32x4_t vmax = vdupq_n_f32(max_score == -INFINITY ? 0.0f : max_score);
    float32x4_t vsum = vdupq_n_f32(0.0f);
    for (int j = v_lo; j < v_hi; j += 4) {
      const float32x4_t e = exp_neon(vsubq_f32(vld1q_f32(scores + j), vmax));
      vst1q_f32(scores + j, e);
      vsum = vaddq_f32(vsum, e);
    }
    const float sum = vaddvq_f32(vsum);
    const float inv_sum = sum == 0.0f ? 0.0f : 1.0f / sum;
    for (int j = v_lo; j < v_hi; ++j) scores[j] *= inv_sum;
    if (probs) {
      for (int j = 0; j < S; ++j) probs[j] = j >= v_lo && j < v_hi ? scores[j] : 0.0f * inv_sum;
    }
    for (int d = 0; d < D; ++d) out[d] = 0.0f;
    for (int j = j_lo; j < j_hi; ++j) {
      const float p = scores[j];
      if (p == 0.0f) continue;
      const float* v = row(j, 2);
      int d = 0;
      for (; d + 4 <= D; d += 4) vst1q_f32(out + d, vfmaq_n_f32(vld1q_f32(out + d), vld1q_f32(v + d), p));
      for (; d < D; ++d) out[d] = std::fma(p, v[d], out[d]);
    }
  }
}

}  // namespace

void f32_attention__neon(const AttentionArgs& a, int b, int h, void* scratch) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim;
  const int S4 = round_up(S, 4);
  float* scores = static_cast<float*>(scratch);
  const PairMask pm = pair_mask_of(a, b);
  if (pm.active()) {
    attention_pairs(a, b, h, pm, scores);
    return;
  }
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  bool any_real = false;
  for (int j = 0; j < S; ++j) any_real |= !mask || mask[j] != 0;
  auto row = [&](int j, int part) {
    return a.qkv + (row0 + j) * a.ld_qkv + static_cast<size_t>(part) * H + static_cast<size_t>(h) * D;
  };

  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    if (!any_real) {
      std::memset(out, 0, sizeof(float) * D);
      if (probs) std::memset(probs, 0, sizeof(float) * S);
      continue;
    }
    const float* q = row(i, 0);
    // The scores of four keys at a time, each 4-lane load of the query row serving all four.
    int j = 0;
    for (; j + 4 <= S; j += 4) {
      float32x4_t s = dot4(q, row(j, 1), row(j + 1, 1), row(j + 2, 1), row(j + 3, 1), D);
      s = vmulq_n_f32(s, a.scale);
      if (mask) {
        const uint32x4_t real = vtstq_u32(vreinterpretq_u32_s32(vld1q_s32(mask + j)), vdupq_n_u32(~0u));
        s = vbslq_f32(real, s, vdupq_n_f32(-INFINITY));
      }
      vst1q_f32(scores + j, s);
    }
    for (; j < S; ++j) scores[j] = mask && mask[j] == 0 ? -INFINITY : dot(q, row(j, 1), D) * a.scale;
    for (j = S; j < S4; ++j) scores[j] = -INFINITY;
    float32x4_t vm = vdupq_n_f32(-INFINITY);
    for (j = 0; j < S4; j += 4) vm = vmaxq_f32(vm, vld1q_f32(scores + j));
    const float32x4_t vmax = vdupq_n_f32(vmaxvq_f32(vm));
    float32x4_t vsum = vdupq_n_f32(0.0f);
    for (j = 0; j < S4; j += 4) {
      const float32x4_t e = exp_neon(vsubq_f32(vld1q_f32(scores + j), vmax));
      vst1q_f32(scores + j, e);
      vsum = vaddq_f32(vsum, e);
    }
    const float inv_sum = 1.0f / vaddvq_f32(vsum);
    for (j = 0; j < S4; j += 4) vst1q_f32(scores + j, vmulq_n_f32(vld1q_f32(scores + j), inv_sum));
    if (probs) std::memcpy(probs, scores, sizeof(float) * S);
    // P·V, 32 dims at a time in 8 registers (then 16, then 4), then the dims left over.
    int d0 = 0;
    const float* v0 = row(0, 2);
    const size_t ld = static_cast<size_t>(a.ld_qkv);
    for (; d0 + 32 <= D; d0 += 32) pv_dims<8>(scores, S, v0 + d0, ld, out + d0);
    for (; d0 + 16 <= D; d0 += 16) pv_dims<4>(scores, S, v0 + d0, ld, out + d0);
    for (; d0 + 4 <= D; d0 += 4) pv_dims<1>(scores, S, v0 + d0, ld, out + d0);
    for (; d0 < D; ++d0) {
      float s = 0.0f;
      for (int k = 0; k < S; ++k)
        if (scores[k] != 0.0f) s = std::fma(scores[k], row(k, 2)[d0], s);
      out[d0] = s;
    }
  }
}

void f32_exp__neon(int n, const float* x, float* y) {
  int i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp_neon(vld1q_f32(x + i)));
  if (i < n) {
    float in[4] = {0, 0, 0, 0}, out[4];
    std::memcpy(in, x + i, sizeof(float) * static_cast<size_t>(n - i));
    vst1q_f32(out, exp_neon(vld1q_f32(in)));
    std::memcpy(y + i, out, sizeof(float) * static_cast<size_t>(n - i));
  }
}

}  // namespace encrt::kernels::arm
