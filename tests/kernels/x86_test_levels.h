// The x86 kernel levels this CPU can run, for the x86 kernel tests; the others are reported
// (WARN) as not tested, with the reason.
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "kernels/kernel_table.h"

namespace encrt::kernels::test {

inline std::vector<IsaLevel> testable_x86_levels() {
  std::vector<IsaLevel> levels;
  for (IsaLevel level : kAllIsaLevels) {
    if (level == IsaLevel::kScalar) continue;
    if (isa_level_supported(level))
      levels.push_back(level);
    else
      WARN("x86 kernels of level " << isa_level_name(level) << " not tested: this CPU does not support it (best: "
                                   << isa_level_name(detect_isa_level()) << ")");
  }
  return levels;
}

}  // namespace encrt::kernels::test
