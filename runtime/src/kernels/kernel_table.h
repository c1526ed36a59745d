// The kernel table: one function pointer per op, filled once for the CPU we run on (or for a
// level forced by the caller / ENCRT_ISA). The hot path only follows these pointers.
#pragma once

#include <string>

#include "kernels/isa.h"
#include "kernels/kernel_types.h"

namespace encrt::kernels {

// Ordered by preference. Each level needs what the levels before it need, except kAvx2Vnni: it
// sits beside the AVX-512 chain (Alder Lake-class laptops have AVX-VNNI and no AVX-512; Zen 4 has
// AVX-512 and no AVX-VNNI), so whether a CPU can run a level is isa_level_supported(), not a
// comparison with its best level. Tables of the AVX-512 levels replace every entry kAvx2Vnni sets.
enum class IsaLevel : int {
  kScalar = 0,      // portable C++ reference kernels
  kAvx2 = 1,        // AVX2 + FMA + F16C
  kAvx2Vnni = 2,    // + AVX-VNNI (vpdpbusd on ymm, VEX-encoded)
  kAvx512 = 3,      // AVX2 + FMA + F16C + AVX-512 F/BW/VL/DQ
  kAvx512Vnni = 4,  // + AVX512-VNNI (vpdpbusd)
  kAvx512Fp16 = 5,  // + AVX512-FP16 (vfmadd231ph): fp16 models run in fp16 arithmetic
  // 64-bit ARM:
  kNeon = 6,        // ARMv8.0 Advanced SIMD (every aarch64 core)
  kNeonDot = 7,     // + the dot product extension (sdot; Cortex-A55/A75 and later)
  kNeonFp16 = 8,    // + half-precision arithmetic (fmla .8h): fp16 models run in fp16 arithmetic
  kNeonI8mm = 9,    // + the int8 matrix multiply extension (usmmla; Armv8.6 cores)
};
constexpr IsaLevel kAllIsaLevels[] = {IsaLevel::kScalar,     IsaLevel::kAvx2,       IsaLevel::kAvx2Vnni,
                                      IsaLevel::kAvx512,     IsaLevel::kAvx512Vnni, IsaLevel::kAvx512Fp16,
                                      IsaLevel::kNeon,       IsaLevel::kNeonDot,    IsaLevel::kNeonFp16,
                                      IsaLevel::kNeonI8mm};
inline bool is_x86_level(IsaLevel l) { return l >= IsaLevel::kAvx2 && l <= IsaLevel::kAvx512Fp16; }
inline bool is_arm_level(IsaLevel l) { return l >= IsaLevel::kNeon; }
// Levels whose GemmF16Fn computes in fp16 arithmetic (ref::gemm_f16_arith's semantics) rather
// than widening the weights to fp32.
inline bool fp16_arithmetic(IsaLevel l) { return l == IsaLevel::kAvx512Fp16 || l >= IsaLevel::kNeonFp16; }

const char* isa_level_name(IsaLevel level);
// Parses "scalar", "avx2", "avx2vnni", "avx512", "avx512vnni", "avx512fp16", "neon", "neondot",
// "neonfp16", "neoni8mm" (case-insensitive). Returns false if unknown.
bool parse_isa_level(const std::string& text, IsaLevel* level);

// The best level this CPU and OS support (cpuid + xgetbv), detected once.
IsaLevel detect_isa_level();
// Whether this CPU and OS can run the kernels of `level`.
bool isa_level_supported(IsaLevel level);

struct KernelTable {
  IsaLevel level = IsaLevel::kScalar;
  IsaFeatures features = 0;  // what make_kernel_table chose for
  // Names of the functions chosen, for profiles and logs (XNNPACK style: dtype-op-tile__isa).
  const char* gemm_f32_name = "";
  const char* gemm_f16_name = "";
  const char* gemm_u8s8_name = "";
  const char* attention_name = "";     // fp32 attention
  const char* attention_i8_name = "";
  const char* quantize_rows_u8_name = "";
  const char* layer_norm_name = "";
  const char* add_row_f16_name = "";
  const char* attention_f32_name = "";
  // Whether gemm_f16 computes in fp16 arithmetic (ref::gemm_f16_arith) rather than widening the
  // weights to fp32 (ref::gemm_f16).
  bool gemm_f16_arith = false;

  GemmF32Fn gemm_f32 = nullptr;
  GemmF16Fn gemm_f16 = nullptr;
  GemmU8S8Fn gemm_u8s8 = nullptr;
  QuantizeRowsU8Fn quantize_rows_u8 = nullptr;
  LayerNormFn layer_norm = nullptr;
  AddRowF16Fn add_row_f16 = nullptr;
  AttentionFn attention_f32 = nullptr;
  AttentionScratchFn attention_f32_scratch = nullptr;
  AttentionFn attention_i8 = nullptr;
  AttentionScratchFn attention_i8_scratch = nullptr;
};

// For each op family, the most preferred kernel of its list (kernel_lists.h) whose required
// features are a subset of `features`.
KernelTable make_kernel_table(IsaFeatures features);

// The table for `level`, with every entry filled: an op without a faster variant at that level
// uses the best lower one. `level` must be isa_level_supported() (callers check).
const KernelTable& kernel_table(IsaLevel level);

// The table for this CPU, honouring ENCRT_ISA=scalar|avx2|avx2vnni|avx512|avx512vnni|avx512fp16 when it is set to
// a level the CPU supports.
const KernelTable& default_kernel_table();

}  // namespace encrt::kernels
