// CPU feature detection (cpuid + xgetbv on x86): what the processor has and the OS saves.
#pragma once

#include "kernels/kernel_table.h"

namespace encrt::kernels {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx_vnni = false, avx512fp16 = false;
  bool os_saves_ymm = false, os_saves_zmm = false;
  bool neon = false, neon_dotprod = false, neon_fp16 = false, neon_i8mm = false;  // aarch64
};

const CpuFeatures& cpu_features();
IsaLevel detect_cpu_isa_level();
bool cpu_supports_isa_level(IsaLevel level);

}  // namespace encrt::kernels
