// The AMX int8 attention code (x86::AmxEngine, attention_i8_amx.h) of emulated_kernels.h on the
// tests' emulated tiles, for every seq (no seq >= 128 switch as in qs8_attention__amx). Compiled
// with AVX-512 flags (tests/CMakeLists.txt, *_avx512.cpp); nothing here runs before a test calls it.
#if defined(ENCRT_ARCH_X86)

#include "kernels/x86/attention_i8_amx.h"
#include "emulated_kernels.h"
#include "forwarded_tiles.h"

namespace encrt::kernels::test {

size_t qs8_attention_amx_emulated_scratch(int seq, int head_dim) {
  return x86::qs8_attention_scratch<x86::AmxEngine<ForwardedTiles>>(seq, head_dim);
}

void qs8_attention_amx_emulated(TileOperations& tiles, const AttentionArgs& args, int b, int h, void* scratch) {
  ForwardedTiles forwarded(tiles);
  x86::AmxEngine<ForwardedTiles> engine(forwarded);
  x86::qs8_attention(engine, args, b, h, scratch);
}

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
