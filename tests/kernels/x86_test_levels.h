// The x86 kernel levels this CPU can run, for the x86 kernel tests; the others are reported
// (WARN) as not tested, with the reason.
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "kernels/kernel_table.h"

namespace encrt::kernels::test {

inline std::vector<IsaLevel> testable_x86_levels() {
  std::vector<IsaLevel> levels;
  const IsaLevel cpu = detect_isa_level();
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kAvx512Vnni, IsaLevel::kAvx512Fp16}) {
    if (level <= cpu)
      levels.push_back(level);
    else
      WARN("x86 kernels of level " << isa_level_name(level) << " not tested: this CPU only supports "
                                   << isa_level_name(cpu));
  }
  return levels;
}

}  // namespace encrt::kernels::test
