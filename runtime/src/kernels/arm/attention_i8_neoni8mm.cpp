// qs8_attention__neoni8mm: int8 attention for one (sequence, head), bit for bit what the
// dot-product kernel (attention_i8_neondot.cpp) computes, and so within the reference's bound
// (kernels/ref/attention_i8_ref.cpp). The dense path's Q·K takes two query rows at once with
// smmla, which multiplies a 2 × 8 block of signed bytes by the transpose of another into a 2 × 2
// block of int32 sums: 2 queries × 2 keys × 8 depth bytes per instruction, where the sdot panels
// give 1 query × 4 keys × 4 bytes. The operands:
//   queries: per 8 depth bytes c, (row i: bytes 8c..8c+7 | row i+1: the same), t.qpair, built
//     once per pair of rows;
//   keys: per pair of listed keys and 8 depth bytes c, (key 2p: bytes 8c..8c+7 | key 2p+1: the
//     same), t.kpairs, built once per head (zero keys up to a multiple of 4).
// The sums are exact in int32, as sdot's, so both rows' t.dots are the sdot kernel's. P·V, the
// masked path and an odd last row stay on the sdot hooks (attention_i8_sdot.h).
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/attention_i8_sdot.h"

namespace encrt::kernels::arm {
namespace {

struct DensePairs : DensePanels {
  static constexpr bool kQueryPairs = true;

  // DensePanels' panels (an odd last row and P·V use them), then t.kpairs.
  void prepare(const I8AttentionScratch& t, int n, int D16) {
    DensePanels::prepare(t, n, D16);
    const int chunks = D16 / 8;
    for (int j = 0; j < round4(n); ++j) {
      int8_t* dst = t.kpairs + static_cast<size_t>(j / 2) * 2 * D16 + 8 * (j % 2);
      const int8_t* src = j < n ? t.k + static_cast<size_t>(t.keys[j]) * D16 : nullptr;
      for (int c = 0; c < chunks; ++c) {
        if (src)
          std::memcpy(dst + 16 * c, src + 8 * c, 8);
        else
          std::memset(dst + 16 * c, 0, 8);
      }
    }
  }

  // t.dots (row t.q) and t.dots2 (row t.q2) for the listed keys, four at a time (two key pairs:
  // each smmla block is (row 0: keys 2p, 2p+1 | row 1: the same), so zip1/zip2 of two blocks'
  // 64-bit halves are the rows' four sums). MiniLM's and BERT's head sizes (D16 = 32, 64) keep
  // the rows' operands in registers (kChunks), the others reload them.
  void dots2(const I8AttentionScratch& t, int n, int D16) {
    const int chunks = D16 / 8;  // even: D16 is a multiple of 16
    for (int c = 0; c < chunks; c += 2) {
      const int64x2_t q0 = vreinterpretq_s64_s8(vld1q_s8(t.q + 8 * c));
      const int64x2_t q1 = vreinterpretq_s64_s8(vld1q_s8(t.q2 + 8 * c));
      vst1q_s8(t.qpair + 16 * c, vreinterpretq_s8_s64(vzip1q_s64(q0, q1)));
      vst1q_s8(t.qpair + 16 * c + 16, vreinterpretq_s8_s64(vzip2q_s64(q0, q1)));
    }
    if (chunks == 4)
      dots2_fixed<4>(t, n);
    else if (chunks == 8)
      dots2_fixed<8>(t, n);
    else
      dots2_any(t, n, chunks);
  }

  // Two key pairs' blocks into the rows' four sums at j.
  static ENCRT_ARM_INLINE void store_rows(const I8AttentionScratch& t, int j, int32x4_t acc0, int32x4_t acc1) {
    const int64x2_t lo = vreinterpretq_s64_s32(acc0), hi = vreinterpretq_s64_s32(acc1);
    vst1q_s32(t.dots + j, vreinterpretq_s32_s64(vzip1q_s64(lo, hi)));
    vst1q_s32(t.dots2 + j, vreinterpretq_s32_s64(vzip2q_s64(lo, hi)));
  }

  template <int kChunks>
  static void dots2_fixed(const I8AttentionScratch& t, int n) {
    int8x16_t q[kChunks];
    for (int c = 0; c < kChunks; ++c) q[c] = vld1q_s8(t.qpair + 16 * c);
    constexpr size_t kPairBytes = 16 * kChunks;
    const int8_t* k = t.kpairs;
    for (int j = 0; j < n; j += 4, k += 2 * kPairBytes) {
      int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0;
      for (int c = 0; c < kChunks; ++c) {
        acc0 = vmmlaq_s32(acc0, q[c], vld1q_s8(k + 16 * c));
        acc1 = vmmlaq_s32(acc1, q[c], vld1q_s8(k + kPairBytes + 16 * c));
      }
      store_rows(t, j, acc0, acc1);
    }
  }

  static void dots2_any(const I8AttentionScratch& t, int n, int chunks) {
    const size_t pair_bytes = static_cast<size_t>(16) * chunks;
    const int8_t* k = t.kpairs;
    for (int j = 0; j < n; j += 4, k += 2 * pair_bytes) {
      int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0;
      for (int c = 0; c < chunks; ++c) {
        const int8x16_t q = vld1q_s8(t.qpair + 16 * c);
        acc0 = vmmlaq_s32(acc0, q, vld1q_s8(k + 16 * c));
        acc1 = vmmlaq_s32(acc1, q, vld1q_s8(k + pair_bytes + 16 * c));
      }
      store_rows(t, j, acc0, acc1);
    }
  }
};

}  // namespace

size_t qs8_attention_scratch__neoni8mm(int seq, int head_dim) { return i8_attention_scratch_bytes(seq, head_dim); }

void qs8_attention__neoni8mm(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_rows(a, b, h, scratch, sdot_scores, DensePairs{});
}

}  // namespace encrt::kernels::arm
