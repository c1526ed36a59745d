// qs8_attention__avx512vnni: the int8 attention of attention_i8_avx512.h with its products by
// vpdpbusd in registers (VnniEngine), and that file's base-2 exp and log2 over arrays for the tests.
#include "kernels/x86/attention_i8_avx512.h"

namespace encrt::kernels::x86 {

void f32_exp2_x255__avx512vnni(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 16) {
    const __mmask16 mask = lanes_avx512(n - i);
    _mm512_mask_storeu_ps(y + i, mask, exp2_x255_avx512(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

void f32_log2__avx512vnni(int n, const float* x, float* y) {
  for (int i = 0; i < n; i += 16) {
    const __mmask16 mask = lanes_avx512(n - i);
    _mm512_mask_storeu_ps(y + i, mask, log2_avx512(_mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), mask, x + i)));
  }
}

size_t qs8_attention_scratch__avx512vnni(int seq, int head_dim) { return qs8_attention_scratch<VnniEngine>(seq, head_dim); }

void qs8_attention__avx512vnni(const AttentionArgs& args, int b, int h, void* scratch) {
  VnniEngine engine;
  qs8_attention(engine, args, b, h, scratch);
}

}  // namespace encrt::kernels::x86
