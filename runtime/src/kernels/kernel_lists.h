// One list per op family: every kernel of the family with the ISA features it requires, built
// from the enumerator headers in lists/ (XNNPACK's microkernel enumerators). A list starts with
// the reference (ref::, features 0) and goes on in order of preference; the kernel table takes
// the last entry a CPU can run (choose_kernel), and the tests and benchmarks run every entry.
// A kernel's name is its symbol ("x86::qu8s8_gemm_8x48__avx512vnni", spelled by the macro from
// the function named in the list), so names cannot drift from what runs.
//
// ISA-neutral: this header and the lists name functions only through their declarations
// (ref_kernels.h, x86_kernels.h, attention_x86.h, arm_kernels.h); nothing here runs kernel code.
#pragma once

#include <cstddef>

#include "kernels/isa.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#if defined(ENCRT_ARCH_X86)
#include "kernels/x86/attention_x86.h"
#include "kernels/x86/x86_kernels.h"
#elif defined(ENCRT_ARCH_ARM64)
#include "kernels/arm/arm_kernels.h"
#endif

namespace encrt::kernels {

// How a GemmF16Fn computes (the `arith` of lists/gemm_f16.h; kernel_types.h): weights widened to
// fp32 as ref::gemm_f16, or fp16 arithmetic as ref::gemm_f16_arith.
constexpr bool kWidensToF32 = false;
constexpr bool kFp16Arith = true;

struct GemmF32Kernel {
  GemmF32Fn fn;
  const char* name;
  IsaFeatures features;
};
struct GemmF16Kernel {
  GemmF16Fn fn;
  const char* name;
  IsaFeatures features;
  bool arith;  // kFp16Arith: computes ref::gemm_f16_arith, not ref::gemm_f16
};
// Which int8 weights a GemmU8S8Fn takes (the `weights` of lists/gemm_u8s8.h), as the largest |w|
// it is exact for (-128 counting as 128): any int8; only [-127, 127] (the converter's symmetric
// range), for kernels whose route would get -128 wrong; or only [-63, 63] (7-bit weights), for
// kernels whose int16 pair sums would saturate past it.
constexpr int kAnyWeights = 128;
constexpr int kSymmetricWeights = 127;
constexpr int kNarrowWeights = kNarrowInt8Weight;

struct GemmU8S8Kernel {
  GemmU8S8Fn fn;
  const char* name;
  IsaFeatures features;
  int weight_bound;               // kAnyWeights, kSymmetricWeights or kNarrowWeights: every |w| <= it
  GemmU8S8WorkspaceFn workspace;  // bytes of QuantizedRows::workspace it needs; null: none
  int min_task_rows;              // the fewest rows worth one task when a linear is split by rows; 0: any
  int min_rows_per_thread;        // split by rows only when each thread gets this many; 0: the backend's default
};
struct QuantizeRowsU8Kernel {
  QuantizeRowsU8Fn fn;
  const char* name;
  IsaFeatures features;
};
struct LayerNormKernel {
  LayerNormFn fn;
  const char* name;
  IsaFeatures features;
};
struct AddRowF16Kernel {
  AddRowF16Fn fn;
  const char* name;
  IsaFeatures features;
};
struct GeluKernel {
  GeluFn fn;
  const char* name;
  IsaFeatures features;
};
struct AttentionKernel {
  AttentionFn fn;
  const char* name;
  IsaFeatures features;
  AttentionScratchFn scratch;  // the bytes of scratch fn needs for (seq, head_dim)
};

inline constexpr GemmF32Kernel kGemmF32Kernels[] = {
#define ENCRT_GEMM_F32_KERNEL(features, fn) {fn, #fn, features},
#include "kernels/lists/gemm_f32.h"
#undef ENCRT_GEMM_F32_KERNEL
};
inline constexpr GemmF16Kernel kGemmF16Kernels[] = {
#define ENCRT_GEMM_F16_KERNEL(features, fn, arith) {fn, #fn, features, arith},
#include "kernels/lists/gemm_f16.h"
#undef ENCRT_GEMM_F16_KERNEL
};
inline constexpr GemmU8S8Kernel kGemmU8S8Kernels[] = {
#define ENCRT_GEMM_U8S8_KERNEL(features, fn, weights, workspace, min_task_rows, min_rows_per_thread) \
  {fn, #fn, features, weights, workspace, min_task_rows, min_rows_per_thread},
#include "kernels/lists/gemm_u8s8.h"
#undef ENCRT_GEMM_U8S8_KERNEL
};
inline constexpr QuantizeRowsU8Kernel kQuantizeRowsU8Kernels[] = {
#define ENCRT_QUANTIZE_ROWS_U8_KERNEL(features, fn) {fn, #fn, features},
#include "kernels/lists/quantize_rows_u8.h"
#undef ENCRT_QUANTIZE_ROWS_U8_KERNEL
};
inline constexpr LayerNormKernel kLayerNormKernels[] = {
#define ENCRT_LAYER_NORM_KERNEL(features, fn) {fn, #fn, features},
#include "kernels/lists/layer_norm.h"
#undef ENCRT_LAYER_NORM_KERNEL
};
inline constexpr AddRowF16Kernel kAddRowF16Kernels[] = {
#define ENCRT_ADD_ROW_F16_KERNEL(features, fn) {fn, #fn, features},
#include "kernels/lists/add_row_f16.h"
#undef ENCRT_ADD_ROW_F16_KERNEL
};
inline constexpr GeluKernel kGeluKernels[] = {
#define ENCRT_GELU_KERNEL(features, fn) {fn, #fn, features},
#include "kernels/lists/gelu.h"
#undef ENCRT_GELU_KERNEL
};
inline constexpr AttentionKernel kAttentionF32Kernels[] = {
#define ENCRT_ATTENTION_F32_KERNEL(features, fn, scratch) {fn, #fn, features, scratch},
#include "kernels/lists/attention_f32.h"
#undef ENCRT_ATTENTION_F32_KERNEL
};
inline constexpr AttentionKernel kAttentionI8Kernels[] = {
#define ENCRT_ATTENTION_I8_KERNEL(features, fn, scratch) {fn, #fn, features, scratch},
#include "kernels/lists/attention_i8.h"
#undef ENCRT_ATTENTION_I8_KERNEL
};

// The entry of `list` a CPU with `features` runs: the last one whose required features are a
// subset of `features` (at worst the reference, which needs none).
template <typename Entry, size_t N>
constexpr const Entry& choose_kernel(const Entry (&list)[N], IsaFeatures features) {
  size_t chosen = 0;
  for (size_t i = 0; i < N; ++i)
    if ((list[i].features & ~features) == 0) chosen = i;
  return list[chosen];
}

// The most workspace any int8 GEMM of the list needs at depth K (for callers that run them all).
inline size_t max_gemm_u8s8_workspace(int K) {
  size_t bytes = 0;
  for (const GemmU8S8Kernel& k : kGemmU8S8Kernels)
    if (k.workspace && k.workspace(K) > bytes) bytes = k.workspace(K);
  return bytes;
}

// A well-formed list starts with the reference, and every entry is the one chosen for its own
// features (no later entry that needs less hides it, so each one can run somewhere).
template <typename Entry, size_t N>
constexpr bool well_formed(const Entry (&list)[N]) {
  if (list[0].features != 0) return false;
  for (size_t i = 0; i < N; ++i)
    if (&choose_kernel(list, list[i].features) != &list[i]) return false;
  return true;
}
static_assert(well_formed(kGemmF32Kernels));
static_assert(well_formed(kGemmF16Kernels) && !kGemmF16Kernels[0].arith);
// Kernels that need a narrower weight range are chosen only under a preference, so that the
// table without preferences has a kernel for any weights (make_kernel_table's
// gemm_u8s8_any_weights); those that need 7-bit weights only under kNarrowInt8Weights, which
// no CPU has (make_kernel_table's gemm_u8s7).
template <size_t N>
constexpr bool narrow_only_by_preference(const GemmU8S8Kernel (&list)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (list[i].weight_bound < kAnyWeights && !(list[i].features & kIsaPreferences)) return false;
    if (list[i].weight_bound < kSymmetricWeights && !(list[i].features & kNarrowInt8Weights)) return false;
  }
  return true;
}
static_assert(well_formed(kGemmU8S8Kernels) && narrow_only_by_preference(kGemmU8S8Kernels));
static_assert(well_formed(kQuantizeRowsU8Kernels));
static_assert(well_formed(kLayerNormKernels));
static_assert(well_formed(kAddRowF16Kernels));
static_assert(well_formed(kGeluKernels));
static_assert(well_formed(kAttentionF32Kernels));
static_assert(well_formed(kAttentionI8Kernels));

}  // namespace encrt::kernels
