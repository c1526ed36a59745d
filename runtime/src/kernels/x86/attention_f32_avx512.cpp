// f32_attention__avx512: softmax(scale · Q Kᵀ) V for one (sequence, head), fp32, AVX-512.
//
// Loop order (key blocks outside, query tiles inside): the real keys are listed once, then
// taken 64 at a time; a block's K is transposed into scratch (kt[d][key], so that a score tile
// is a small GEMM: a zmm of 16 keys times a broadcast query element), and every tile of up to 8
// query rows is run against it:
//   scores  8 rows × 32 keys in 16 zmm accumulators, stored scaled into a [8][64] buffer;
//   softmax online per row: m' = max(m, block max), p = exp(s - m'), α = exp(m - m'),
//           l' = α·l + Σp (α = 1 exactly while the max stands still);
//   P·V     8 rows × 32 dims in 16 zmm: acc = α · out + Σ_j p_j V_j, read from and written back
//           to the output rows themselves, which hold the unnormalized accumulator until the
//           last block; a final pass multiplies each row by 1/l.
// The [seq, seq] scores never exist: scratch is the key list, m and l per row, the transposed
// block and the tile's probabilities (O(64 · head_dim + seq)). Padded keys never enter the
// loops, so they get probability exactly 0 and cost nothing.
//
// With args.probs the probabilities must be the reference's, so a two-pass variant runs: pass 1
// finds each row's max m and sum l (online, as above, without P·V); pass 2 recomputes the scores,
// writes p = exp(s - m) · (1/l), and accumulates out = Σ_j p_j V_j in the reference's key order.
#include <cmath>
#include <cstring>

#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/exp_avx512.h"
#include "kernels/attention_keys.h"
#include "kernels/attention_pairs.h"
#include "kernels/tiling.h"

namespace encrt::kernels::x86 {
namespace {

constexpr int kRows = 8;        // query rows per tile
constexpr int kKeyBlock = 64;   // keys per transposed block
constexpr int kKeyTile = 32;    // keys per score register tile (2 zmm)
constexpr int kDimTile = 32;    // output dims per P·V register tile (2 zmm)

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

// One (sequence, head): its Q, K, V and output columns, rows 0..seq-1.
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

// kt[d][j] = K[keys[j], d] for j < nk; columns up to the next multiple of 16 are zeroed so the
// last score vector computes on zeros (its lanes are masked off afterwards).
void pack_key_block(const Head& hd, const int32_t* keys, int nk, float* kt) {
  for (int j = 0; j < nk; ++j) {
    const float* k = hd.k + static_cast<size_t>(keys[j]) * hd.ld_qkv;
    for (int d = 0; d < hd.dim; ++d) kt[static_cast<size_t>(d) * kKeyBlock + j] = k[d];
  }
  const int padded = (nk + 15) & ~15;
  for (int d = 0; d < hd.dim; ++d)
    for (int j = nk; j < padded; ++j) kt[static_cast<size_t>(d) * kKeyBlock + j] = 0.0f;
}

// p[r][0 .. 16·NK) = scale · Q[i0 + r] · kt[:, 0 .. 16·NK), R rows.
template <int R, int NK>
void score_tile(const Head& hd, int i0, const float* kt, float* p) {
  const float* q[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) q[r] = hd.q + static_cast<size_t>(i0 + r) * hd.ld_qkv;
  __m512 acc[R][NK];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int d = 0; d < hd.dim; ++d) {
    const float* ktd = kt + static_cast<size_t>(d) * kKeyBlock;
    __m512 kv[NK];
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) kv[c] = _mm512_load_ps(ktd + 16 * c);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 qd = _mm512_set1_ps(q[r][d]);
      #pragma GCC unroll 8
      for (int c = 0; c < NK; ++c) acc[r][c] = _mm512_fmadd_ps(qd, kv[c], acc[r][c]);
    }
  }
  const __m512 scale = _mm512_set1_ps(hd.scale);
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NK; ++c) _mm512_store_ps(p + r * kKeyBlock + 16 * c, _mm512_mul_ps(acc[r][c], scale));
}

// out[i0 + r][d0 .. d0 + 16·NV) = α_r · out (or 0 when `first`) + Σ_{j < nk} p[r][j] V[keys[j]],
// `last` selecting the valid lanes of the last vector.
template <int R, int NV>
void pv_tile(const Head& hd, int i0, int d0, __mmask16 last, const int32_t* keys, int nk, const float* p,
             const float* alpha, bool first) {
  float* o[R];
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r) o[r] = hd.out + static_cast<size_t>(i0 + r) * hd.ld_out + d0;
  const __mmask16 full = static_cast<__mmask16>(0xffff);
  __m512 acc[R][NV];
  if (first) {
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      #pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_ps();
  } else {
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(alpha[r]);
      #pragma GCC unroll 8
      for (int c = 0; c < NV; ++c)
        acc[r][c] = _mm512_mul_ps(_mm512_maskz_loadu_ps(c == NV - 1 ? last : full, o[r] + 16 * c), a);
    }
  }
  const float* v0 = hd.v + d0;
  for (int j = 0; j < nk; ++j) {
    const float* v = v0 + static_cast<size_t>(keys[j]) * hd.ld_qkv;
    __m512 vv[NV];
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) vv[c] = _mm512_maskz_loadu_ps(c == NV - 1 ? last : full, v + 16 * c);
    #pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 pj = _mm512_set1_ps(p[r * kKeyBlock + j]);
      #pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_fmadd_ps(pj, vv[c], acc[r][c]);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    #pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) _mm512_mask_storeu_ps(o[r] + 16 * c, c == NV - 1 ? last : full, acc[r][c]);
}

using ScoreTileFn = void (*)(const Head&, int, const float*, float*);
using PvTileFn = void (*)(const Head&, int, int, __mmask16, const int32_t*, int, const float*, const float*, bool);

template <int NK>
constexpr ScoreTileFn kScoreTiles[kRows + 1] = {nullptr,
                                                score_tile<1, NK>,
                                                score_tile<2, NK>,
                                                score_tile<3, NK>,
                                                score_tile<4, NK>,
                                                score_tile<5, NK>,
                                                score_tile<6, NK>,
                                                score_tile<7, NK>,
                                                score_tile<8, NK>};
template <int NV>
constexpr PvTileFn kPvTiles[kRows + 1] = {nullptr,       pv_tile<1, NV>, pv_tile<2, NV>,
                                          pv_tile<3, NV>, pv_tile<4, NV>, pv_tile<5, NV>,
                                          pv_tile<6, NV>, pv_tile<7, NV>, pv_tile<8, NV>};

// Scores of `rows` query rows against the nk keys of the packed block, into p[r][0 .. nk).
void scores(const Head& hd, int i0, int rows, const float* kt, int nk, float* p) {
  for (int c0 = 0; c0 < nk; c0 += kKeyTile) {
    if (nk - c0 > 16)
      kScoreTiles<2>[rows](hd, i0, kt + c0, p + c0);
    else
      kScoreTiles<1>[rows](hd, i0, kt + c0, p + c0);
  }
}

void accumulate_pv(const Head& hd, int i0, int rows, const int32_t* keys, int nk, const float* p,
                   const float* alpha, bool first) {
  for (int d0 = 0; d0 < hd.dim; d0 += kDimTile) {
    const int left = hd.dim - d0;
    if (left > 16)
      kPvTiles<2>[rows](hd, i0, d0, lanes_avx512(left - 16), keys, nk, p, alpha, first);
    else
      kPvTiles<1>[rows](hd, i0, d0, lanes_avx512(left), keys, nk, p, alpha, first);
  }
}

ENCRT_X86_INLINE float exp_scalar(float x) { return _mm512_cvtss_f32(exp_avx512(_mm512_set1_ps(x))); }

// Online softmax step for `rows` rows over a block of nk scores: p := exp(s - m'), the running
// max and sum updated, alpha[r] = exp(m - m') the factor for the accumulator (unused when first).
// `pairs` (masked scores, -inf where a pair is masked): a row whose max is still -inf takes
// exp(s - 0) = 0 for its masked scores, and alpha = 0 while it had no key (its sum and
// accumulator are 0), where the plain path would compute -inf - (-inf).
void softmax_block(int i0, int rows, int nk, bool first, bool pairs, const Scratch& t, float* alpha) {
  const int nv = (nk + 15) / 16;
  const __mmask16 tail = lanes_avx512(nk - 16 * (nv - 1));
  for (int r = 0; r < rows; ++r) {
    float* pr = t.p + r * kKeyBlock;
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int c = 0; c + 1 < nv; ++c) mx = _mm512_max_ps(mx, _mm512_load_ps(pr + 16 * c));
    mx = _mm512_mask_max_ps(mx, tail, mx, _mm512_load_ps(pr + 16 * (nv - 1)));
    const float block_max = _mm512_reduce_max_ps(mx);
    const int i = i0 + r;
    const float m_old = first ? -INFINITY : t.row_max[i];
    const float m_new = block_max > m_old ? block_max : m_old;
    const __m512 vm = _mm512_set1_ps(pairs && m_new == -INFINITY ? 0.0f : m_new);
    __m512 sum = _mm512_setzero_ps();
    for (int c = 0; c < nv; ++c) {
      __m512 e = exp_avx512(_mm512_sub_ps(_mm512_load_ps(pr + 16 * c), vm));
      if (c == nv - 1) e = _mm512_maskz_mov_ps(tail, e);
      _mm512_store_ps(pr + 16 * c, e);
      sum = _mm512_add_ps(sum, e);
    }
    const float block_sum = _mm512_reduce_add_ps(sum);
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

// Probabilities of `rows` rows over a block with the final max and 1/sum:
// p := exp(s - m) · inv_sum, as the reference's e · (1/Σe).
void probabilities_block(int i0, int rows, int nk, bool pairs, const Scratch& t) {
  const int nv = (nk + 15) / 16;
  const __mmask16 tail = lanes_avx512(nk - 16 * (nv - 1));
  for (int r = 0; r < rows; ++r) {
    float* pr = t.p + r * kKeyBlock;
    const float m = t.row_max[i0 + r];
    const __m512 vm = _mm512_set1_ps(pairs && m == -INFINITY ? 0.0f : m);
    const __m512 inv = _mm512_set1_ps(t.row_sum[i0 + r]);
    for (int c = 0; c < nv; ++c) {
      __m512 e = _mm512_mul_ps(exp_avx512(_mm512_sub_ps(_mm512_load_ps(pr + 16 * c), vm)), inv);
      if (c == nv - 1) e = _mm512_maskz_mov_ps(tail, e);
      _mm512_store_ps(pr + 16 * c, e);
    }
  }
}

// Each output row (the unnormalized accumulator) times 1 / its sum.
void normalize_rows(const Head& hd, const Scratch& t) {
  const int full = hd.dim & ~15;
  const __mmask16 tail = lanes_avx512(hd.dim - full);
  for (int i = 0; i < hd.seq; ++i) {
    float* o = hd.out + static_cast<size_t>(i) * hd.ld_out;
    const __m512 inv = _mm512_set1_ps(1.0f / t.row_sum[i]);
    for (int d = 0; d < full; d += 16) _mm512_storeu_ps(o + d, _mm512_mul_ps(_mm512_loadu_ps(o + d), inv));
    if (full < hd.dim) _mm512_mask_storeu_ps(o + full, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, o + full), inv));
  }
}

#include "kernels/x86/attention_f32_pairs.inc"
#include "kernels/x86/attention_f32_heads.inc"

}  // namespace

size_t f32_attention_scratch__avx512(int seq, int head_dim) { return scratch_bytes(seq, head_dim); }

void f32_attention__avx512(const AttentionArgs& a, int b, int h, void* scratch) { attention_head(a, b, h, scratch); }

void f32_exp__avx512(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 16) {
    const __mmask16 mask = lanes_avx512(n - i);
    _mm512_mask_storeu_ps(y + i, mask, exp_avx512(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

}  // namespace encrt::kernels::x86
