// qu8s8_gemm_4x16__avx2: uint8 activations × int8 weights (PanelN16K4) without VNNI, exact, on
// the signed route. vpmaddubsw multiplies unsigned by signed bytes and adds pairs in int16 with
// saturation; it stays exact when the unsigned operand is at most 128. So the activations are
// centred, a' = q - 128 in [-128, 127], and
//   Σ q·w = Σ |a'| · (sign(a')·w) + 128 · w_sum
// with |a'| <= 128 the unsigned operand and vpsignb(w, a') the signed one: a pair sums to at
// most 128·127·2 = 32512, nothing saturates, and the integers are the reference's bit for bit
// (vpmaddwd with ones then adds the pairs into int32). vpsignb negates a weight of -128 into
// -128, so every weight must be in [-127, 127]: the converter's range; the CPU backend checks a
// model's weights before it chooses this kernel (kSymmetricWeights in the list).
//   activations: per row, once per call (encode_row, gemm_u8s8_rows_avx2.h), each k-group as
//                [|a'| × 4][a' × 4]: two vpbroadcastd per row and k-group, no arithmetic;
//   weights:     a panel's k-group, 64 bytes = 16 columns × 4 k, as two ymm, in place;
//   per row and 8 columns: vpsignb, vpmaddubsw, vpmaddwd(ones), vpaddd → 8 int32 column sums.
// Register tile: 4 rows × 16 columns = 8 ymm accumulators + 2 weights + ones + |a'| + a' + 2
// temporaries. Faster than the widened route where vpmaddwd is the narrow pipe (AMD Zen 3: 142
// against 101 Gop/s register-only); slower where vpsignb shares the multiply pipes (Zen 4).
#include "kernels/x86/gemm_u8s8_rows_avx2.h"

namespace encrt::kernels::x86 {
namespace {

struct SignedRoute {
  static constexpr int kMR = 4;
  static constexpr int kNR = 16;
  static constexpr int kZeroPointBias = 128;  // acc = Σ a'·w = Σ q·w - 128·w_sum

  // Per k-group g: out[8g..8g+3] = |q - 128|, out[8g+4..8g+7] = q - 128 (int8).
  static void encode_row(const uint8_t* q, int K4, uint8_t* out) {
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
    int g = 0;
    for (; g + 8 <= K4; g += 8) {
      const __m256i centred = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 4 * g)), flip);
      const __m256i magnitude = _mm256_abs_epi8(centred);
      // Per 128-bit lane, 32-bit groups interleaved: lo = (m0 c0 m1 c1 | m4 c4 m5 c5),
      // hi = (m2 c2 m3 c3 | m6 c6 m7 c7); the lane permutes put groups 0-3 and 4-7 in order.
      const __m256i lo = _mm256_unpacklo_epi32(magnitude, centred);
      const __m256i hi = _mm256_unpackhi_epi32(magnitude, centred);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * g), _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * g + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
    for (; g < K4; ++g)
      for (int j = 0; j < 4; ++j) {
        const int centred = static_cast<int>(q[4 * g + j]) - 128;
        out[8 * g + j] = static_cast<uint8_t>(centred < 0 ? -centred : centred);
        out[8 * g + 4 + j] = static_cast<uint8_t>(centred);
      }
  }

  // acc += vpmaddwd(vpmaddubsw(u, vpsignb(w, s)), ones): one asm block with acc tied in place and
  // an early-clobbered temporary, so that GCC keeps the accumulators in registers.
  static ENCRT_X86_INLINE void signed_madd_accumulate(__m256i& acc, __m256i u, __m256i s, __m256i w, __m256i ones) {
    __m256i t;
    asm("vpsignb %3, %4, %1\n\t"
        "vpmaddubsw %1, %2, %1\n\t"
        "vpmaddwd %5, %1, %1\n\t"
        "vpaddd %1, %0, %0"
        : "+x"(acc), "=&x"(t)
        : "x"(u), "x"(s), "x"(w), "x"(ones));
  }

  // acc_out[2r + j]: the exact Σ a'·w of row r, columns 8j..8j+7 in order. Out of line so that
  // GCC keeps the accumulators in registers.
  template <int MR>
  __attribute__((noinline)) static void accumulate(const encoded_rows::Tile& t, __m256i* acc_out) {
    __m256i lo[MR], hi[MR];
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
    const __m256i ones = _mm256_set1_epi16(1);
    const uint8_t* a = t.a;
    const size_t lda = t.lda;
    const int8_t* w = static_cast<const int8_t*>(t.w);
    for (int k = 0; k < t.K4; ++k) {
      encoded_rows::prefetch_weights(w);
      const __m256i w_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const __m256i w_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        const __m256i u = encoded_rows::broadcast_4_bytes(a + r * lda);
        const __m256i s = encoded_rows::broadcast_4_bytes(a + r * lda + 4);
        signed_madd_accumulate(lo[r], u, s, w_lo, ones);
        signed_madd_accumulate(hi[r], u, s, w_hi, ones);
      }
      a += kEncodedGroupBytes;
      w += kPanelN * kPanelK;
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      _mm256_store_si256(acc_out + 2 * r, lo[r]);
      _mm256_store_si256(acc_out + 2 * r + 1, hi[r]);
    }
  }
};

}  // namespace

void qu8s8_gemm_4x16__avx2(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                           const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  encoded_rows::gemm<SignedRoute>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep);
}

}  // namespace encrt::kernels::x86
