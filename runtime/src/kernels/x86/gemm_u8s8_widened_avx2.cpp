// qu8s8_gemm_6x8__avx2: uint8 activations × int8 weights (PanelN16K4) without VNNI, exact, on
// the widened route: both operands as int16 into vpmaddwd, whose pairwise sums are int32
// (|a·w + a'·w'| <= 64770), accumulated by vpaddd. vpmaddubsw would need one instruction less
// but saturates its int16 pair sums (255·127·2 > 32767).
//   activations: each row widened to int16 once per call (encode_row, gemm_u8s8_rows_avx2.h):
//                a k-group's 4 values are one vpbroadcastq, (a0 a1 a2 a3) × 4;
//   weights:     8 columns × 4 k of a panel's k-group as 16 int16, either widened in the loop
//                (vpmovsxbw of 16 bytes where the model file maps them: WidenedRoute) or, with
//                enough rows to share the work, widened once per half panel and block of rows
//                into the workspace and loaded from there (WidenedCopyRoute);
//   vpmaddwd → per column two int32 partial sums (k0·k1 and k2·k3), vpaddd into the tile.
// Register tile: 6 rows × 8 columns (half a panel) = 12 ymm accumulators + 2 weights + 1
// activation vector + 1 product. At the end vphaddd folds each column's two partial sums.
// Each shuffle out of the inner loop counts: register-resident mixes of the loop on a Zen 4 VM
// give 138 Gop/s with both operands widened in the loop, 173 with the weights' vpmovsxbw alone,
// 188-197 with neither (the route's probe: 188-190). The copy costs a store and a reload of the
// weights per block of rows, and its rows come from L2: it pays from about 48 rows (MiniLM's
// linears at M = 128: 2-4% faster; at M = 16, 3-11% slower, so small M keeps the in-loop route).
#include "kernels/x86/gemm_u8s8_rows_avx2.h"

namespace encrt::kernels::x86 {
namespace {

// What both routes share: the tile, the encoding of the rows, the folding of the partial sums.
struct WidenedRows {
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

  // Half a panel's weights, K4 k-groups of 8 columns × 4 k (32 bytes, 64 bytes apart in the
  // panel), as int16 into out (64 bytes per k-group). The panel streams from L2 or L3 once per
  // block of rows: prefetched ahead.
  static void widen_half_panel(const int8_t* w, int K4, int16_t* out) {
    for (int k = 0; k < K4; ++k) {
      encoded_rows::prefetch_weights(w);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                         _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w))));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16),
                         _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16))));
      w += kPanelN * kPanelK;
      out += 32;
    }
  }

  // acc += vpmaddwd(a, w): one asm block with acc tied in place ("+x") and an early-clobbered
  // temporary, so that GCC keeps the accumulators in registers (with the intrinsics it spills
  // some of them on every step).
  static ENCRT_X86_INLINE void madd_accumulate(__m256i& acc, __m256i a_i16, __m256i w_i16) {
    __m256i product;
    asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(product) : "x"(a_i16), "x"(w_i16));
  }

  // The k-loop of a 5- or 6-row tile as one asm block with fixed registers: the accumulators of
  // row r in ymm<r> (columns 0-3) and ymm<6 + r> (columns 4-7), the two weight vectors in ymm12
  // and ymm13, the broadcast row values in ymm14, the product in ymm15. A step is the two weight
  // vectors (kCopied: loaded from the widened copy; else vpmovsxbw from the panel, with the
  // prefetch), then per row a vpbroadcastq load, 2 vpmaddwd and 2 vpaddd, then the pointer
  // updates: nothing else (GCC's allocation of the same loop adds register copies: 4 per step at
  // 5 rows). Both weight layouts advance 64 bytes per k-group. Rows 0-2 at a + {0, 1, 2}·lda,
  // rows 3-5 at a3 + {0, 1, 2}·lda. Writes lo[0..MR), hi[0..MR).
#define ENCRT_WIDENED_ROW(ADDR, LO, HI)              \
  "vpbroadcastq " ADDR ", %%ymm14\n\t"               \
  "vpmaddwd %%ymm12, %%ymm14, %%ymm15\n\t"           \
  "vpaddd %%ymm15, %%ymm" #LO ", %%ymm" #LO "\n\t"   \
  "vpmaddwd %%ymm13, %%ymm14, %%ymm15\n\t"           \
  "vpaddd %%ymm15, %%ymm" #HI ", %%ymm" #HI "\n\t"
#define ENCRT_WIDENED_ROWS_5                                                                 \
  ENCRT_WIDENED_ROW("(%[a])", 0, 6) ENCRT_WIDENED_ROW("(%[a],%[lda],1)", 1, 7)               \
  ENCRT_WIDENED_ROW("(%[a],%[lda],2)", 2, 8) ENCRT_WIDENED_ROW("(%[a3])", 3, 9)              \
  ENCRT_WIDENED_ROW("(%[a3],%[lda],1)", 4, 10)
#define ENCRT_WIDENED_ROWS_6 ENCRT_WIDENED_ROWS_5 ENCRT_WIDENED_ROW("(%[a3],%[lda],2)", 5, 11)
#define ENCRT_WIDENED_STORE(R) "vmovdqu %%ymm" #R ", 32*" #R "(%[lo])\n\t"
#define ENCRT_WIDENED_STORE_HI(R, REG) "vmovdqu %%ymm" #REG ", 32*" #R "(%[hi])\n\t"
#define ENCRT_WIDENED_STORES_5                                                                \
  ENCRT_WIDENED_STORE(0) ENCRT_WIDENED_STORE(1) ENCRT_WIDENED_STORE(2) ENCRT_WIDENED_STORE(3) \
  ENCRT_WIDENED_STORE(4) ENCRT_WIDENED_STORE_HI(0, 6) ENCRT_WIDENED_STORE_HI(1, 7)            \
  ENCRT_WIDENED_STORE_HI(2, 8) ENCRT_WIDENED_STORE_HI(3, 9) ENCRT_WIDENED_STORE_HI(4, 10)
#define ENCRT_WIDENED_STORES_6 ENCRT_WIDENED_STORES_5 ENCRT_WIDENED_STORE(5) ENCRT_WIDENED_STORE_HI(5, 11)
#define ENCRT_WIDENED_COPIED_LOADS "vmovdqu (%[w]), %%ymm12\n\t" "vmovdqu 32(%[w]), %%ymm13\n\t"
#define ENCRT_WIDENED_PANEL_LOADS \
  "prefetcht0 %c[pf](%[w])\n\t" "vpmovsxbw (%[w]), %%ymm12\n\t" "vpmovsxbw 16(%[w]), %%ymm13\n\t"
#define ENCRT_WIDENED_K_LOOP(LOADS, ROWS, STORES)                                                                \
  asm volatile("vpxor %%xmm0, %%xmm0, %%xmm0\n\t" "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"                         \
               "vpxor %%xmm2, %%xmm2, %%xmm2\n\t" "vpxor %%xmm3, %%xmm3, %%xmm3\n\t"                         \
               "vpxor %%xmm4, %%xmm4, %%xmm4\n\t" "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"                         \
               "vpxor %%xmm6, %%xmm6, %%xmm6\n\t" "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"                         \
               "vpxor %%xmm8, %%xmm8, %%xmm8\n\t" "vpxor %%xmm9, %%xmm9, %%xmm9\n\t"                         \
               "vpxor %%xmm10, %%xmm10, %%xmm10\n\t" "vpxor %%xmm11, %%xmm11, %%xmm11\n\t"                   \
               "test %[k], %[k]\n\t" "jle 2f\n\t" "1:\n\t" LOADS ROWS                                   \
               "add $8, %[a]\n\t" "add $8, %[a3]\n\t" "add $64, %[w]\n\t" "dec %[k]\n\t" "jnz 1b\n\t" \
               "2:\n\t" STORES                                                                               \
               : [a] "+r"(a), [a3] "+r"(a3), [w] "+r"(w), [k] "+r"(k)                                         \
               : [lda] "r"(lda), [lo] "r"(lo), [hi] "r"(hi), [pf] "i"(encoded_rows::kWeightPrefetchBytes)       \
               : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                 "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")
  template <int MR, bool kCopied>
  static void k_loop(const uint8_t* a, size_t lda, const void* w, long k, __m256i* lo, __m256i* hi) {
    static_assert(MR == 5 || MR == 6, "the asm loops cover 5 and 6 rows");
    const uint8_t* a3 = a + 3 * lda;
    if constexpr (kCopied && MR == 6) ENCRT_WIDENED_K_LOOP(ENCRT_WIDENED_COPIED_LOADS, ENCRT_WIDENED_ROWS_6, ENCRT_WIDENED_STORES_6);
    if constexpr (kCopied && MR == 5) ENCRT_WIDENED_K_LOOP(ENCRT_WIDENED_COPIED_LOADS, ENCRT_WIDENED_ROWS_5, ENCRT_WIDENED_STORES_5);
    if constexpr (!kCopied && MR == 6) ENCRT_WIDENED_K_LOOP(ENCRT_WIDENED_PANEL_LOADS, ENCRT_WIDENED_ROWS_6, ENCRT_WIDENED_STORES_6);
    if constexpr (!kCopied && MR == 5) ENCRT_WIDENED_K_LOOP(ENCRT_WIDENED_PANEL_LOADS, ENCRT_WIDENED_ROWS_5, ENCRT_WIDENED_STORES_5);
  }
#undef ENCRT_WIDENED_K_LOOP
#undef ENCRT_WIDENED_PANEL_LOADS
#undef ENCRT_WIDENED_COPIED_LOADS
#undef ENCRT_WIDENED_STORES_6
#undef ENCRT_WIDENED_STORES_5
#undef ENCRT_WIDENED_STORE_HI
#undef ENCRT_WIDENED_STORE
#undef ENCRT_WIDENED_ROWS_6
#undef ENCRT_WIDENED_ROWS_5
#undef ENCRT_WIDENED_ROW

  // The k-loop of the tiles below 5 rows (a remainder's 4, 3, 2 or 1), in C++: next_weights(&lo,
  // &hi) gives a k-group's 8 columns as int16 and moves on to the next k-group.
  template <int MR, class NextWeights>
  static ENCRT_X86_INLINE void k_loop_small(const encoded_rows::Tile& t, __m256i* lo, __m256i* hi,
                                            NextWeights next_weights) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
    const uint8_t* a = t.a;
    const size_t lda = t.lda;
    for (int k = 0; k < t.K4; ++k) {
      __m256i w_lo, w_hi;
      next_weights(&w_lo, &w_hi);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m256i ab = encoded_rows::broadcast_8_bytes(a + r * lda);
        madd_accumulate(lo[r], ab, w_lo);
        madd_accumulate(hi[r], ab, w_hi);
      }
      a += kEncodedGroupBytes;
    }
  }

  // lo = (c0 c0 c1 c1 | c2 c2 c3 c3), hi = (c4 c4 c5 c5 | c6 c6 c7 c7):
  // vphaddd → (c0 c1 c4 c5 | c2 c3 c6 c7), then 64-bit lanes (0 2 1 3) → c0..c7.
  template <int MR>
  static ENCRT_X86_INLINE void fold(const __m256i* lo, const __m256i* hi, __m256i* acc_out) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      _mm256_store_si256(acc_out + r, _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo[r], hi[r]), 0xd8));
  }
};

// The weights widened in the loop from the panel (t.w: int8, k-group 0 of the tile's columns).
struct WidenedRoute : WidenedRows {
  // acc_out[r]: the exact int32 sums of row r, columns 0..7 in order. Out of line so that GCC
  // keeps the accumulators in registers.
  template <int MR>
  __attribute__((noinline)) static void accumulate(const encoded_rows::Tile& t, __m256i* acc_out) {
    __m256i lo[MR], hi[MR];  // columns 0-3 and 4-7, two partial sums per column
    if constexpr (MR >= 5) {
      k_loop<MR, false>(t.a, t.lda, t.w, t.K4, lo, hi);
    } else {
      const int8_t* w = static_cast<const int8_t*>(t.w);
      k_loop_small<MR>(t, lo, hi, [&w](__m256i* w_lo, __m256i* w_hi) {
        encoded_rows::prefetch_weights(w);
        *w_lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
        *w_hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
        w += kPanelN * kPanelK;
      });
    }
    fold<MR>(lo, hi, acc_out);
  }
};

// The weights read from a widened copy (t.w: int16, widen_half_panel's layout).
struct WidenedCopyRoute : WidenedRows {
  // acc_out[r]: the exact int32 sums of row r, columns 0..7 in order. Out of line so that GCC
  // keeps the accumulators in registers.
  template <int MR>
  __attribute__((noinline)) static void accumulate(const encoded_rows::Tile& t, __m256i* acc_out) {
    __m256i lo[MR], hi[MR];  // columns 0-3 and 4-7, two partial sums per column
    const int16_t* w = static_cast<const int16_t*>(t.w);
    if constexpr (MR >= 5) {
      k_loop<MR, true>(t.a, t.lda, w, t.K4, lo, hi);
    } else {
      k_loop_small<MR>(t, lo, hi, [&w](__m256i* w_lo, __m256i* w_hi) {
        *w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
        *w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16));
        w += 32;
      });
    }
    fold<MR>(lo, hi, acc_out);
  }
};

}  // namespace

void qu8s8_gemm_6x8__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                          const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  if (M < kWidenedCopyMinRows) {
    encoded_rows::gemm<WidenedRoute>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
    return;
  }
  using Route = WidenedCopyRoute;
  encoded_rows::Tile t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.lda = static_cast<size_t>(kEncodedGroupBytes) * t.K4;
  const size_t panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  uint8_t* encoded = A.workspace;
  const uintptr_t after_rows = reinterpret_cast<uintptr_t>(encoded + kWidenedBlockRows * t.lda);
  int16_t* widened = reinterpret_cast<int16_t*>((after_rows + 63) & ~static_cast<uintptr_t>(63));
  for (int mb = 0, rows = 0; mb < M; mb += rows) {
    // Blocks of kWidenedBlockRows, the last two balanced so that neither is a small one.
    const int remaining = M - mb;
    rows = remaining <= kWidenedBlockRows                          ? remaining
           : remaining < kWidenedBlockRows + kWidenedCopyMinRows ? (remaining + 1) / 2
                                                                  : kWidenedBlockRows;
    for (int r = 0; r < rows; ++r)
      Route::encode_row(A.data + static_cast<size_t>(mb + r) * A.ld, t.K4, encoded + static_cast<size_t>(r) * t.lda);
    for (int n0 = 0; n0 < N; n0 += Route::kNR) {
      const int cols = N - n0 < Route::kNR ? N - n0 : Route::kNR;
      Route::widen_half_panel(W + static_cast<size_t>(n0 / kPanelN) * panel_bytes + (n0 % kPanelN) * kPanelK, t.K4, widened);
      t.w = widened;
      for (int m0 = 0; m0 < rows;) {
        const int mr = next_tile_rows(rows - m0, Route::kMR);
        t.a = encoded + static_cast<size_t>(m0) * t.lda;
        encoded_rows::tile_for<Route>(mr, std::make_integer_sequence<int, Route::kMR>{})(
            t, A, mb + m0, n0, cols, w_sum, w_scale, C, static_cast<size_t>(ldc), ep);
        m0 += mr;
      }
    }
  }
}

}  // namespace encrt::kernels::x86
