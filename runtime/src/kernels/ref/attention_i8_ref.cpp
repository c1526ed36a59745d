// Reference int8 attention for one (sequence, head). Exactly:
//   per token t: Q_t, K_t, V_t (head_dim values each) quantized symmetric int8,
//     s = max|x| / 127 (s = 1 when the row is all zero), q = clamp(rint(x * (1/s)), -127, 127)
//   S_ij = float(Σ_d q_i,d k_j,d) * (s_q,i * scale) * s_k,j            (int32 accumulation)
//   p_ij = softmax_j(S_ij) over real keys, in fp32
//   P'_ij = p_ij * s_v,j;  s_p,i = max_j P'_ij / 255;  u_ij = rint(P'_ij * (1/s_p,i)) in [0, 255]
//   out_i,d = float(Σ_j u_ij v_j,d) * s_p,i                              (int32 accumulation)
// Folding V's per-token scale into the probabilities keeps the P·V reduction purely integer.
// Non-finite inputs (kernel_types.h states the rule every int8 attention kernel follows): a query
// row whose score against some real key is NaN or ±inf, or whose head has a real key with an
// infinite V scale, gets NaN outputs and NaN probabilities for its real keys; s_p,i = 1 when
// max_j P'_ij / 255 is below float's smallest normal (then 1 / s_p would overflow, and every u is
// 0). So u is always an integer in [0, 255] and the sums cannot overflow. With pair masks or a
// window (kernel_types.h) a masked pair's score is -inf and its key is left out of the row: the
// scores of the pairs the query attends count for the non-finite rule, and (as without masks) the
// V scale of every real key of the head.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention_pairs.h"
#include "kernels/ref/ref_kernels.h"

namespace encrt::kernels::ref {

namespace {
struct I8Scratch {
  int8_t* q;  // [D]
  int8_t* k;  // [S][D]
  int8_t* v;  // [S][D]
  float* sk;  // [S]
  float* sv;  // [S]
  float* p;   // [S]
};

size_t align64(size_t x) { return (x + 63) & ~static_cast<size_t>(63); }

I8Scratch carve(void* scratch, int S, int D) {
  auto* base = static_cast<unsigned char*>(scratch);
  I8Scratch s{};
  size_t off = 0;
  s.q = reinterpret_cast<int8_t*>(base + off), off += align64(D);
  s.k = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(S) * D);
  s.v = reinterpret_cast<int8_t*>(base + off), off += align64(static_cast<size_t>(S) * D);
  s.sk = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S);
  s.sv = reinterpret_cast<float*>(base + off), off += align64(sizeof(float) * S);
  s.p = reinterpret_cast<float*>(base + off);
  return s;
}


// u_j = rint(P'_j / s_p) with s_p = max P' / 255 (1 below float's smallest normal), out_d =
// float(Σ_j u_j v_j,d) · s_p. Keys with P' = 0 (padding, masked pairs) add nothing, whatever
// their V. The sum runs modulo 2^32 (unsigned, so defined), as the SIMD kernels' 32-bit adds: it
// can only wrap past 66,311 keys (255 · 127 · S > 2^31).
void accumulate_pv(const I8Scratch& t, int S, int D, float pmax, float* out) {
  const float sp = pmax / 255.0f >= kFloatMinNormal ? pmax / 255.0f : 1.0f;
  const float inv_sp = 1.0f / sp;
  uint32_t acc_buf[512];
  for (int d0 = 0; d0 < D; d0 += 512) {
    const int dn = std::min(512, D - d0);
    std::fill(acc_buf, acc_buf + dn, 0u);
    for (int j = 0; j < S; ++j) {
      if (t.p[j] == 0.0f) continue;
      const int32_t u = static_cast<int32_t>(std::nearbyint(t.p[j] * inv_sp));
      if (u == 0) continue;
      const int8_t* v = t.v + static_cast<size_t>(j) * D + d0;
      for (int d = 0; d < dn; ++d) acc_buf[d] += static_cast<uint32_t>(u * v[d]);
    }
    for (int d = 0; d < dn; ++d) out[d0 + d] = static_cast<float>(static_cast<int32_t>(acc_buf[d])) * sp;
  }
}

void nan_row(const int32_t* mask, int S, int D, float* out, float* probs) {
  for (int d = 0; d < D; ++d) out[d] = kQuietNaN;
  if (probs)
    for (int j = 0; j < S; ++j) probs[j] = (mask && mask[j] == 0) ? 0.0f : kQuietNaN;
}
}  // namespace

float quantize_symmetric_i8(const float* x, int D, int8_t* q) {
  float amax = 0.0f;
  for (int d = 0; d < D; ++d) amax = std::max(amax, std::fabs(x[d]));
  const float s = amax > 0.0f ? amax / 127.0f : 1.0f;
  const float inv = 1.0f / s;
  for (int d = 0; d < D; ++d) {
    const float v = std::clamp(std::nearbyint(x[d] * inv), -127.0f, 127.0f);
    q[d] = std::isnan(v) ? int8_t{0} : static_cast<int8_t>(v);
  }
  return s;
}

size_t attention_i8_scratch(int seq, int head_dim) {
  return align64(head_dim) + 2 * align64(static_cast<size_t>(seq) * head_dim) +
         3 * align64(sizeof(float) * seq);
}

void attention_i8(const AttentionArgs& a, int b, int h, void* scratch) {
  const int S = a.seq, D = a.head_dim, H = a.heads * a.head_dim;
  const I8Scratch t = carve(scratch, S, D);
  const PairMask pm = pair_mask_of(a, b);
  const int32_t* mask = a.mask ? a.mask + static_cast<size_t>(b) * S : nullptr;
  const size_t row0 = static_cast<size_t>(b) * S;
  bool any_real = false;
  for (int j = 0; j < S; ++j) any_real |= !mask || mask[j] != 0;

  bool v_finite = true;  // every real key's V scale is finite
  for (int j = 0; j < S; ++j) {
    const float* row = a.qkv + (row0 + j) * a.ld_qkv + static_cast<size_t>(h) * D;
    t.sk[j] = quantize_symmetric_i8(row + H, D, t.k + static_cast<size_t>(j) * D);
    t.sv[j] = quantize_symmetric_i8(row + 2 * H, D, t.v + static_cast<size_t>(j) * D);
    if (!mask || mask[j] != 0) v_finite &= t.sv[j] <= kFloatMax;
  }
  for (int i = 0; i < S; ++i) {
    float* out = a.out + (row0 + i) * a.ld_out + static_cast<size_t>(h) * D;
    float* probs = a.probs ? a.probs + ((static_cast<size_t>(b) * a.heads + h) * S + i) * S : nullptr;
    if (!any_real) {
      std::memset(out, 0, sizeof(float) * D);
      if (probs) std::memset(probs, 0, sizeof(float) * S);
      continue;
    }
    const float sq = quantize_symmetric_i8(a.qkv + (row0 + i) * a.ld_qkv + static_cast<size_t>(h) * D, D, t.q);
    const float sq_scaled = sq * a.scale;
    float max_score = -INFINITY;
    if (pm.active()) {
      bool finite = v_finite;
      for (int j = 0; j < S; ++j) {
        if (mask && mask[j] == 0) continue;
        const int8_t* k = t.k + static_cast<size_t>(j) * D;
        int32_t dot = 0;
        for (int d = 0; d < D; ++d) dot += static_cast<int32_t>(t.q[d]) * k[d];
        t.p[j] = pm.apply(i, j, static_cast<float>(dot) * sq_scaled * t.sk[j]);
        if (t.p[j] != -INFINITY) finite &= std::fabs(t.p[j]) <= kFloatMax;
        max_score = std::max(max_score, t.p[j]);
      }
      if (!finite) {
        nan_row(mask, S, D, out, probs);
        continue;
      }
      // A row with no key to attend (max -inf) gets sum 0 and zeros; a masked key's P' is
      // exactly 0.
      const float shift = max_score == -INFINITY ? 0.0f : max_score;
      float sum = 0.0f;
      for (int j = 0; j < S; ++j) {
        const bool live = !(mask && mask[j] == 0) && t.p[j] != -INFINITY;
        t.p[j] = live ? std::exp(t.p[j] - shift) : 0.0f;
        sum += t.p[j];
      }
      const float inv_sum = sum == 0.0f ? 0.0f : 1.0f / sum;
      float pmax = 0.0f;
      for (int j = 0; j < S; ++j) {
        const bool live = t.p[j] != 0.0f;
        t.p[j] *= inv_sum;
        if (probs) probs[j] = t.p[j];
        t.p[j] = live ? t.p[j] * t.sv[j] : 0.0f;
        pmax = std::max(pmax, t.p[j]);
      }
      accumulate_pv(t, S, D, pmax, out);
      continue;
    }
    bool finite = v_finite;
    for (int j = 0; j < S; ++j) {
      if (mask && mask[j] == 0) continue;
      const int8_t* k = t.k + static_cast<size_t>(j) * D;
      int32_t dot = 0;
      for (int d = 0; d < D; ++d) dot += static_cast<int32_t>(t.q[d]) * k[d];
      t.p[j] = static_cast<float>(dot) * sq_scaled * t.sk[j];
      finite &= std::fabs(t.p[j]) <= kFloatMax;
      max_score = std::max(max_score, t.p[j]);
    }
    if (!finite) {
      nan_row(mask, S, D, out, probs);
      continue;
    }
    float sum = 0.0f;
    for (int j = 0; j < S; ++j) {
      t.p[j] = (mask && mask[j] == 0) ? 0.0f : std::exp(t.p[j] - max_score);
      sum += t.p[j];
    }
    const float inv_sum = 1.0f / sum;
    float pmax = 0.0f;
    for (int j = 0; j < S; ++j) {
      t.p[j] *= inv_sum;
      if (probs) probs[j] = t.p[j];
      if (mask && mask[j] == 0) continue;  // p = 0 (not 0 · s_v, which an infinite s_v makes NaN)
      t.p[j] *= t.sv[j];
      pmax = std::max(pmax, t.p[j]);
    }
    accumulate_pv(t, S, D, pmax, out);
  }
}

}  // namespace encrt::kernels::ref
