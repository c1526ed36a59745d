// Named levels (presets) and the kernel tables made from the kernel lists:
//   - every preset has the features it always meant, and its table holds exactly the kernels the
//     level tables of the former x86_dispatch.cpp / arm_dispatch.cpp held (hard-coded below);
//   - a table's names and function pointers come from the same list entries;
//   - CPUs whose features are no preset (AVX-VNNI beside AVX-512) get the kernels of the best
//     preset they support;
//   - the ISA helpers (find_isa_level, isa_features_name, ...) behave as documented.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string>

#include "kernels/cpu_features.h"
#include "kernels/isa.h"
#include "kernels/kernel_lists.h"
#include "kernels/kernel_table.h"

using namespace encrt::kernels;

namespace {

// The kernel names a preset's table holds, one per op family.
struct ExpectedTable {
  const char* preset;
  const char* gemm_f32;
  const char* gemm_f16;
  bool gemm_f16_arith;
  const char* gemm_u8s8;
  const char* quantize_rows_u8;
  const char* layer_norm;
  const char* add_row_f16;
  const char* attention_f32;
  const char* attention_i8;
};

// A table of reference kernels.
constexpr ExpectedTable reference_table(const char* preset) {
  return {preset, "ref::gemm_f32", "ref::gemm_f16", false, "ref::gemm_u8s8",
          "ref::quantize_rows_u8", "ref::layer_norm", "ref::add_row_f16", "ref::attention_f32", "ref::attention_i8"};
}

// What x86_dispatch.cpp / arm_dispatch.cpp chose per level; the levels of the other architecture
// (and every level in a build without SIMD kernels) hold the reference kernels.
const ExpectedTable kExpected[] = {
    reference_table("scalar"),
#if defined(ENCRT_ARCH_X86)
    {"avx2", "x86::f32_gemm_6x16__avx2", "x86::f16w_gemm_6x16__avx2", false, "x86::qu8s8_gemm_6x8__avx2",
     "x86::qu8_quantize_rows__avx2", "x86::f32_layer_norm__avx2", "x86::f16_add_row__avx2", "x86::f32_attention__avx2",
     "x86::qs8_attention__avx2"},
    {"avx2vnni", "x86::f32_gemm_6x16__avx2", "x86::f16w_gemm_6x16__avx2", false, "x86::qu8s8_gemm_6x16__avxvnni",
     "x86::qu8_quantize_rows__avx2", "x86::f32_layer_norm__avx2", "x86::f16_add_row__avx2", "x86::f32_attention__avx2",
     "x86::qs8_attention__avxvnni"},
    {"avx512", "x86::f32_gemm_6x64__avx512", "x86::f16w_gemm_6x64__avx512", false, "x86::qu8s8_gemm_6x32__avx512",
     "x86::qu8_quantize_rows__avx512", "x86::f32_layer_norm__avx512", "x86::f16_add_row__avx2",
     "x86::f32_attention__avx512", "x86::qs8_attention__avx2"},
    {"avx512vnni", "x86::f32_gemm_6x64__avx512", "x86::f16w_gemm_6x64__avx512", false,
     "x86::qu8s8_gemm_8x48__avx512vnni", "x86::qu8_quantize_rows__avx512", "x86::f32_layer_norm__avx512",
     "x86::f16_add_row__avx2", "x86::f32_attention__avx512", "x86::qs8_attention__avx512vnni"},
    {"avx512fp16", "x86::f32_gemm_6x64__avx512", "x86::f16_gemm_8x48__avx512fp16", true,
     "x86::qu8s8_gemm_8x48__avx512vnni", "x86::qu8_quantize_rows__avx512", "x86::f32_layer_norm__avx512",
     "x86::f16_add_row__avx2", "x86::f32_attention__avx512", "x86::qs8_attention__avx512vnni"},
    // A new level (not in x86_dispatch.cpp): avx512fp16's kernels and the AMX int8 GEMM.
    {"amx", "x86::f32_gemm_6x64__avx512", "x86::f16_gemm_8x48__avx512fp16", true,
     "x86::qu8s8_gemm_32x32__amx", "x86::qu8_quantize_rows__avx512", "x86::f32_layer_norm__avx512",
     "x86::f16_add_row__avx2", "x86::f32_attention__avx512", "x86::qs8_attention__amx"},
#else
    reference_table("avx2"),
    reference_table("avx2vnni"),
    reference_table("avx512"),
    reference_table("avx512vnni"),
    reference_table("avx512fp16"),
    reference_table("amx"),
#endif
#if defined(ENCRT_ARCH_ARM64)
    {"neon", "arm::f32_gemm_6x16__neon", "arm::f16w_gemm_6x16__neon", false, "arm::qu8s8_gemm_2x16__neon",
     "arm::qu8_quantize_rows__neon", "arm::f32_layer_norm__neon", "arm::f16_add_row__neon", "arm::f32_attention__neon",
     "arm::qs8_attention__neon"},
    {"neondot", "arm::f32_gemm_6x16__neon", "arm::f16w_gemm_6x16__neon", false, "arm::qu8s8_gemm_4x16__neondot",
     "arm::qu8_quantize_rows__neon", "arm::f32_layer_norm__neon", "arm::f16_add_row__neon", "arm::f32_attention__neon",
     "arm::qs8_attention__neondot"},
    {"neonfp16", "arm::f32_gemm_6x16__neon", "arm::f16_gemm_6x16__neonfp16", true, "arm::qu8s8_gemm_4x16__neondot",
     "arm::qu8_quantize_rows__neon", "arm::f32_layer_norm__neon", "arm::f16_add_row__neon", "arm::f32_attention__neon",
     "arm::qs8_attention__neondot"},
    {"neoni8mm", "arm::f32_gemm_6x16__neon", "arm::f16_gemm_6x16__neonfp16", true, "arm::qu8s8_gemm_4x16__neoni8mm",
     "arm::qu8_quantize_rows__neon", "arm::f32_layer_norm__neon", "arm::f16_add_row__neon", "arm::f32_attention__neon",
     "arm::qs8_attention__neoni8mm"},
#else
    reference_table("neon"),
    reference_table("neondot"),
    reference_table("neonfp16"),
    reference_table("neoni8mm"),
#endif
};

// The entry of `list` named `name`, or nullptr.
template <typename Entry, size_t N>
const Entry* find_entry(const Entry (&list)[N], const char* name) {
  for (const Entry& e : list)
    if (std::strcmp(e.name, name) == 0) return &e;
  return nullptr;
}

// Every pointer and name of `t` comes from one entry of its family's list.
void check_consistent(const KernelTable& t) {
  const GemmF32Kernel* f32 = find_entry(kGemmF32Kernels, t.gemm_f32_name);
  REQUIRE(f32 != nullptr);
  CHECK(t.gemm_f32 == f32->fn);
  const GemmF16Kernel* f16 = find_entry(kGemmF16Kernels, t.gemm_f16_name);
  REQUIRE(f16 != nullptr);
  CHECK(t.gemm_f16 == f16->fn);
  CHECK(t.gemm_f16_arith == f16->arith);
  const GemmU8S8Kernel* u8s8 = find_entry(kGemmU8S8Kernels, t.gemm_u8s8_name);
  REQUIRE(u8s8 != nullptr);
  CHECK(t.gemm_u8s8 == u8s8->fn);
  const QuantizeRowsU8Kernel* quantize = find_entry(kQuantizeRowsU8Kernels, t.quantize_rows_u8_name);
  REQUIRE(quantize != nullptr);
  CHECK(t.quantize_rows_u8 == quantize->fn);
  const LayerNormKernel* layer_norm = find_entry(kLayerNormKernels, t.layer_norm_name);
  REQUIRE(layer_norm != nullptr);
  CHECK(t.layer_norm == layer_norm->fn);
  const AddRowF16Kernel* add_row = find_entry(kAddRowF16Kernels, t.add_row_f16_name);
  REQUIRE(add_row != nullptr);
  CHECK(t.add_row_f16 == add_row->fn);
  const AttentionKernel* attention_f32 = find_entry(kAttentionF32Kernels, t.attention_f32_name);
  REQUIRE(attention_f32 != nullptr);
  CHECK(t.attention_f32 == attention_f32->fn);
  CHECK(t.attention_f32_scratch == attention_f32->scratch);
  const AttentionKernel* attention_i8 = find_entry(kAttentionI8Kernels, t.attention_i8_name);
  REQUIRE(attention_i8 != nullptr);
  CHECK(t.attention_i8 == attention_i8->fn);
  CHECK(t.attention_i8_scratch == attention_i8->scratch);
}

// The same kernels in both tables (features aside).
void check_same_kernels(const KernelTable& a, const KernelTable& b) {
  CHECK(a.gemm_f32 == b.gemm_f32);
  CHECK(a.gemm_f16 == b.gemm_f16);
  CHECK(a.gemm_u8s8 == b.gemm_u8s8);
  CHECK(a.quantize_rows_u8 == b.quantize_rows_u8);
  CHECK(a.layer_norm == b.layer_norm);
  CHECK(a.add_row_f16 == b.add_row_f16);
  CHECK(a.attention_f32 == b.attention_f32);
  CHECK(a.attention_i8 == b.attention_i8);
}

}  // namespace

TEST_CASE("presets keep their names and features", "[isa]") {
  const struct {
    const char* name;
    IsaFeatures features;
  } want[] = {
      {"scalar", 0},
      {"avx2", kIsaAvx2},
      {"avx2vnni", kIsaAvx2 | kIsaAvxVnni},
      {"avx512", kIsaAvx2 | kIsaAvx512},
      {"avx512vnni", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni},
      {"avx512fp16", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16},
      {"amx", kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16 | kIsaAmxInt8},
      {"neon", kIsaNeon},
      {"neondot", kIsaNeon | kIsaNeonDot},
      {"neonfp16", kIsaNeon | kIsaNeonDot | kIsaNeonFp16},
      {"neoni8mm", kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm},
  };
  REQUIRE(std::size(kIsaLevels) == std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    INFO(want[i].name);
    CHECK(std::string(kIsaLevels[i].name) == want[i].name);
    CHECK(kIsaLevels[i].features == want[i].features);
    CHECK(find_isa_level(want[i].name) == &kIsaLevels[i]);
    CHECK(isa_features_name(want[i].features) == want[i].name);
  }
  CHECK(isa_level_names() ==
        "scalar, avx2, avx2vnni, avx512, avx512vnni, avx512fp16, amx, neon, neondot, neonfp16, neoni8mm");
}

TEST_CASE("ISA helpers", "[isa]") {
  CHECK(find_isa_level("AVX512VNNI") == find_isa_level("avx512vnni"));
  CHECK(find_isa_level("NeonDot") == find_isa_level("neondot"));
  CHECK(find_isa_level("avx9000") == nullptr);
  CHECK(find_isa_level("") == nullptr);
  CHECK(find_isa_level("avx512vnnix") == nullptr);
  CHECK(find_isa_level("avx512_vnni") == nullptr);  // feature names are not presets
  CHECK(isa_features_name(kIsaAvx2 | kIsaAvxVnni | kIsaAvx512) == "avx2+avx_vnni+avx512");
  CHECK(isa_features_name(kIsaAvx512Fp16) == "avx512_fp16");
  CHECK(isa_features_name(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kIsaAmxInt8) == "avx2+avx512+avx512_vnni+amx_int8");
  CHECK(isa_features_name(kIsaNeon | kIsaNeonI8mm) == "neon+neon_i8mm");
  CHECK(isa_features_name(kIsaAvx2 | (1u << 30)) == "avx2+0x40000000");
  CHECK(isa_supported(0));
  CHECK(isa_supported(cpu_isa_features()));
  const IsaLevel& best = best_isa_level();
  INFO("CPU features " << isa_features_name(cpu_isa_features()) << ", best preset " << best.name);
  CHECK(isa_supported(best.features));
  for (const IsaLevel& l : kIsaLevels)  // no later preset is supported
    if (&l > &best) CHECK_FALSE(isa_supported(l.features));
#if defined(ENCRT_ARCH_X86)
  CHECK((cpu_isa_features() & (kIsaNeon | kIsaNeonDot | kIsaNeonFp16 | kIsaNeonI8mm)) == 0);
#elif defined(ENCRT_ARCH_ARM64)
  CHECK((cpu_isa_features() & kIsaNeon) != 0);
  CHECK((cpu_isa_features() & (kIsaAvx2 | kIsaAvxVnni | kIsaAvx512 | kIsaAvx512Vnni | kIsaAvx512Fp16 | kIsaAmxInt8)) ==
        0);
#endif
}

TEST_CASE("every preset's table holds the kernels its level always had", "[dispatch]") {
  REQUIRE(std::size(kExpected) == std::size(kIsaLevels));
  for (const ExpectedTable& e : kExpected) {
    INFO(e.preset);
    const IsaLevel* level = find_isa_level(e.preset);
    REQUIRE(level != nullptr);
    const KernelTable t = make_kernel_table(level->features);
    CHECK(t.features == level->features);
    CHECK(std::string(t.gemm_f32_name) == e.gemm_f32);
    CHECK(std::string(t.gemm_f16_name) == e.gemm_f16);
    CHECK(t.gemm_f16_arith == e.gemm_f16_arith);
    CHECK(std::string(t.gemm_u8s8_name) == e.gemm_u8s8);
    CHECK(std::string(t.quantize_rows_u8_name) == e.quantize_rows_u8);
    CHECK(std::string(t.layer_norm_name) == e.layer_norm);
    CHECK(std::string(t.add_row_f16_name) == e.add_row_f16);
    CHECK(std::string(t.attention_f32_name) == e.attention_f32);
    CHECK(std::string(t.attention_i8_name) == e.attention_i8);
    check_consistent(t);
    // The cached table of the preset is the same.
    const KernelTable* cached = preset_kernel_table(*level);
    REQUIRE(cached != nullptr);
    CHECK(cached->features == level->features);
    check_same_kernels(*cached, t);
  }
  const IsaLevel not_a_preset{"x", kIsaAvx2 | kIsaAvxVnni | kIsaAvx512};
  CHECK(preset_kernel_table(not_a_preset) == nullptr);
}

TEST_CASE("CPUs that are no preset get the kernels of their best preset", "[dispatch]") {
  // A CPU with AVX-VNNI and AVX-512 (Sapphire Rapids and later): the AVX-512 kernels, never the
  // AVX-VNNI ymm ones, except where the level's own kernel is a ymm one too: AVX-512 without VNNI
  // (no known CPU has AVX-VNNI and not AVX512-VNNI) runs the avx2 int8 attention, and then the
  // AVX-VNNI one, the same code on vpdpbusd, is the better.
  const IsaFeatures avxvnni = kIsaAvxVnni;
  for (const char* preset : {"avx512", "avx512vnni", "avx512fp16", "amx"}) {
    INFO(preset << " + avx_vnni");
    const IsaLevel* level = find_isa_level(preset);
    REQUIRE(level != nullptr);
    const KernelTable with = make_kernel_table(level->features | avxvnni);
    KernelTable expected = make_kernel_table(level->features);
#if defined(ENCRT_ARCH_X86)
    if (std::string(preset) == "avx512") {
      CHECK(std::string(with.attention_i8_name) == "x86::qs8_attention__avxvnni");
      const KernelTable vnni = make_kernel_table(kIsaAvx2 | kIsaAvxVnni);
      expected.attention_i8 = vnni.attention_i8;
      expected.attention_i8_scratch = vnni.attention_i8_scratch;
      expected.attention_i8_name = vnni.attention_i8_name;
    }
#endif
    check_same_kernels(with, expected);
    check_consistent(with);
  }
#if defined(ENCRT_ARCH_X86)
  // A CPU with AMX-INT8 and no AVX512-FP16 (none is known; a VM could hide it) is no preset past
  // avx512vnni: it gets avx512vnni's kernels but the AMX int8 GEMM and attention, which need no
  // AVX512-FP16.
  {
    const IsaFeatures vnni = find_isa_level("avx512vnni")->features;
    const KernelTable with = make_kernel_table(vnni | kIsaAmxInt8), without = make_kernel_table(vnni);
    check_consistent(with);
    CHECK(std::string(with.gemm_u8s8_name) == "x86::qu8s8_gemm_32x32__amx");
    CHECK(std::string(with.attention_i8_name) == "x86::qs8_attention__amx");
    KernelTable same = with;
    same.gemm_u8s8 = without.gemm_u8s8;
    same.attention_i8 = without.attention_i8;
    same.attention_i8_scratch = without.attention_i8_scratch;
    same.attention_i8_name = without.attention_i8_name;
    check_same_kernels(same, without);
    // AMX-INT8 without AVX512-VNNI, or without AVX-512, changes nothing.
    check_same_kernels(make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAmxInt8), make_kernel_table(kIsaAvx2 | kIsaAvx512));
    check_same_kernels(make_kernel_table(kIsaAvx2 | kIsaAmxInt8), make_kernel_table(kIsaAvx2));
  }
#endif
  // Features beyond what any kernel needs change nothing; missing prerequisites fall back.
  check_same_kernels(make_kernel_table(kIsaAvx512 | kIsaAvx512Vnni), make_kernel_table(0));  // no AVX2
  check_same_kernels(make_kernel_table(kIsaNeonDot | kIsaNeonFp16), make_kernel_table(0));   // no NEON
  check_same_kernels(make_kernel_table(kIsaNeon | kIsaNeonFp16), make_kernel_table(kIsaNeon));  // fp16, no dot
  // This CPU: its own features pick the kernels of its best preset (with its preferences, plus
  // the AMX int8 GEMM where the CPU has AMX-INT8 without AVX512-FP16, as above), and the default
  // table is that one unless ENCRT_ISA names another supported preset.
  const IsaFeatures preferences = cpu_isa_features() & kIsaPreferences;
  const KernelTable mine = make_kernel_table(cpu_isa_features());
  INFO("CPU features " << isa_features_name(cpu_isa_features()));
  check_same_kernels(mine, make_kernel_table(best_isa_level().features | preferences | (cpu_isa_features() & kIsaAmxInt8)));
  const char* env = std::getenv("ENCRT_ISA");
  const IsaLevel* forced = env ? find_isa_level(env) : nullptr;
  const KernelTable& d = default_kernel_table();
  if (forced && isa_supported(forced->features)) {
    CHECK(d.features == (forced->features | preferences));
  } else {
    CHECK(d.features == cpu_isa_features());
  }
  check_consistent(d);
}

TEST_CASE("preferences choose between kernels of the same instructions", "[dispatch]") {
  CHECK(isa_supported(kIsaPreferences));  // no instructions of their own
  CHECK(isa_features_name(kIsaAvx2 | kPreferSignedMadd) == "avx2+prefer_signed_madd");
  const KernelTable plain = make_kernel_table(kIsaAvx2);
  CHECK(plain.gemm_u8s8_weight_bound == kAnyWeights);
  CHECK(plain.gemm_u8s8_any_weights == plain.gemm_u8s8);
#if defined(ENCRT_ARCH_X86)
  CHECK(std::string(plain.gemm_u8s8_name) == "x86::qu8s8_gemm_6x8__avx2");
  const KernelTable prefer = make_kernel_table(kIsaAvx2 | kPreferSignedMadd);
  CHECK(std::string(prefer.gemm_u8s8_name) == "x86::qu8s8_gemm_4x16__avx2");
  CHECK(prefer.gemm_u8s8_weight_bound == kSymmetricWeights);
  CHECK(std::string(prefer.gemm_u8s8_any_weights_name) == "x86::qu8s8_gemm_6x8__avx2");
  CHECK(prefer.gemm_u8s8_any_weights == plain.gemm_u8s8);
  CHECK(prefer.gemm_u8s8_workspace != nullptr);
  CHECK(prefer.gemm_u8s8_workspace(384) == static_cast<size_t>(x86::kEncodedRows) * x86::kEncodedGroupBytes * 96);
  // Everything else, and every table with VNNI, is the same with the preference or without.
  check_same_kernels(make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kPreferSignedMadd),
                     make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni));
  CHECK(prefer.gemm_f32 == plain.gemm_f32);
  CHECK(prefer.attention_i8 == plain.attention_i8);
  // The preference is the CPU's own: AMD Zen 3 (family 19h without AVX-512).
  CHECK(((cpu_isa_features() & kPreferSignedMadd) != 0) ==
        (isa_supported(kIsaAvx2) && !isa_supported(kIsaAvx512) && cpu_features().amd_zen3));
  // 7-bit weights: the AVX2 level's route for them, with or without the signed preference; a
  // table with VNNI keeps its own kernel.
  const KernelTable narrow = make_kernel_table(kIsaAvx2 | kPreferSignedMadd | kNarrowInt8Weights);
  CHECK(std::string(narrow.gemm_u8s8_name) == "x86::qu8s7_gemm_6x16__avx2");
  CHECK(narrow.gemm_u8s8_weight_bound == kNarrowInt8Weight);
  CHECK(std::string(narrow.gemm_u8s8_any_weights_name) == "x86::qu8s8_gemm_6x8__avx2");
  CHECK(std::string(make_kernel_table(kIsaAvx2 | kNarrowInt8Weights).gemm_u8s8_name) == "x86::qu8s7_gemm_6x16__avx2");
  check_same_kernels(make_kernel_table(kIsaAvx2 | kIsaAvxVnni | kNarrowInt8Weights), make_kernel_table(kIsaAvx2 | kIsaAvxVnni));
  check_same_kernels(make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni | kNarrowInt8Weights),
                     make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni));
  CHECK(isa_features_name(kIsaAvx2 | kNarrowInt8Weights) == "avx2+narrow_int8_weights");
  // Every AVX2 table without VNNI offers it for the linears with 7-bit weights; VNNI tables none.
  CHECK(plain.gemm_u8s7 == narrow.gemm_u8s8);
  CHECK(prefer.gemm_u8s7 == narrow.gemm_u8s8);
  CHECK(std::string(prefer.gemm_u8s7_name) == "x86::qu8s7_gemm_6x16__avx2");
  CHECK(make_kernel_table(kIsaAvx2 | kIsaAvxVnni).gemm_u8s7 == nullptr);
  CHECK(make_kernel_table(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni).gemm_u8s7 == nullptr);
  CHECK(make_kernel_table(0).gemm_u8s7 == nullptr);
#endif
  // No CPU claims 7-bit weights: they are a layer's, which the CPU backend checks.
  CHECK((cpu_isa_features() & kNarrowInt8Weights) == 0);
  // A kernel that needs a narrower weight range always has one for any weights beside it.
  for (const GemmU8S8Kernel& k : kGemmU8S8Kernels) {
    const KernelTable t = make_kernel_table(k.features);
    INFO(k.name);
    CHECK(t.gemm_u8s8 == k.fn);
    const GemmU8S8Kernel* any = find_entry(kGemmU8S8Kernels, t.gemm_u8s8_any_weights_name);
    REQUIRE(any != nullptr);
    CHECK(any->weight_bound == kAnyWeights);
    CHECK(t.gemm_u8s8_any_weights == any->fn);
    CHECK(t.gemm_u8s8_any_weights_workspace == any->workspace);
    // How the CPU backend splits a linear comes with the kernel that runs it.
    CHECK(t.gemm_u8s8_min_task_rows == k.min_task_rows);
    CHECK(t.gemm_u8s8_min_rows_per_thread == k.min_rows_per_thread);
    CHECK(t.gemm_u8s8_any_weights_min_task_rows == any->min_task_rows);
    CHECK(t.gemm_u8s8_any_weights_min_rows_per_thread == any->min_rows_per_thread);
  }
}

TEST_CASE("kernel lists: names are unique symbols, the reference first", "[dispatch]") {
  auto check = [](const auto& list) {
    std::set<std::string> names;
    for (const auto& k : list) {
      INFO(k.name);
      CHECK(names.insert(k.name).second);
      const std::string name = k.name;
      CHECK((name.rfind("ref::", 0) == 0) == (k.features == 0));
      CHECK(name.find(' ') == std::string::npos);
    }
  };
  check(kGemmF32Kernels);
  check(kGemmF16Kernels);
  check(kGemmU8S8Kernels);
  check(kQuantizeRowsU8Kernels);
  check(kLayerNormKernels);
  check(kAddRowF16Kernels);
  check(kAttentionF32Kernels);
  check(kAttentionI8Kernels);
}
