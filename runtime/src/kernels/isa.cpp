#include "kernels/isa.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "kernels/cpu_features.h"

namespace encrt::kernels {

namespace {

IsaFeatures detect_isa_features() {
  const CpuFeatures& f = cpu_features();
  IsaFeatures s = 0;
  if (f.os_saves_ymm && f.avx2 && f.fma && f.f16c) s |= kIsaAvx2;
  if (f.os_saves_ymm && f.avx_vnni) s |= kIsaAvxVnni;
  if (f.os_saves_zmm && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) s |= kIsaAvx512;
  if (f.os_saves_zmm && f.avx512vnni) s |= kIsaAvx512Vnni;
  if (f.os_saves_zmm && f.avx512fp16) s |= kIsaAvx512Fp16;
  if (f.os_saves_tiles && f.tile_data_permitted && f.amx_tile && f.amx_int8) s |= kIsaAmxInt8;
  if (f.neon) s |= kIsaNeon;
  if (f.neon_dotprod) s |= kIsaNeonDot;
  if (f.neon_fp16) s |= kIsaNeonFp16;
  if (f.neon_i8mm) s |= kIsaNeonI8mm;
  if (f.amd_zen3 && (s & kIsaAvx2) && !(s & kIsaAvx512)) s |= kPreferSignedMadd;
  return s;
}

struct FeatureName {
  IsaFeatures bit;
  const char* name;
};
constexpr FeatureName kFeatureNames[] = {
    {kIsaAvx2, "avx2"},
    {kIsaAvxVnni, "avx_vnni"},
    {kIsaAvx512, "avx512"},
    {kIsaAvx512Vnni, "avx512_vnni"},
    {kIsaAvx512Fp16, "avx512_fp16"},
    {kIsaAmxInt8, "amx_int8"},
    {kIsaNeon, "neon"},
    {kIsaNeonDot, "neon_dot"},
    {kIsaNeonFp16, "neon_fp16"},
    {kIsaNeonI8mm, "neon_i8mm"},
    {kPreferSignedMadd, "prefer_signed_madd"},
    {kNarrowInt8Weights, "narrow_int8_weights"},
};

}  // namespace

IsaFeatures cpu_isa_features() {
  static const IsaFeatures features = detect_isa_features();
  return features;
}

bool isa_supported(IsaFeatures features) { return (features & ~kIsaPreferences & ~cpu_isa_features()) == 0; }

const IsaLevel* find_isa_level(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const IsaLevel& level : kIsaLevels)
    if (lower == level.name) return &level;
  return nullptr;
}

const IsaLevel& best_isa_level() {
  static const IsaLevel* const best = [] {
    const IsaLevel* b = &kIsaLevels[0];
    for (const IsaLevel& level : kIsaLevels)
      if (isa_supported(level.features)) b = &level;  // in order of preference
    return b;
  }();
  return *best;
}

std::string isa_features_name(IsaFeatures features) {
  for (const IsaLevel& level : kIsaLevels)
    if (level.features == features) return level.name;
  std::string s;
  IsaFeatures rest = features;
  for (const FeatureName& f : kFeatureNames) {
    if (!(features & f.bit)) continue;
    if (!s.empty()) s += '+';
    s += f.name;
    rest &= ~f.bit;
  }
  if (rest != 0) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%x", static_cast<unsigned>(rest));
    if (!s.empty()) s += '+';
    s += hex;
  }
  return s;
}

std::string isa_level_names() {
  std::string s;
  for (const IsaLevel& level : kIsaLevels) {
    if (!s.empty()) s += ", ";
    s += level.name;
  }
  return s;
}

}  // namespace encrt::kernels
