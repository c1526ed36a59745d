// The int8 attention code of qs8_attention__avxvnni (attention_i8_avx2.h with x86::VnniProducts)
// with vpdpbusd emulated (emulated_vpdpbusd_ymm.h). Compiled with AVX2 flags (tests/CMakeLists.txt,
// *_avx2.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/attention_i8_avx2.h"
#include "emulated_kernels.h"
#include "emulated_vpdpbusd_ymm.h"

namespace encrt::kernels::test {

void qs8_attention_vnni_ymm_emulated(const AttentionArgs& args, int b, int h, void* scratch) {
  x86::qs8_attention_ymm<x86::VnniProducts<EmulatedDot>>(args, b, h, scratch);
}

size_t qs8_attention_vnni_ymm_emulated_scratch(int seq, int head_dim) {
  return x86::qs8_attention_ymm_scratch<x86::VnniProducts<EmulatedDot>>(seq, head_dim);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
