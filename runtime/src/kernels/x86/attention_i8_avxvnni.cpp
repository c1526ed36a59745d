// qs8_attention__avxvnni: the int8 attention of attention_i8_avx2.h with AVX-VNNI's VEX-encoded
// vpdpbusd (Alder Lake-class cores, which have no AVX-512): bytes, four exact u8 × s8 products
// per int32 lane, a quarter of the widened kernel's multiply-add instructions.
#include "kernels/x86/attention_i8_avx2.h"
#include "kernels/x86/avx_vnni_dot.h"

namespace encrt::kernels::x86 {

size_t qs8_attention_scratch__avxvnni(int seq, int head_dim) {
  return qs8_attention_ymm_scratch<VnniProducts<AvxVnniDot>>(seq, head_dim);
}

void qs8_attention__avxvnni(const AttentionArgs& a, int b, int h, void* scratch) {
  qs8_attention_ymm<VnniProducts<AvxVnniDot>>(a, b, h, scratch);
}

}  // namespace encrt::kernels::x86
