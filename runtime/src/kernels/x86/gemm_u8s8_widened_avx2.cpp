// qu8s8_gemm_6x8__avx2: uint8 activations × int8 weights (PanelN16K4) without VNNI, exact, on
// the widened route: both operands as int16 into vpmaddwd, whose pairwise sums are int32
// (|a·w + a'·w'| <= 64770), accumulated by vpaddd. vpmaddubsw would need one instruction less
// but saturates its int16 pair sums (255·127·2 > 32767).
//   activations: each row widened to int16 once per call (encode_row, gemm_u8s8_rows_avx2.h):
//                a k-group's 4 values are one vpbroadcastq, (a0 a1 a2 a3) × 4;
//   weights:     16 bytes = 4 columns × 4 k of a panel's k-group → vpmovsxbw → 16 int16, read
//                where the model file maps them;
//   vpmaddwd → per column two int32 partial sums (k0·k1 and k2·k3), vpaddd into the tile.
// Register tile: 6 rows × 8 columns (half a panel) = 12 ymm accumulators + 2 weights + 1
// activation vector + 1 product. At the end vphaddd folds each column's two partial sums.
// Widening the rows once instead of per tile and column block (a vpmovzxbw per row and k-group)
// takes a shuffle out of the inner loop: register-only mixes of the loop on Zen 4 give 138 Gop/s
// with both operands' shuffles, 176 with the weights' alone (191 with neither, which would take
// a widened copy of the weights; the route's probe: 190).
#include "kernels/x86/gemm_u8s8_rows_avx2.h"

namespace encrt::kernels::x86 {
namespace {

struct WidenedRoute {
  static constexpr int kMR = 6;
  static constexpr int kNR = 8;
  static constexpr int kZeroPointBias = 0;  // acc = Σ q·w

  // 8·K4 bytes: the row's 4·K4 bytes as int16.
  static void encode_row(const uint8_t* q, int K4, uint8_t* out) {
    const int n = 4 * K4;
    int i = 0;
    for (; i + 16 <= n; i += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i),
                         _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i))));
    for (; i < n; ++i) {
      const uint16_t v = q[i];
      std::memcpy(out + 2 * i, &v, sizeof v);
    }
  }

  // acc += vpmaddwd(a, w): one asm block with acc tied in place ("+x") and an early-clobbered
  // temporary, so that GCC keeps the 12 accumulators in registers (with the intrinsics it spills
  // some of them on every step).
  static ENCRT_X86_INLINE void madd_accumulate(__m256i& acc, __m256i a_i16, __m256i w_i16) {
    __m256i product;
    asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(product) : "x"(a_i16), "x"(w_i16));
  }

  // acc_out[r]: the exact int32 sums of row r, columns 0..7 in order. Out of line so that GCC
  // keeps the accumulators in registers.
  template <int MR>
  __attribute__((noinline)) static void accumulate(const encoded_rows::Tile& t, __m256i* acc_out) {
    __m256i lo[MR], hi[MR];  // columns 0-3 and 4-7, two partial sums per column
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
    const uint8_t* a = t.a;
    const size_t lda = t.lda;
    const int8_t* w = t.w;
    for (int k = 0; k < t.K4; ++k) {
      encoded_rows::prefetch_weights(w);
      const __m256i w_lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
      const __m256i w_hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m256i ab = encoded_rows::broadcast_8_bytes(a + r * lda);
        madd_accumulate(lo[r], ab, w_lo);
        madd_accumulate(hi[r], ab, w_hi);
      }
      a += kEncodedGroupBytes;
      w += kPanelN * kPanelK;
    }
    // lo = (c0 c0 c1 c1 | c2 c2 c3 c3), hi = (c4 c4 c5 c5 | c6 c6 c7 c7):
    // vphaddd → (c0 c1 c4 c5 | c2 c3 c6 c7), then 64-bit lanes (0 2 1 3) → c0..c7.
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      _mm256_store_si256(acc_out + r, _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo[r], hi[r]), 0xd8));
  }
};

}  // namespace

void qu8s8_gemm_6x8__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                          const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  encoded_rows::gemm<WidenedRoute>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
