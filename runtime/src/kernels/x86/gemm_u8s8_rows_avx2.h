// The driver of the AVX2 int8 GEMMs without VNNI (gemm_u8s8_widened_avx2.cpp,
// gemm_u8s8_signed_avx2.cpp): both read their activations re-encoded, two bytes per element, so
// that the inner loop is nothing but the multiply-adds of its route (the register-only probes
// of benchmarks/peak_probe/peak_probe_x86.cpp time exactly those instructions):
//   widened  q as int16 (one vpbroadcastq gives a k-group's 4 values), for vpmaddwd;
//   signed   per k-group [|a'| × 4][a' × 4] with a' = q - 128, for vpsignb + vpmaddubsw.
// Each row is encoded once per call into the caller's workspace (QuantizedRows::workspace,
// qu8s8_encoded_rows_workspace(K) bytes, x86_kernels.h), a row tile at a time; the weights stay
// where the model file maps them. Loop order: row tiles, then the tile's columns (half a panel
// or one), the whole depth in registers: the tile's encoded rows (8·K bytes each) stay in L1
// while the weights stream through from L2, a fraction of the bytes per product that re-reading
// the rows for every column block would take (+3-6% on Zen 4). (From kWidenedCopyMinRows rows
// on, the widened kernel runs its own loop order instead, with its weights widened once per
// block of rows: gemm_u8s8_widened_avx2.cpp; it shares tile() below.)
//
// A Route provides:
//   kMR, kNR              register tile (kNR: 8 = half a panel, or 16 = one panel)
//   kZeroPointBias        exact = acc + (kZeroPointBias - zp[m]) · w_sum[n]  (0 or 128)
//   encode_row(q, K4, out)  one row of K4 k-groups of uint8 into 8·K4 bytes
//   accumulate<MR>(tile, acc)  acc[r · (kNR / 8) + j]: int32 sums of row r, columns 8j..8j+7
// Include only from files built with AVX2 flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/tiling.h"
#include "kernels/x86/x86_avx2_common.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {
namespace {
namespace encoded_rows {

struct Tile {
  int K4;               // k-groups of 4
  const uint8_t* a;     // encoded row m0 of the tile
  size_t lda;           // encoded bytes per row: kEncodedGroupBytes · K4
  const void* w;        // k-group 0 of the tile's weights, as the route reads them: the columns
                        // inside their panel (int8), or a widened copy (int16, the widened route)
};

template <class Route, int MR>
void tile(const Tile& t, const QuantizedRows& A, int m0, int n0, int cols, const int32_t* w_sum,
          const float* w_scale, float* C, size_t ldc, const GemmEpilogue& ep) {
  constexpr int kVecs = Route::kNR / 8;
  alignas(32) __m256i acc[MR * kVecs];
  Route::template accumulate<MR>(t, acc);
  // Column by column: the column vectors (w_sum, w_scale) loaded once for the tile's rows, the
  // row factors' pointers in locals. Per output, in the reference's order: float(acc + (bias -
  // zp)·w_sum) · scale · w_scale, then the epilogue (finish_store_avx2).
  const float* a_scale = A.scale;
  const int32_t* a_zp = A.zero_point;
#pragma GCC unroll 2
  for (int j = 0; j < kVecs; ++j) {
    const int valid = cols - 8 * j;
    if (valid <= 0) break;
    const int n = n0 + 8 * j;
    const bool full = valid >= 8;
    const __m256i mask = lanes_avx2(valid);
    const __m256i ws = full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w_sum + n)) : _mm256_maskload_epi32(w_sum + n, mask);
    const __m256 wscale = full ? _mm256_loadu_ps(w_scale + n) : _mm256_maskload_ps(w_scale + n, mask);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const int m = m0 + r;
      const __m256i exact = _mm256_add_epi32(acc[r * kVecs + j], _mm256_mullo_epi32(_mm256_set1_epi32(Route::kZeroPointBias - a_zp[m]), ws));
      const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(exact), _mm256_set1_ps(a_scale[m])), wscale);
      finish_store_avx2(v, ep, m, n, full, mask, C + static_cast<size_t>(m) * ldc);
    }
  }
}

template <class Route>
using TileFn = void (*)(const Tile&, const QuantizedRows&, int, int, int, const int32_t*, const float*, float*,
                        size_t, const GemmEpilogue&);

template <class Route, int... MR>
constexpr TileFn<Route> tile_for(int mr, std::integer_sequence<int, MR...>) {
  TileFn<Route> fn = nullptr;
  ((fn = (mr == MR + 1) ? tile<Route, MR + 1> : fn), ...);
  return fn;
}

template <class Route>
void gemm(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum, const float* w_scale,
          float* C, int ldc, const GemmEpilogue& ep) {
  static_assert(Route::kMR <= kEncodedRows, "the workspace holds a tile's rows");
  static_assert(Route::kNR == 8 || Route::kNR == kPanelN, "a tile is half a panel or one");
  if (M <= 0 || N <= 0) return;
  Tile t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.lda = static_cast<size_t>(kEncodedGroupBytes) * t.K4;
  t.a = A.workspace;
  const size_t panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  for (int m0 = 0; m0 < M;) {
    const int mr = next_tile_rows(M - m0, Route::kMR);
    for (int r = 0; r < mr; ++r)
      Route::encode_row(A.data + static_cast<size_t>(m0 + r) * A.ld, t.K4, A.workspace + static_cast<size_t>(r) * t.lda);
    const TileFn<Route> fn = tile_for<Route>(mr, std::make_integer_sequence<int, Route::kMR>{});
    for (int n0 = 0; n0 < N; n0 += Route::kNR) {
      const int cols = N - n0 < Route::kNR ? N - n0 : Route::kNR;
      t.w = W + static_cast<size_t>(n0 / kPanelN) * panel_bytes + (n0 % kPanelN) * kPanelK;
      fn(t, A, m0, n0, cols, w_sum, w_scale, C, static_cast<size_t>(ldc), ep);
    }
    m0 += mr;
  }
}

// The weights a tile's inner loop reads kWeightPrefetchBytes ahead (16 k-groups, running into
// the next panel at the end of this one), asked for once per k-group: in a model each layer's
// weights come from L3 or memory on the first row tile's pass, where the hardware prefetchers
// alone left MiniLM's int8 GEMMs 8% slower than on weights hot in L2. Measured on a Xeon VM
// (AVX2 level, M128 MiniLM linears with their epilogues, weights cold): 23.8 -> 22.8 ms per run
// for the widened kernel, 22.9 -> 21.7 for the signed one; 512 bytes gained nothing, 2048 and
// 4096 as much as 1024; no change with the weights hot. A prefetch past the weights' end is
// harmless (it never faults).
constexpr size_t kWeightPrefetchBytes = 1024;
ENCRT_X86_INLINE void prefetch_weights(const int8_t* w) {
  _mm_prefetch(reinterpret_cast<const char*>(w) + kWeightPrefetchBytes, _MM_HINT_T0);
}

ENCRT_X86_INLINE __m256i broadcast_4_bytes(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}
ENCRT_X86_INLINE __m256i broadcast_8_bytes(const uint8_t* p) {
  long long v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi64x(v);
}

}  // namespace encoded_rows
}  // namespace
}  // namespace encrt::kernels::x86
