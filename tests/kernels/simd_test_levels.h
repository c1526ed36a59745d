// The SIMD kernel levels this CPU can run, for the kernel tests; the others of its architecture
// are reported (WARN) as not tested.
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "kernels/kernel_table.h"

namespace encrt::kernels::test {

// The levels of this architecture (x86 or ARM) that pass `of_arch`, filtered by what the CPU supports.
template <typename Pred>
std::vector<IsaLevel> testable_levels(Pred of_arch) {
  std::vector<IsaLevel> levels;
  for (IsaLevel level : kAllIsaLevels) {
    if (!of_arch(level)) continue;
    if (isa_level_supported(level))
      levels.push_back(level);
    else
      WARN("kernels of level " << isa_level_name(level) << " not tested: this CPU does not support it (best: "
                               << isa_level_name(detect_isa_level()) << ")");
  }
  return levels;
}

inline std::vector<IsaLevel> testable_x86_levels() { return testable_levels(is_x86_level); }

// x86 levels on x86, ARM levels on ARM.
inline std::vector<IsaLevel> testable_simd_levels() {
#if defined(ENCRT_ARCH_ARM64)
  return testable_levels(is_arm_level);
#else
  return testable_levels(is_x86_level);
#endif
}

}  // namespace encrt::kernels::test
