// qs8_attention__avxvnni: the int8 attention of attention_i8_avx2.h with AVX-VNNI's VEX-encoded
// vpdpbusd (Alder Lake-class cores, which have no AVX-512): bytes, four exact u8 × s8 products
// per int32 lane, a quarter of the widened kernel's multiply-add instructions.
#include "kernels/x86/attention_i8_avx2.h"

namespace encrt::kernels::x86 {
namespace {

struct AvxVnniDot {
  // acc += Σ_4 u8(a)·s8(b) per int32 lane, in one asm block with acc tied in place (the reason is
  // WidenedProducts::madd's, attention_i8_avx2.cpp); {vex} (%{vex%} in GCC asm) selects the
  // AVX-VNNI encoding.
  static ENCRT_X86_INLINE void dpbusd(__m256i& acc, __m256i a_u8, __m256i b_s8) {
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a_u8), "x"(b_s8));
  }
};

}  // namespace

size_t qs8_attention_scratch__avxvnni(int seq, int head_dim) {
  return qs8_attention_ymm_scratch<VnniProducts<AvxVnniDot>>(seq, head_dim);
}

void qs8_attention__avxvnni(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_ymm<VnniProducts<AvxVnniDot>>(a, b, h, scratch);
}

}  // namespace encrt::kernels::x86
