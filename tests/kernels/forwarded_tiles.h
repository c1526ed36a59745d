#pragma once

#if defined(ENCRT_ARCH_X86)

#include <cstdint>
#include <cstring>

#include "kernels/x86/amx_tile_config.h"
#include "emulated_kernels.h"

namespace encrt::kernels::test {
namespace {

// The Tiles class the AMX kernel templates call (gemm_u8s8_amx.h, attention_i8_amx.h), forwarding to
// the emulation's virtual functions (emulated_tiles.h). No ISA code: included by the emulated-kernel
// files (emulated_kernels.h says why those hold the kernel code).
class ForwardedTiles {
 public:
  explicit ForwardedTiles(TileOperations& ops) : ops_(ops) {}
  void load_config(const x86::amx::TileConfig& config) {
    uint8_t raw[64];
    std::memcpy(raw, &config, sizeof raw);
    ops_.load_config(raw);
  }
  template <int T>
  void load(const void* base, size_t stride) {
    ops_.load(T, base, stride);
  }
  template <int C, int A, int B>
  void dpbusd() {
    ops_.dpbusd(C, A, B);
  }
  template <int C, int A, int B>
  void dpbssd() {
    ops_.dpbssd(C, A, B);
  }
  template <int C, int A, int B>
  void dpbsud() {
    ops_.dpbsud(C, A, B);
  }
  template <int T>
  void store(void* base, size_t stride) {
    ops_.store(T, base, stride);
  }
  template <int T>
  void zero() {
    ops_.zero(T);
  }
  void release() { ops_.release(); }

 private:
  TileOperations& ops_;
};

}  // namespace
}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
