// CPU feature detection (cpuid + xgetbv on x86, HWCAP on ARM): what the processor has and the OS
// saves. isa.h groups these into the feature bits the kernels require (cpu_isa_features).
#pragma once

namespace encrt::kernels {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx_vnni = false, avx512fp16 = false;
  bool amx_tile = false, amx_int8 = false;
  bool os_saves_ymm = false, os_saves_zmm = false;
  bool os_saves_tiles = false;       // XCR0 has XTILECFG and XTILEDATA
  bool tile_data_permitted = false;  // Linux granted this process the tile data (arch_prctl)
  bool neon = false, neon_dotprod = false, neon_fp16 = false, neon_i8mm = false;  // aarch64
  // 32-bit ARM (HWCAP_NEON, HWCAP_VFPv4, HWCAP_IDIVA): what an armv7 build needs
  // (toolchains/armv7-linux-gnueabihf.cmake compiles for NEON + VFPv4); no kernel requires them.
  bool arm32_neon = false, arm32_vfpv4 = false, arm32_idiv = false;
  // The core, where a kernel choice depends on it (isa.h preferences): AMD family 19h models
  // 00h-0Fh and 20h-5Fh (Milan, Vermeer, Rembrandt, Cezanne).
  bool amd_zen3 = false;
};

const CpuFeatures& cpu_features();  // detected once

}  // namespace encrt::kernels
