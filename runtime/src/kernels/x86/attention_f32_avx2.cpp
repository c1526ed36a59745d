// f32_attention__avx2: softmax(scale · Q Kᵀ) V for one (sequence, head), fp32, AVX2 + FMA.
//
// The algorithm of attention_f32_avx512.cpp (see there) with 8-lane vectors and the tiles sized
// for 16 ymm registers:
//   scores  6 query rows × 16 keys in 12 ymm accumulators (+ 2 key vectors + 1 broadcast);
//   P·V     6 query rows × 16 dims in 12 ymm accumulators.
// Key blocks of 64 real keys, transposed into scratch; online softmax with the output rows as
// the accumulator; a two-pass variant when the probabilities are requested.
#include <cmath>
#include <cstring>

#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_avx2.h"
#include "kernels/attention_keys.h"
#include "kernels/attention_pairs.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kRows = 6;        // query rows per tile
constexpr int kKeyBlock = 64;   // keys per transposed block
constexpr int kKeyTile = 16;    // keys per score register tile (2 ymm)
constexpr int kDimTile = 16;    // output dims per P·V register tile (2 ymm)

size_t align64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }

struct Scratch {
  int32_t* keys;   // [seq] indices of the real keys, ascending
  float* row_max;  // [seq] running max of each query row's scores
  float* row_sum;  // [seq] running Σ exp(score - row_max); 1 / sum in pass 2 of the probs variant
  float* kt;       // [head_dim][kKeyBlock] one key block's K, transposed
  float* p;        // [kRows][kKeyBlock] one tile's scores, then probabilities
};

size_t scratch_bytes(int S, int D) {
  return 3 * align64(sizeof(float) * static_cast<size_t>(S)) +
         sizeof(float) * static_cast<size_t>(D) * kKeyBlock + sizeof(float) * kRows * kKeyBlock;
}

Scratch carve(void* scratch, int S, int D) {
  auto* base = static_cast<unsigned char*>(scratch);
  const size_t per_row = align64(sizeof(float) * static_cast<size_t>(S));
  Scratch s;
  s.keys = reinterpret_cast<int32_t*>(base);
  s.row_max = reinterpret_cast<float*>(base + per_row);
  s.row_sum = reinterpret_cast<float*>(base + 2 * per_row);
  s.kt = reinterpret_cast<float*>(base + 3 * per_row);
  s.p = s.kt + static_cast<size_t>(D) * kKeyBlock;
  return s;
}

struct Head {
  const float* q;
  const float* k;
  const float* v;
  size_t ld_qkv;
  float* out;
  size_t ld_out;
  int seq, dim;
  float scale;
};

// kt[d][j] = K[keys[j], d] for j < nk; columns up to the next multiple of 8 are zeroed.
void pack_key_block(const Head& hd, const int32_t* keys, int nk, float* kt) {
  for (int j = 0; j < nk; ++j) {
    const float* k = hd.k + static_cast<size_t>(keys[j]) * hd.ld_qkv;
    for (int d = 0; d < hd.dim; ++d) kt[static_cast<size_t>(d) * kKeyBlock + j] = k[d];
  }
  const int padded = (nk + 7) & ~7;
  for (int d = 0; d < hd.dim; ++d)
    for (int j = nk; j < padded; ++j) kt[static_cast<size_t>(d) * kKeyBlock + j] = 0.0f;
}

// p[r][0 .. 8·NK) = scale · Q[i0 + r] · kt[:, 0 .. 8·NK), R rows.
template <int R, int NK>
void score_tile(const Head& hd, int i0, const float* kt, float* p) {
  const float* q[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) q[r] = hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv;
  __m256 acc[R][NK];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int d = 0; d < hd.dim; ++d) {
    const float* ktd = kt + static_cast<size_t>(d) * kKeyBlock;
    __m256 kv[NK];
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) kv[c] = _mm256_load_ps(ktd + 8 * c);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 qd = _mm256_broadcast_ss(q[r] + d);
      #pragma GCC unroll 8
      for (int c = 0; c < NK; ++c) acc[r][c] = _mm256_fmadd_ps(qd, kv[c], acc[r][c]);
    }
  }
  const __m256 scale = _mm256_set1_ps(hd.scale);
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) _mm256_store_ps(p + r * kKeyBlock + 8 * c, _mm256_mul_ps(acc[r][c], scale));
}

// out[i0 + r][d0 .. d0 + 8·NV) = α_r · out (or 0 when `first`) + Σ_{j < nk} p[r][j] V[keys[j]].
// With kPartial the last vector holds fewer than 8 dims, selected by `last`.
template <int R, int NV, bool kPartial>
void pv_tile(const Head& hd, int i0, int d0, __m256i last, const int32_t* keys, int nk, const float* p,
             const float* alpha, bool first) {
  float* o[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) o[r] = hd.out + static_cast<size_t>(i0 + r) * hd.ld_out + d0;
  __m256 acc[R][NV];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const __m256 a = _mm256_set1_ps(alpha[r]);
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      if (first) {
        acc[r][c] = _mm256_setzero_ps();
      } else {
        const float* src = o[r] + 8 * c;
        acc[r][c] = _mm256_mul_ps(kPartial && c == NV - 1 ? _mm256_maskload_ps(src, last) : _mm256_loadu_ps(src), a);
      }
    }
  }
  const float* v0 = hd.v + d0;
  for (int j = 0; j < nk; ++j) {
    const float* v = v0 + static_cast<size_t>(keys[j]) * hd.ld_qkv;
    __m256 vv[NV];
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c)
      vv[c] = kPartial && c == NV - 1 ? _mm256_maskload_ps(v + 8 * c, last) : _mm256_loadu_ps(v + 8 * c);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 pj = _mm256_broadcast_ss(p + r * kKeyBlock + j);
      #pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm256_fmadd_ps(pj, vv[c], acc[r][c]);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      if (kPartial && c == NV - 1)
        _mm256_maskstore_ps(o[r] + 8 * c, last, acc[r][c]);
      else
        _mm256_storeu_ps(o[r] + 8 * c, acc[r][c]);
    }
}

using ScoreTileFn = void (*)(const Head&, int, const float*, float*);
using PvTileFn = void (*)(const Head&, int, int, __m256i, const int32_t*, int, const float*, const float*, bool);

template <int NK>
constexpr ScoreTileFn kScoreTiles[kRows + 1] = {nullptr,           score_tile<1, NK>, score_tile<2, NK>,
                                                score_tile<3, NK>, score_tile<4, NK>, score_tile<5, NK>,
                                                score_tile<6, NK>};
template <int NV, bool kPartial>
constexpr PvTileFn kPvTiles[kRows + 1] = {nullptr,
                                          pv_tile<1, NV, kPartial>,
                                          pv_tile<2, NV, kPartial>,
                                          pv_tile<3, NV, kPartial>,
                                          pv_tile<4, NV, kPartial>,
                                          pv_tile<5, NV, kPartial>,
                                          pv_tile<6, NV, kPartial>};

void scores(const Head& hd, int i0, int rows, const float* kt, int nk, float* p) {
  for (int c0 = 0; c0 < nk; c0 += kKeyTile) {
    if (nk - c0 > 8)
      kScoreTiles<2>[rows](hd, i0, kt + c0, p + c0);
    else
      kScoreTiles<1>[rows](hd, i0, kt + c0, p + c0);
  }
}

void accumulate_pv(const Head& hd, int i0, int rows, const int32_t* keys, int nk, const float* p,
                   const float* alpha, bool first) {
  for (int d0 = 0; d0 < hd.dim; d0 += kDimTile) {
    const int left = hd.dim - d0;
    if (left >= 16)
      kPvTiles<2, false>[rows](hd, i0, d0, lanes_avx2(8), keys, nk, p, alpha, first);
    else if (left > 8)
      kPvTiles<2, true>[rows](hd, i0, d0, lanes_avx2(left - 8), keys, nk, p, alpha, first);
    else if (left == 8)
      kPvTiles<1, false>[rows](hd, i0, d0, lanes_avx2(8), keys, nk, p, alpha, first);
    else
      kPvTiles<1, true>[rows](hd, i0, d0, lanes_avx2(left), keys, nk, p, alpha, first);
  }
}

ENCRT_X86_INLINE float exp_scalar(float x) {
  return _mm256_cvtss_f32(exp_avx2(_mm256_set1_ps(x)));
}

// Online softmax step for `rows` rows over a block of nk scores: p := exp(s - m'), the running
// max and sum updated, alpha[r] = exp(m - m') the factor for the accumulator (unused when first).
// `pairs` (masked scores, -inf where a pair is masked): a row whose max is still -inf takes
// exp(s - 0) = 0 for its masked scores, and alpha = 0 while it had no key (its sum and
// accumulator are 0), where the plain path would compute -inf - (-inf).
void softmax_block(int i0, int rows, int nk, bool first, bool pairs, const Scratch& t, float* alpha) {
  const int nv = (nk + 7) / 8;
  const __m256 tail = _mm256_castsi256_ps(lanes_avx2(nk - 8 * (nv - 1)));
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  for (int r = 0; r < rows; ++r) {
    float* pr = t.p + r * kKeyBlock;
    __m256 mx = neg_inf;
    for (int c = 0; c + 1 < nv; ++c) mx = _mm256_max_ps(mx, _mm256_load_ps(pr + 8 * c));
    mx = _mm256_max_ps(mx, _mm256_blendv_ps(neg_inf, _mm256_load_ps(pr + 8 * (nv - 1)), tail));
    const float block_max = reduce_max_avx2(mx);
    const int i = i0 + r;
    const float m_old = first ? -INFINITY : t.row_max[i];
    const float m_new = block_max > m_old ? block_max : m_old;
    const __m256 vm = _mm256_set1_ps(pairs && m_new == -INFINITY ? 0.0f : m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int c = 0; c < nv; ++c) {
      __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(_mm256_load_ps(pr + 8 * c), vm));
      if (c == nv - 1) e = _mm256_and_ps(e, tail);
      _mm256_store_ps(pr + 8 * c, e);
      sum = _mm256_add_ps(sum, e);
    }
    const float block_sum = reduce_add_avx2(sum);
    if (first) {
      alpha[r] = 0.0f;
      t.row_sum[i] = block_sum;
    } else {
      alpha[r] = pairs && m_old == -INFINITY ? 0.0f : exp_scalar(m_old - m_new);
      t.row_sum[i] = t.row_sum[i] * alpha[r] + block_sum;
    }
    t.row_max[i] = m_new;
  }
}

// p := exp(s - m) · inv_sum with the final max and 1/sum, as the reference's e · (1/Σe).
void probabilities_block(int i0, int rows, int nk, bool pairs, const Scratch& t) {
  const int nv = (nk + 7) / 8;
  const __m256 tail = _mm256_castsi256_ps(lanes_avx2(nk - 8 * (nv - 1)));
  for (int r = 0; r < rows; ++r) {
    float* pr = t.p + r * kKeyBlock;
    const float m = t.row_max[i0 + r];
    const __m256 vm = _mm256_set1_ps(pairs && m == -INFINITY ? 0.0f : m);
    const __m256 inv = _mm256_set1_ps(t.row_sum[i0 + r]);
    for (int c = 0; c < nv; ++c) {
      __m256 e = _mm256_mul_ps(exp_nonpositive_avx2(_mm256_sub_ps(_mm256_load_ps(pr + 8 * c), vm)), inv);
      if (c == nv - 1) e = _mm256_and_ps(e, tail);
      _mm256_store_ps(pr + 8 * c, e);
    }
  }
}

// Each output row (the unnormalized accumulator) times 1 / its sum.
void normalize_rows(const Head& hd, const Scratch& t) {
  const int full = hd.dim & ~7;
  const __m256i tail = lanes_avx2(hd.dim - full);
  for (int i = 0; i < hd.seq; ++i) {
    float* o = hd.out + static_cast<size_t>(i) * hd.ld_out;
    const __m256 inv = _mm256_set1_ps(1.0f / t.row_sum[i]);
    for (int d = 0; d < full; d += 8) _mm256_storeu_ps(o + d, _mm256_mul_ps(_mm256_loadu_ps(o + d), inv));
    if (full < hd.dim) _mm256_maskstore_ps(o + full, tail, _mm256_mul_ps(_mm256_maskload_ps(o + full, tail), inv));
  }
}

#include "kernels/x86/attention_f32_pairs.inc"
#include "kernels/x86/attention_f32_heads.inc"

}  // namespace

size_t f32_attention_scratch__avx2(int seq, int head_dim) { return scratch_bytes(seq, head_dim); }

void f32_attention__avx2(const AttentionArgs& a, int b, int h, void* scratch) { attention_head(a, b, h, scratch); }

void f32_exp__avx2(int n, const float* x, float* y) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = lanes_avx2(n - i);
    _mm256_maskstore_ps(y + i, mask, exp_avx2(_mm256_maskload_ps(x + i, mask)));
  }
}

void f32_exp_nonpositive__avx2(int n, const float* x, float* y) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp_nonpositive_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = lanes_avx2(n - i);
    _mm256_maskstore_ps(y + i, mask, exp_nonpositive_avx2(_mm256_maskload_ps(x + i, mask)));
  }
}

}  // namespace encrt::kernels::x86
