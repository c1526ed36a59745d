// AmxEngine: the two integer products of the int8 attention (attention_i8_avx512.h) on AMX tiles,
// as a template over the tile operations (class Tiles: load_config, load, dpbssd, dpbsud, store,
// zero, release; amx_native_tiles.h runs them on the CPU, the tests on emulated tiles). The
// quantization and the softmax are attention_i8_avx512.h's, and both products are exact int32 sums
// of the same integers, so qs8_attention__amx gives the avx512vnni kernel's floats bit for bit.
// Include only from files built with AVX-512 flags (attention_i8_avx512.h says which).
//
// Why: at head_dim 32 the products are about half of the VNNI kernel's vector instructions (one
// vpdpbusd and one broadcast per 4 depths of a 16-query × 1-key column), and at seq 512 that
// kernel was 53% of MiniLM int8 at the amx level. A tdpbssd does 16 × 16 × 32 of MiniLM's
// products in one instruction, leaving the vector units to the softmax. Measured, the softmax
// bounds both kernels: the tiles save 12% of the attention at seq 128 and 512 (README, the AMX
// measurements), not the half the instruction count suggests.
//
// Tiles (palette 1, configured once per head, since the shapes follow head_dim D <= 64; G = D/4
// rounded up, the 4-byte depth groups):
//   tmm0       Qᵀ  G rows × 64 bytes: q_panel as it lies, row g = depth group g of the 16 queries
//                  (4 signed bytes each). The queries are quantized without the +128 of vpdpbusd.
//   tmm1, tmm2 K   16 keys × 4G bytes, the quantized K rows in place (stride row_bytes).
//   tmm3       Uᵀ  16 rows × 64 bytes: 16 key groups of u as the softmax writes them, row g = the
//                  16 queries' dwords of 4 keys' u (unsigned).
//   tmm4, tmm5 Vᵀ  16 dims × 64 keys: quantized V transposed, values[d][key] (stride value_stride).
//   tmm6, tmm7 C   16 × 16 int32.
// Scores: tdpbssd C, K, Qᵀ gives C[key][query] = Σ_d k_j,d q_i,d (s8 × s8), exactly the VNNI
// kernel's accumulator for key j with the queries in lanes: stored into y as int32, then scaled
// into the base-2 exponents in place, two key tiles a step, each step's scaling overlapping the
// next step's tile work. P·V: tdpbsud C, Vᵀ, Uᵀ gives C[dim][query] = Σ_j v_j,d u_ij (s8 × u8)
// over 64 keys a step, two 16-dim tiles at once; stored, scaled by s_p (a vector over the
// queries) and transposed into the output rows.
// Key slots past the scores' (up to 64 past the last multiple of 16 that a P·V step covers) hold
// zero V and zero u, so they add nothing.
#pragma once

#include "kernels/x86/amx_tile_config.h"
#include "kernels/x86/attention_i8_avx512.h"

namespace encrt::kernels::x86 {
namespace {

// head_dim up to this runs on tiles (its depth groups fit one tile row); above, the VNNI kernel.
constexpr int kAmxAttentionMaxHeadDim = amx::kTileRowBytes;
// Sequences shorter than this run the VNNI kernel. Each query block pays a chain of latencies
// that nothing overlaps here (vector stores of u, a tile load that waits for them, tdpbsud, a tile
// store, vector loads that wait for it; the same for the scores): about 750 cycles a block,
// measured as the difference at seq 16 and 32. Measured on a 2-core Sapphire Rapids VM, one
// MiniLM layer's 12 heads (encrt_kernel_bench attention_i8, best of 3), amx against avx512vnni:
// seq 16 8.45 vs 5.52 µs, 32 19.3 vs 13.5, 64 39.1 vs 36.4, 128 104 vs 118, 512 1325 vs 1509.
constexpr int kAmxAttentionMinSeq = 128;

inline bool amx_attention_runs(int seq, int head_dim) {
  return seq >= kAmxAttentionMinSeq && head_dim <= kAmxAttentionMaxHeadDim;
}

// out[r] = column r of the 16 rows v[0..16): a 16 × 16 float transpose in four shuffle stages.
ENCRT_X86_INLINE void transpose16x16(const __m512* v, __m512* out) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {  // per 128-bit lane L: rows 2i, 2i+1 interleaved
    t[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane L: column 4L + c of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
  }
  // Column 4L + c: lane L of u[c], u[4 + c], u[8 + c], u[12 + c] into 128-bit lanes 0-3.
  for (int c = 0; c < 4; ++c) {
    const __m512 p = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), q = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
    const __m512 r = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88), s = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
    out[c] = _mm512_shuffle_f32x4(p, r, 0x88);
    out[4 + c] = _mm512_shuffle_f32x4(q, s, 0x88);
    out[8 + c] = _mm512_shuffle_f32x4(p, r, 0xdd);
    out[12 + c] = _mm512_shuffle_f32x4(q, s, 0xdd);
  }
}

template <class Tiles>
class AmxEngine {
 public:
  static constexpr int kQueryOffset = 0;  // tdpbssd takes signed queries
  static constexpr bool kKeySums = false;
  static constexpr size_t kStageBytes = 2 * amx::kTileBytes;  // the two P·V C tiles
  // A P·V step reads 16 key groups of u, so the last may reach 16 groups past the slots (zeroed).
  static constexpr int kGroupsPastSlots = kLanes;
  // Bytes per row of Vᵀ: the key slots and the 64 keys a last P·V step may cover past them.
  static size_t value_stride(const Dims& d) { return static_cast<size_t>(d.key_slots) + amx::kTileRowBytes; }
  static size_t value_bytes(const Dims& d) { return static_cast<size_t>(d.dim_panels) * kLanes * value_stride(d); }

  explicit AmxEngine(Tiles& tiles) : tiles_(tiles) {}

  void begin_head(const Dims& d) {
    amx::TileConfig c = amx::empty_tile_config();
    amx::set_tile_shape(c, kQ, d.groups, amx::kTileRowBytes);
    amx::set_tile_shape(c, kK0, kLanes, 4 * d.groups);
    amx::set_tile_shape(c, kK1, kLanes, 4 * d.groups);
    const int full[] = {kU, kV0, kV1, kC0, kC1};
    for (int tile : full) amx::set_tile_shape(c, tile, amx::kTileRows, amx::kTileRowBytes);
    tiles_.load_config(c);
  }
  void end_head() { tiles_.release(); }

  // values[16p + 4m + c][j0 + 4·g4 + kk] = V[key j0 + 4·g4 + kk][16p + 4m + c]: the interleaved
  // dwords of 4 keys (interleave_keys4) transposed 4 × 4, 16 keys of each dim row at a time.
  template <int kD>
  void store_values(const Dims& dm, const Scratch& t, int j0) {
    const size_t rb = static_cast<size_t>(dm.row_bytes), ld = value_stride(dm);
    for (int p = 0; p < (kD ? kD / 16 : dm.dim_panels); ++p) {
      __m128i quads[4][4];  // [4 keys g4][dims 4m ..]
      for (int g4 = 0; g4 < 4; ++g4) interleave_keys4(t.v_rows + static_cast<size_t>(4 * g4) * rb, rb, p, quads[g4]);
      for (int m = 0; m < 4; ++m) {
        const __m128i a01_lo = _mm_unpacklo_epi32(quads[0][m], quads[1][m]), a01_hi = _mm_unpackhi_epi32(quads[0][m], quads[1][m]);
        const __m128i a23_lo = _mm_unpacklo_epi32(quads[2][m], quads[3][m]), a23_hi = _mm_unpackhi_epi32(quads[2][m], quads[3][m]);
        const __m128i rows[4] = {_mm_unpacklo_epi64(a01_lo, a23_lo), _mm_unpackhi_epi64(a01_lo, a23_lo),
                                 _mm_unpacklo_epi64(a01_hi, a23_hi), _mm_unpackhi_epi64(a01_hi, a23_hi)};
        for (int c = 0; c < 4; ++c)
          _mm_storeu_si128(reinterpret_cast<__m128i*>(t.values + static_cast<size_t>(16 * p + 4 * m + c) * ld + j0), rows[c]);
      }
    }
  }
  // Zero V for the key slots from `slots` to the row's end.
  void finish_values(const Dims& dm, const Scratch& t, int slots) {
    const size_t ld = value_stride(dm);
    for (int d = 0; d < dm.dim_panels * kLanes; ++d) std::memset(t.values + d * ld + slots, 0, ld - slots);
  }

  template <int kD>
  void scores(const Dims& dm, const Scratch& t, int s_lo, int slots, __m512 c_q, __m512* running_max) {
    const size_t rb = static_cast<size_t>(dm.row_bytes);
    int32_t* acc = reinterpret_cast<int32_t*>(t.y);
    tiles_.template load<kQ>(t.q_panel, amx::kTileRowBytes);
    int prev = -1, prev_tiles = 0;
    for (int j0 = s_lo; j0 < slots; j0 += 2 * kLanes) {
      const bool two = slots - j0 > kLanes;
      tiles_.template load<kK0>(t.k_rows + static_cast<size_t>(j0) * rb, rb);
      tiles_.template zero<kC0>();
      tiles_.template dpbssd<kC0, kK0, kQ>();
      if (two) {
        tiles_.template load<kK1>(t.k_rows + static_cast<size_t>(j0 + kLanes) * rb, rb);
        tiles_.template zero<kC1>();
        tiles_.template dpbssd<kC1, kK1, kQ>();
      }
      if (prev >= 0) scale_scores(t, prev, prev_tiles, c_q, running_max);
      tiles_.template store<kC0>(acc + static_cast<size_t>(j0) * kLanes, amx::kTileRowBytes);
      if (two) tiles_.template store<kC1>(acc + static_cast<size_t>(j0 + kLanes) * kLanes, amx::kTileRowBytes);
      prev = j0;
      prev_tiles = two ? 2 : 1;
    }
    if (prev >= 0) scale_scores(t, prev, prev_tiles, c_q, running_max);
  }

  void pv(const Head& hd, const Dims& dm, const Scratch& t, int i0, int n, int g_begin, int pv_groups, int written) {
    const int steps = ceil_div(pv_groups - g_begin, kLanes);
    for (int g = written; g < g_begin + steps * kLanes; ++g)
      _mm512_store_si512(t.u + static_cast<size_t>(g) * kLanes, _mm512_setzero_si512());
    const size_t ld = value_stride(dm);
    for (int p = 0; p < dm.dim_panels; p += 2) {
      const bool two = p + 1 < dm.dim_panels;
      const int8_t* v0 = t.values + static_cast<size_t>(kLanes * p) * ld;
      const int8_t* v1 = v0 + kLanes * ld;
      tiles_.template zero<kC0>();
      if (two) tiles_.template zero<kC1>();
      for (int s = 0; s < steps; ++s) {
        const int g = g_begin + s * kLanes;
        tiles_.template load<kU>(t.u + static_cast<size_t>(g) * kLanes, amx::kTileRowBytes);
        tiles_.template load<kV0>(v0 + 4 * g, ld);
        tiles_.template dpbsud<kC0, kV0, kU>();
        if (two) {
          tiles_.template load<kV1>(v1 + 4 * g, ld);
          tiles_.template dpbsud<kC1, kV1, kU>();
        }
      }
      tiles_.template store<kC0>(t.stage, amx::kTileRowBytes);
      if (two) tiles_.template store<kC1>(t.stage + kLanes * kLanes, amx::kTileRowBytes);
      write_out(hd, dm, t, i0, n, p, t.stage);
      if (two) write_out(hd, dm, t, i0, n, p + 1, t.stage + kLanes * kLanes);
    }
  }

 private:
  static constexpr int kQ = 0, kK0 = 1, kK1 = 2, kU = 3, kV0 = 4, kV1 = 5, kC0 = 6, kC1 = 7;
  static_assert(kC1 < amx::kTiles, "palette 1 has 8 tile registers");

  // The int32 scores of keys [j0, j0 + 16 · tiles) in y, in place, into the exponents y_j = S ·
  // log2 e + log2 s_v - C, folding each into running_max[j % 4]: score_tile's arithmetic, in its
  // order. Unrolled per 16 keys, so that the four maxima stay in registers.
  static void scale_scores(const Scratch& t, int j0, int tiles, __m512 c_q, __m512* running_max) {
    __m512 m[4] = {running_max[0], running_max[1], running_max[2], running_max[3]};
    for (int tile = 0; tile < tiles; ++tile) {
      const int k0 = j0 + tile * kLanes;
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; ++j) {
        float* y = t.y + static_cast<size_t>(k0 + j) * kLanes;
        const __m512 s = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(y)), c_q);
        const __m512 yj = _mm512_fmadd_ps(s, _mm512_set1_ps(t.k_scale[k0 + j]), _mm512_set1_ps(t.v_log2[k0 + j]));
        m[j % 4] = _mm512_max_ps(m[j % 4], yj);
        _mm512_store_ps(y, yj);
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) running_max[i] = m[i];
  }

  // out[i0 + r][16p + i] = float(c[i][r]) · s_p[r] for the block's queries r < n and dims < D.
  static void write_out(const Head& hd, const Dims& dm, const Scratch& t, int i0, int n, int p, const int32_t* c) {
    const __m512 sp = _mm512_load_ps(t.s_p);
    __m512 rows[kLanes], cols[kLanes];
    for (int i = 0; i < kLanes; ++i) rows[i] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c + i * kLanes)), sp);
    transpose16x16(rows, cols);
    const int d0 = kLanes * p;
    const __mmask16 dims = lanes_avx512(dm.dim - d0);
    for (int r = 0; r < n; ++r) _mm512_mask_storeu_ps(hd.out + static_cast<size_t>(i0 + r) * hd.ld_out + d0, dims, cols[r]);
  }

  Tiles& tiles_;
};

}  // namespace
}  // namespace encrt::kernels::x86
