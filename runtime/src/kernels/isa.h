// ISA feature sets: what a kernel needs and what a CPU has, one bit per group of instructions
// the kernels use. A kernel can run where the features it requires are a subset of the CPU's
// (isa_supported). Each bit includes the OS saving the register state it needs (xgetbv on x86).
//
// The named levels ("avx512vnni", "neondot", ...) of ENCRT_ISA, --isa and SessionOptions::isa
// are presets: named feature sets, in kIsaLevels. kernel_table.h turns a feature set into a
// table of kernels (the most preferred entry of each kernel list, kernel_lists.h, that it can run).
#pragma once

#include <cstdint>
#include <string>

namespace encrt::kernels {

using IsaFeatures = uint32_t;

// x86-64.
constexpr IsaFeatures kIsaAvx2 = 1u << 0;        // AVX2 + FMA + F16C; the OS saves ymm state
constexpr IsaFeatures kIsaAvxVnni = 1u << 1;     // AVX-VNNI (VEX vpdpbusd on ymm)
constexpr IsaFeatures kIsaAvx512 = 1u << 2;      // AVX-512 F/BW/VL/DQ; the OS saves zmm and opmask state
constexpr IsaFeatures kIsaAvx512Vnni = 1u << 3;  // AVX512-VNNI (vpdpbusd)
constexpr IsaFeatures kIsaAvx512Fp16 = 1u << 4;  // AVX512-FP16 (vfmadd231ph)
// 64-bit ARM.
constexpr IsaFeatures kIsaNeon = 1u << 8;       // ARMv8.0 Advanced SIMD (every aarch64 core)
constexpr IsaFeatures kIsaNeonDot = 1u << 9;    // the dot product extension (sdot)
constexpr IsaFeatures kIsaNeonFp16 = 1u << 10;  // half-precision arithmetic (fmla .8h)
constexpr IsaFeatures kIsaNeonI8mm = 1u << 11;  // the int8 matrix multiply extension (usmmla)

// Preferences: not instruction sets but which of two kernels of the same instruction sets a core
// runs faster. A kernel list entry that names one is chosen only for a table that has it;
// isa_supported() ignores them (any CPU with the instructions can run either kernel);
// cpu_isa_features() includes this CPU's, and a forced level (--isa, ENCRT_ISA) keeps them.
// AVX2 int8 GEMM on the signed route (vpsignb + vpmaddubsw) rather than the widened one
// (vpmaddwd): AMD Zen 3 (family 19h without AVX-512; 142 against 101 Gop/s register-only).
constexpr IsaFeatures kPreferSignedMadd = 1u << 24;
constexpr IsaFeatures kIsaPreferences = kPreferSignedMadd;

// What this CPU and OS support (cpuid + xgetbv on x86, HWCAP on ARM), detected once.
IsaFeatures cpu_isa_features();
// Whether this CPU can run code that needs `features` (features ⊆ cpu_isa_features(), preferences
// aside).
bool isa_supported(IsaFeatures features);

// A named level: a preset feature set.
struct IsaLevel {
  const char* name;
  IsaFeatures features;
};

// Every preset, in order of preference within each architecture. "avx2vnni" sits beside the
// AVX-512 chain (Alder Lake-class laptops have AVX-VNNI and no AVX-512; Zen 4 has AVX-512 and no
// AVX-VNNI): the AVX-512 presets do not contain it.
inline constexpr IsaLevel kIsaLevels[] = {
    {"scalar", 0},  // the portable reference kernels
    {"avx2", kIsaAvx2},
    {"avx2vnni", kIsaAvx2 | kIsaAvxVnni},
    {"avx512", kIsaAvx2 | kIsaAvx512},
    {"avx512vnni", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni},
    {"avx512fp16", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16},  // fp16 GEMMs in fp16 arithmetic
    {"neon", kIsaNeon},
    {"neondot", kIsaNeon | kIsaNeonDot},
    {"neonfp16", kIsaNeon | kIsaNeonDot | kIsaNeonFp16},  // fp16 GEMMs in fp16 arithmetic
    {"neoni8mm", kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm},
};

// The preset called `name` (case-insensitive), or nullptr if there is none. The pointer is into
// kIsaLevels.
const IsaLevel* find_isa_level(const std::string& name);
// The last preset of kIsaLevels this CPU supports (its best named level).
const IsaLevel& best_isa_level();
// The preset's name when `features` equals one, else the features joined with '+' ("avx2+avx_vnni+
// avx512"; feature names: avx2, avx_vnni, avx512, avx512_vnni, avx512_fp16, neon, neon_dot,
// neon_fp16, neon_i8mm, prefer_signed_madd; an unnamed bit as 0x...).
std::string isa_features_name(IsaFeatures features);
// "scalar, avx2, avx2vnni, ...": every preset name, for error messages.
std::string isa_level_names();

}  // namespace encrt::kernels
