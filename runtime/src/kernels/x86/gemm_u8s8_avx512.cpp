// qu8s8_gemm_6x32__avx512: uint8 activations × int8 weights (PanelN16K4) with AVX-512BW but no
// VNNI, exact, on the widened route of gemm_u8s8_widened_avx2.cpp: vpmaddubsw is avoided (its
// int16 pairwise sums saturate); both operands are widened to int16 and multiplied by vpmaddwd
// into int32:
//   weights: 32 bytes = 8 columns × 4 k of a panel's k-group → vpmovsxbw → 32 int16;
//   activations: each row tile's rows widened to int16 once (into QuantizedRows::workspace,
//                qu8s8_encoded_rows_workspace(K) bytes), a k-group's 4 values one vpbroadcastq;
//   vpmaddwd → per column two int32 partial sums (k0·k1 and k2·k3), accumulated by vpaddd.
// Register tile: 6 rows × 32 columns (two panels) = 24 zmm accumulators + 4 weights + 1
// activation vector. At the end, one vpermt2d pair per 16 columns folds the partial sums.
//
// Row tiles outside, 32-column blocks inside (the tile's widened rows stay in L1). AVX-512 has no
// vpsignb, and on the cores with AVX-512 but no VNNI (Skylake-SP) vpmaddwd issues on the same
// two ports as vpmaddubsw, so the signed route would only add instructions there.
//
// Epilogue as in the reference: float(acc - zp[m]·w_sum[n]) · scale[m] · w_scale[n], + bias,
// activation, + residual.
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

#include <cstring>

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 6;
constexpr int kNP = 2;  // panels (16 columns each) per tile

struct TileArgs {
  int K4;
  const uint8_t* a;  // the tile's rows widened to int16 (the workspace)
  size_t lda;
  const int8_t* w;   // first panel of the tile
  size_t panel_bytes;
  const float* a_scale;
  const int32_t* a_zp;
  const int32_t* w_sum;
  const float* w_scale;
  float* C;
  size_t ldc;
  int m0, n0;
  int last_cols;     // valid columns in the tile's last panel, 1..16
  const GemmEpilogue* ep;
};

// A k-group of an encoded row (4 int16) in every 64-bit lane.
ENCRT_X86_INLINE __m512i broadcast_i16x4(const uint8_t* p) {
  long long v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi64(v);
}

// A row's 4·K4 bytes as int16 (the widened route's encoding, gemm_u8s8_rows_avx2.h): 8·K4 bytes.
void encode_row(const uint8_t* q, int K4, uint8_t* out) {
  const int n = 4 * K4;
  int i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(out + 2 * i, _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i))));
  for (; i < n; ++i) {
    const uint16_t v = q[i];
    std::memcpy(out + 2 * i, &v, sizeof v);
  }
}

// acc += vpmaddwd(a, w): as one asm block with acc tied in place ("+v") and an early-clobbered
// temporary. With the intrinsics GCC 12 keeps most of the 24 accumulators on the stack and
// reloads / stores them on every step.
ENCRT_X86_INLINE void madd_accumulate(__m512i& acc, __m512i a_i16, __m512i w_i16) {
  __m512i product;
  asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+v"(acc), "=&v"(product) : "v"(a_i16), "v"(w_i16));
}

// Exact int32 column sums of one tile into acc_out[r·NP + p] (16 columns of panel p in order).
// Out of line so that GCC keeps the accumulators in registers.
template <int MR, int NP>
__attribute__((noinline)) void accumulate(const TileArgs& t, __m512i* acc_out) {
  __m512i acc[MR][2 * NP];  // [r][2p + h]: columns 8h..8h+7 of panel p, two partial sums each
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < 2 * NP; ++j) acc[r][j] = _mm512_setzero_si512();
  const uint8_t* a = t.a;
  const size_t lda = t.lda;
  const int8_t* w = t.w;
  const size_t pb = t.panel_bytes;
  for (int k = 0; k < t.K4; ++k) {
    __m512i wv[2 * NP];
#pragma GCC unroll 4
    for (int j = 0; j < 2 * NP; ++j)
      wv[j] = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (j / 2) * pb + (j % 2) * 32)));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512i ab = broadcast_i16x4(a + r * lda);
#pragma GCC unroll 4
      for (int j = 0; j < 2 * NP; ++j) madd_accumulate(acc[r][j], ab, wv[j]);
    }
    a += kEncodedGroupBytes;
    w += kPanelN * kPanelK;
  }
  // Lanes of acc[r][2p + h] are (column 8h + i, partial 0/1) at 2i, 2i + 1: gather the even and
  // the odd lanes of the pair and add them, giving the 16 columns of panel p in order.
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int p = 0; p < NP; ++p) {
      const __m512i s = _mm512_add_epi32(_mm512_permutex2var_epi32(acc[r][2 * p], even, acc[r][2 * p + 1]),
                                         _mm512_permutex2var_epi32(acc[r][2 * p], odd, acc[r][2 * p + 1]));
      _mm512_store_si512(acc_out + r * NP + p, s);
    }
}

template <int MR, int NP>
void tile(const TileArgs& t) {
  __m512i acc[MR * NP];
  accumulate<MR, NP>(t, acc);
  const GemmEpilogue& ep = *t.ep;
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    const int m = t.m0 + r;
    const __m512i zp = _mm512_set1_epi32(t.a_zp[m]);
    const __m512 sc = _mm512_set1_ps(t.a_scale[m]);
    float* c_row = t.C + static_cast<size_t>(m) * t.ldc;
#pragma GCC unroll 2
    for (int p = 0; p < NP; ++p) {
      const int n = t.n0 + 16 * p;
      const __mmask16 mask = p == NP - 1 ? lanes_avx512(t.last_cols) : static_cast<__mmask16>(0xffff);
      const __m512i ws = _mm512_maskz_loadu_epi32(mask, t.w_sum + n);
      const __m512i exact = _mm512_sub_epi32(acc[r * NP + p], _mm512_mullo_epi32(zp, ws));
      __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(exact), sc);
      v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, t.w_scale + n));
      finish_store_avx512(v, ep, m, n, mask, c_row);
    }
  }
}

using TileFn = void (*)(const TileArgs&);
TileFn select_tile(int mr, int np) {
  static_assert(kMR == 6 && kNP == 2, "the table below lists every (rows, panels) pair");
  static const TileFn table[kMR][kNP] = {{tile<1, 1>, tile<1, 2>}, {tile<2, 1>, tile<2, 2>}, {tile<3, 1>, tile<3, 2>},
                                         {tile<4, 1>, tile<4, 2>}, {tile<5, 1>, tile<5, 2>}, {tile<6, 1>, tile<6, 2>}};
  return table[mr - 1][np - 1];
}

}  // namespace

void qu8s8_gemm_6x32__avx512(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                             const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  TileArgs t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  t.a_scale = A.scale;
  t.a_zp = A.zero_point;
  t.w_sum = w_sum;
  t.w_scale = w_scale;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  constexpr int kNR = kNP * kPanelN;
  // Row tiles outside, each tile's rows widened once into the workspace (as the AVX2 kernels,
  // gemm_u8s8_rows_avx2.h), then every 32-column block.
  t.lda = static_cast<size_t>(kEncodedGroupBytes) * t.K4;
  t.a = A.workspace;
  for (int m0 = 0; m0 < M;) {
    const int mr = next_tile_rows(M - m0, kMR);
    for (int r = 0; r < mr; ++r)
      encode_row(A.data + static_cast<size_t>(m0 + r) * A.ld, t.K4, A.workspace + static_cast<size_t>(r) * t.lda);
    t.m0 = m0;
    for (int n0 = 0; n0 < N; n0 += kNR) {
      const int cols = N - n0 < kNR ? N - n0 : kNR;
      const int np = (cols + kPanelN - 1) / kPanelN;
      t.n0 = n0;
      t.last_cols = cols - (np - 1) * kPanelN;
      t.w = W + static_cast<size_t>(n0 / kPanelN) * t.panel_bytes;
      select_tile(mr, np)(t);
    }
    m0 += mr;
  }
}

}  // namespace encrt::kernels::x86
