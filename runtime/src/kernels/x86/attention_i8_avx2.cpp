// qs8_attention__avx2: the int8 attention of attention_i8_avx2.h on AVX2 (and on AVX-512 CPUs
// without VNNI), with the values widened to int16 and vpmaddwd (exact: two int16 products per
// int32 lane, no saturation).
#include "kernels/x86/attention_i8_avx2.h"

namespace encrt::kernels::x86 {
namespace {

struct WidenedProducts {
  static constexpr int kGroup = 2;
  static constexpr int kQOffset = 0;
  using KV = int16_t;
  using Q = int16_t;
  using U = int16_t;
  // acc += vpmaddwd(a, b): one asm block with acc tied in place ("+x") and an early-clobbered
  // temporary. With the intrinsics GCC 12 kept one of pv_tile's 8 accumulators on the stack (a
  // store-to-load chain through every step) and copied score_tile's around each step.
  static ENCRT_X86_INLINE void madd(__m256i& acc, __m256i a, __m256i b) {
    __m256i product;
    asm("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(product) : "x"(a), "x"(b));
  }
};

}  // namespace

size_t qs8_attention_scratch__avx2(int seq, int head_dim) { return qs8_attention_ymm_scratch<WidenedProducts>(seq, head_dim); }

void qs8_attention__avx2(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_ymm<WidenedProducts>(a, b, h, scratch);
}

void f32_exp2_x255__avx2(int n, const float* x, float* y) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp2_x255_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = lanes_avx2(n - i);
    _mm256_maskstore_ps(y + i, mask, exp2_x255_avx2(_mm256_maskload_ps(x + i, mask)));
  }
}

}  // namespace encrt::kernels::x86
