// qs8_attention__amx: the int8 attention of attention_i8_avx512.h with its two products on AMX
// tiles (attention_i8_amx.h), for head_dim <= 64 and seq >= 128; other shapes run the avx512vnni
// kernel (amx_attention_runs). It runs only where isa_supported() found AMX-INT8 (cpu_features.cpp).
#include "kernels/x86/amx_native_tiles.h"
#include "kernels/x86/attention_i8_amx.h"

namespace encrt::kernels::x86 {

size_t qs8_attention_scratch__amx(int seq, int head_dim) {
  return amx_attention_runs(seq, head_dim) ? qs8_attention_scratch<AmxEngine<NativeTiles>>(seq, head_dim)
                                           : qs8_attention_scratch__avx512vnni(seq, head_dim);
}

void qs8_attention__amx(const AttentionArgs& args, int b, int h, void* scratch) {
  if (!amx_attention_runs(args.seq, args.head_dim)) return qs8_attention__avx512vnni(args, b, h, scratch);
  NativeTiles tiles;
  AmxEngine<NativeTiles> engine(tiles);
  qs8_attention(engine, args, b, h, scratch);
}

}  // namespace encrt::kernels::x86
