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
// The sums are exact in int32, as sdot's, so both rows' t.dots are the sdot kernel's. P·V takes the
// pair of rows too, with usmmla (their u, unsigned, × 8 keys' V of two dims); the masked path, an
// odd last row and a pair with a non-finite row stay on the sdot hooks (attention_i8_sdot.h).
#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/attention_i8_sdot.h"

namespace encrt::kernels::arm {
namespace {

struct DensePairs : DensePanels {
  static constexpr bool kQueryPairs = true;

  // DensePanels' panels (an odd last row and a pair with a non-finite row use them), then
  // t.kpairs and t.vpairs: per 8 listed keys and pair of dims, (dim d: the 8 keys' bytes | dim
  // d+1: the same), from the V panel's two 4-key blocks by zip1/zip2 of their 32-bit lanes.
  void prepare(const I8AttentionScratch& t, int n, int D16) {
    DensePanels::prepare(t, n, D16);
    const size_t block_bytes = static_cast<size_t>(D16) * 4;  // a 4-key block of t.vpanel
    for (int c = 0; c < (n + 15) / 16 * 2; ++c) {
      const int8_t* b0 = t.vpanel + static_cast<size_t>(2 * c) * block_bytes;
      const int8_t* b1 = b0 + block_bytes;
      int8_t* dst = t.vpairs + static_cast<size_t>(c) * 2 * block_bytes;
      for (int d = 0; d < D16; d += 4) {
        const int32x4_t v0 = vreinterpretq_s32_s8(vld1q_s8(b0 + 4 * d));
        const int32x4_t v1 = vreinterpretq_s32_s8(vld1q_s8(b1 + 4 * d));
        vst1q_s8(dst + 8 * d, vreinterpretq_s8_s32(vzip1q_s32(v0, v1)));
        vst1q_s8(dst + 8 * d + 16, vreinterpretq_s8_s32(vzip2q_s32(v0, v1)));
      }
    }
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

  // P·V of both rows (u in t.dots and t.dots2) with usmmla, which takes u in [0, 255] as it is:
  // per 8 keys, (row 0: their u | row 1: the same) against each dim pair's t.vpairs block; 32
  // dims at a time, then 16.
  void pv2(const I8AttentionScratch& t, int n, int D, int D16, float sp0, float* out0, float sp1, float* out1) {
    const int chunks = (n + 7) / 8;
    for (int c = 0; c < chunks; ++c) {
      const int32_t* u0 = t.dots + 8 * c;
      const int32_t* u1 = t.dots2 + 8 * c;
      const uint16x8_t a = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(vld1q_s32(u0))),
                                        vmovn_u32(vreinterpretq_u32_s32(vld1q_s32(u0 + 4))));
      const uint16x8_t b = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(vld1q_s32(u1))),
                                        vmovn_u32(vreinterpretq_u32_s32(vld1q_s32(u1 + 4))));
      vst1q_u8(t.upair + 16 * c, vcombine_u8(vmovn_u16(a), vmovn_u16(b)));
    }
    int d0 = 0;
    for (; d0 + 32 <= D16; d0 += 32) pv2_chunk<16>(t, chunks, D, D16, d0, sp0, out0, sp1, out1);
    if (d0 < D16) pv2_chunk<8>(t, chunks, D, D16, d0, sp0, out0, sp1, out1);
  }

  // Dims [d0, d0 + 2·kPairs) of pv2: each accumulator is (row 0: dims d, d+1 | row 1: the same),
  // so zip1/zip2 of two accumulators' 64-bit halves are each row's four dims.
  template <int kPairs>
  static void pv2_chunk(const I8AttentionScratch& t, int chunks, int D, int D16, int d0, float sp0, float* out0,
                        float sp1, float* out1) {
    int32x4_t acc[kPairs];
    for (int p = 0; p < kPairs; ++p) acc[p] = vdupq_n_s32(0);
    const size_t chunk_bytes = static_cast<size_t>(D16) * 8;
    const int8_t* v = t.vpairs + static_cast<size_t>(d0) * 8;
    for (int c = 0; c < chunks; ++c, v += chunk_bytes) {
      const uint8x16_t u = vld1q_u8(t.upair + 16 * c);
      for (int p = 0; p < kPairs; ++p) acc[p] = vusmmlaq_s32(acc[p], u, vld1q_s8(v + 16 * p));
    }
    int32x4_t row0[kPairs / 2], row1[kPairs / 2];
    for (int q = 0; q < kPairs / 2; ++q) {
      const int64x2_t lo = vreinterpretq_s64_s32(acc[2 * q]), hi = vreinterpretq_s64_s32(acc[2 * q + 1]);
      row0[q] = vreinterpretq_s32_s64(vzip1q_s64(lo, hi));
      row1[q] = vreinterpretq_s32_s64(vzip2q_s64(lo, hi));
    }
    store_scaled_sums<kPairs / 2>(row0, D, d0, sp0, out0);
    store_scaled_sums<kPairs / 2>(row1, D, d0, sp1, out1);
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
