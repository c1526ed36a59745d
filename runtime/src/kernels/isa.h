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
// AMX-TILE + AMX-INT8 (tdpbusd on tile registers): the OS saves the tile state (XCR0 XTILECFG and
// XTILEDATA) and, on Linux, granted this process the tile data (arch_prctl, requested once when
// the CPU's features are first detected; elsewhere AMX counts as absent).
constexpr IsaFeatures kIsaAmxInt8 = 1u << 5;
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
// Not of the CPU either but of a layer's weights: they all lie in [-63, 63] (7-bit weights,
// kNarrowInt8Weight, kernel_types.h), so the AVX2 int8 GEMM may take the route that needs them
// (x86::qu8s7_gemm_6x16__avx2). cpu_isa_features() never has it: make_kernel_table adds it to
// find a table's KernelTable::gemm_u8s7, which the CPU backend runs on the layers it fits.
constexpr IsaFeatures kNarrowInt8Weights = 1u << 25;
constexpr IsaFeatures kIsaPreferences = kPreferSignedMadd | kNarrowInt8Weights;

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
//
// "amx" extends "avx512fp16" rather than "avx512vnni": every CPU with AMX-INT8 so far (Sapphire
// Rapids, Emerald Rapids, Granite Rapids) has AVX512-FP16 too, so the best preset of such a CPU
// gives it both the fp16-arithmetic GEMM and the AMX int8 GEMM, and "amx" is what its own
// features choose. Each kernel stays reachable with --isa on that one CPU: "amx" (AMX int8,
// fp16 arithmetic), "avx512fp16" (vpdpbusd int8, fp16 arithmetic), "avx512vnni" (vpdpbusd int8,
// fp16 weights widened to fp32). The AMX int8 GEMM itself requires AVX512-VNNI + AMX-INT8 only
// (lists/gemm_u8s8.h), so on a CPU with AMX-INT8 and no AVX512-FP16 (none is known; a VM could
// hide it) the CPU's own features, the default table, still choose it, as they choose the
// kernels of a CPU with AVX-VNNI beside AVX-512, although no preset past "avx512vnni" fits that
// CPU. A CPU with AVX512-FP16 whose OS withholds the tile data (Linux before 5.16, a seccomp
// filter that refuses arch_prctl) or without AMX (Alder Lake with AVX-512 enabled) stops at
// "avx512fp16", as before.
inline constexpr IsaLevel kIsaLevels[] = {
    {"scalar", 0},  // the portable reference kernels
    {"avx2", kIsaAvx2},
    {"avx2vnni", kIsaAvx2 | kIsaAvxVnni},
    {"avx512", kIsaAvx2 | kIsaAvx512},
    {"avx512vnni", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni},
    {"avx512fp16", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16},  // fp16 GEMMs in fp16 arithmetic
    {"amx", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16 | kIsaAmxInt8},  // int8 GEMM with tdpbusd
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
// avx512"; feature names: avx2, avx_vnni, avx512, avx512_vnni, avx512_fp16, amx_int8, neon,
// neon_dot, neon_fp16, neon_i8mm, prefer_signed_madd; an unnamed bit as 0x...).
std::string isa_features_name(IsaFeatures features);
// "scalar, avx2, avx2vnni, ...": every preset name, for error messages.
std::string isa_level_names();

}  // namespace encrt::kernels
