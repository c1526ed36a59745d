// qu8s8_gemm_8x48__avx512vnni: uint8 activations × int8 weights (PanelN16K4) with vpdpbusd.
//
// Register tile: 8 rows × 48 columns = 24 zmm int32 accumulators, 3 zmm of weights and one
// broadcast of 4 activation bytes; each k-group of 4 costs 3 weight loads, 8 broadcasts and 24
// vpdpbusd. 8 × 48 divides the MiniLM shapes exactly (M = 128 = 16·8, N = 384 = 8·48,
// 1536 = 32·48), where a 6 × 64 tile leaves a thin 2-row remainder.
//
// Loop order: column blocks outside, row tiles inside, the whole depth K in registers. A block's
// weights (48 × K bytes: 18 KiB at K = 384, 72 KiB at K = 1536) stay in L1/L2 while every row
// tile streams through them; during the last row tile of a block the next block's weights are
// prefetched (they usually come from L3: the int8 weights of a whole model live there).
//
// vpdpbusd multiplies u8 × s8 into exact int32 sums (no int16 saturation, unlike vpmaddubsw),
// so the integer part equals the reference's bit for bit; the float epilogue
// (gemm_u8s8_epilogue_avx512.h, shared with the AMX kernel) follows its order:
// float(acc - zp[m]·w_sum[n]) · scale[m] · w_scale[n], + bias, activation, + residual.
#include "kernels/x86/gemm_u8s8_epilogue_avx512.h"
#include "kernels/x86/x86_avx512_common.h"
#include "kernels/x86/x86_kernels.h"
#include "kernels/tiling.h"

#include <cstring>

namespace encrt::kernels::x86 {
namespace {

constexpr int kMR = 8;  // rows per tile
constexpr int kNV = 3;  // zmm (16 columns, one weight panel) per tile row
// In-panel software prefetch distance, in k-groups of 64 bytes per panel. Measured on Zen 4 with
// the weights in L3 (MiniLM shapes): the next-block prefetch is worth up to 4 % (N = 1536), the
// in-panel one about 1 % at M = 16 and nothing measurable at M = 128.
constexpr int kPrefetchGroups = 8;

// A tile: its outputs (U8S8TileOut: m0, n0, last_cols, ...) and its operands.
struct TileArgs : U8S8TileOut {
  int K4;                   // k-groups of 4
  const uint8_t* a;         // row m0 of the quantized activations
  size_t lda;
  const int8_t* w;          // first panel of the block
  size_t panel_bytes;       // K4 * 64
  const int8_t* w_next;     // next block's first panel to prefetch, or null
};

ENCRT_X86_INLINE __m512i broadcast_u8x4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// acc += Σ_4 u8(a)·s8(w) per int32 lane. Written as asm with acc tied in place ("+v"): with the
// _mm512_dpbusd_epi32 intrinsic GCC 12 often copies every accumulator to a fresh register and
// back to the stack on each step, halving the throughput of the loop.
ENCRT_X86_INLINE void dpbusd(__m512i& acc, __m512i a_u8, __m512i w_s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a_u8), "v"(w_s8));
}

// The k loop of one tile: exact int32 sums Σ_k q[m0 + r, k] · W(n0 + 16j + lane, k) into
// acc[r·NV + j]. Kept out of line, apart from the epilogue: inlined together, GCC stops keeping
// the accumulator array in registers and spills it on every iteration.
template <int MR, int NV>
__attribute__((noinline)) void accumulate(const TileArgs& t, __m512i* acc_out) {
  __m512i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[r][j] = _mm512_setzero_si512();

  const uint8_t* a = t.a;
  const size_t lda = t.lda;
  const int8_t* w = t.w;
  const size_t pb = t.panel_bytes;
  const int8_t* wn = t.w_next;
  const int K4 = t.K4;
  for (int k = 0; k < K4; ++k) {
    __m512i wv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) {
      wv[j] = _mm512_loadu_si512(w + j * pb);
      _mm_prefetch(reinterpret_cast<const char*>(w + j * pb + kPrefetchGroups * 64), _MM_HINT_T0);
    }
    if (wn) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) _mm_prefetch(reinterpret_cast<const char*>(wn + j * pb), _MM_HINT_T1);
      wn += 64;
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512i ab = broadcast_u8x4(a + r * lda);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) dpbusd(acc[r][j], ab, wv[j]);
    }
    a += 4;
    w += 64;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_store_si512(acc_out + r * NV + j, acc[r][j]);
}

using AccumulateFn = void (*)(const TileArgs&, __m512i*);

AccumulateFn select_accumulate(int mr, int nv) {
  static_assert(kMR == 8 && kNV == 3, "the table below lists every (rows, vectors) pair");
  static const AccumulateFn table[kMR][kNV] = {
      {accumulate<1, 1>, accumulate<1, 2>, accumulate<1, 3>}, {accumulate<2, 1>, accumulate<2, 2>, accumulate<2, 3>},
      {accumulate<3, 1>, accumulate<3, 2>, accumulate<3, 3>}, {accumulate<4, 1>, accumulate<4, 2>, accumulate<4, 3>},
      {accumulate<5, 1>, accumulate<5, 2>, accumulate<5, 3>}, {accumulate<6, 1>, accumulate<6, 2>, accumulate<6, 3>},
      {accumulate<7, 1>, accumulate<7, 2>, accumulate<7, 3>}, {accumulate<8, 1>, accumulate<8, 2>, accumulate<8, 3>}};
  return table[mr - 1][nv - 1];
}

}  // namespace

void qu8s8_gemm_8x48__avx512vnni(int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                                 const int32_t* w_sum, const float* w_scale, float* C, int ldc,
                                 const GemmEpilogue& ep) {
  if (M <= 0 || N <= 0) return;
  TileArgs t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.lda = static_cast<size_t>(A.ld);
  t.panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  t.a_scale = A.scale;
  t.a_zp = A.zero_point;
  t.w_sum = w_sum;
  t.w_scale = w_scale;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  constexpr int kNR = kNV * kPanelN;
  for (int n0 = 0; n0 < N; n0 += kNR) {
    const int cols = N - n0 < kNR ? N - n0 : kNR;
    const int nv = (cols + kPanelN - 1) / kPanelN;
    t.n0 = n0;
    t.last_cols = cols - (nv - 1) * kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * t.panel_bytes;
    const int8_t* next_block = n0 + kNR < N ? t.w + kNV * t.panel_bytes : nullptr;
    const U8S8EpilogueFn finish = select_u8s8_epilogue<kNV>(nv, ep);
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, kMR);
      t.m0 = m0;
      t.a = A.data + static_cast<size_t>(m0) * t.lda;
      // Warm the next block only once, while the last row tile of this block runs.
      t.w_next = m0 + mr == M ? next_block : nullptr;
      alignas(64) __m512i acc[kMR * kNV];
      select_accumulate(mr, nv)(t, acc);
      finish(t, mr, acc);
      m0 += mr;
    }
  }
}

}  // namespace encrt::kernels::x86
