#include "backend/backend_under_test.h"

#include "kernels/kernel_table.h"

namespace encrt::conformance {

namespace {
BackendUnderTest g_backend;
}  // namespace

const BackendUnderTest& backend_under_test() { return g_backend; }
void set_backend_under_test(BackendUnderTest b) { g_backend = std::move(b); }

const backend::Options& reference_options() {
  static const backend::Options options = {{"isa", "scalar"}};
  return options;
}

backend::Options reference_options_for(const detail::SessionImpl& under_test) {
  backend::Options o = reference_options();
  if (under_test.dequantized_int8) o["int8_linears"] = "f16";
  return o;
}

namespace {
// Whether the CPU backend with these options computes fp16 linears in fp16 arithmetic.
bool cpu_f16_arith(const BackendUnderTest& b) {
  const auto it = b.options.find("isa");
  const kernels::IsaLevel* level = it == b.options.end() ? nullptr : kernels::find_isa_level(it->second);
  return level ? kernels::preset_kernel_table(*level)->gemm_f16_arith : kernels::default_kernel_table().gemm_f16_arith;
}
// XNNPACK's own fp16 operators (fp16=half) instead of fp16 weights widened for its fp32 ones.
bool xnnpack_half(const BackendUnderTest& b) {
  const auto it = b.options.find("fp16");
  return it != b.options.end() && it->second == "half";
}
// The cuda backend's attention=mma: an fp32 model's attention on bf16 tensor cores too.
bool cuda_attention_mma(const BackendUnderTest& b) {
  const auto it = b.options.find("attention");
  return b.backend == "cuda" && it != b.options.end() && it->second == "mma";
}
}  // namespace

// Measured on an AMD Zen 4 (AVX-512 VNNI) and set with a margin of about 10x (the suite prints
// the error of every case that fails):
//   cpu, fp32 arithmetic: FMA and a different summation order, exp and GELU approximations:
//     op errors <= 1.3e-6, model errors <= 3e-6;
//   cpu, int8 attention: one rounding of a probability to the other uint8 level shifts an
//     output by ~1/255 of a V row (the kernel tests' near-tie bound): 5e-6 seen, 5e-3 allowed;
//   cpu, int8 models: a last-bit difference before a per-row quantization moves a value by a
//     quantization step, and the next layers carry it: 3.2e-3 seen on the hidden state;
//   cpu, fp16 arithmetic (avx512fp16, neonfp16): ~1e-3 relative per GEMM (kernel_types.h);
//   xnnpack, fp16=half: activations rounded to half before each GEMM and after it: 9.6e-3 seen
//     per op, 2.2e-2 on a whole model (fp16=widen: fp32 arithmetic, as the cpu rows);
//   mock_device: the reference kernels on device memory (with isa=scalar for what falls back):
//     bit for bit;
//   cuda (set without a GPU to measure on, from what its arithmetic is; a GPU run prints every
//     case that fails): fp32 ops reorder sums and use the GPU's expf/erff (a few ulps): 1e-4;
//     an fp16 model stores activations in half (as xnnpack's fp16=half): 3e-2 per op, 0.1 per
//     model; fp32 models: 1e-3;
//   cuda, int8 (int8_math.h; tests/kernels/test_cuda_int8_math.cpp checks the formulas on the
//     CPU): quantize is exact (0, as everywhere); an int8 linear's integers are exact and each fp32
//     operation of its epilogue rounds as the reference's, so only GELU's erff (CUDA: 2 ulp) can
//     differ: the 1e-4 of fp32 ops; int8 attention runs on the fp32 QKV rows on the GPU, on bf16
//     tensor cores at head_dim 16, 32 and 64 (attention_mma_kernel.cuh: q, k, v and p rounded to
//     bf16, ≤ 2^-8 relative each; the kernel's own source under emulation, against fp32 attention
//     on [-2, 2] values as these problems': 0.027 normalized at most, head_dim 16 to 64, seq 7 to
//     200) and as fp32 attention elsewhere, so the tests hold it to the reference's fp32
//     attention (test_ops.cpp: the first GPU run, held to the reference's int8 attention, failed
//     at seq 128-200 by that one's own rounding: 0.100-0.154, the SIMT fp32 kernel's too), allowed
//     0.1; under attention=int8 the int8 kernel's integers are the reference's: against the int8
//     reference, 0.1; an fp32 model's attention under attention=mma (bf16 tensor cores, the
//     user's choice): the 0.027 of bf16 alone, allowed 0.1 as well; int8 models: model_tolerance.
double op_tolerance(const BackendUnderTest& b, plan::OpKind kind, DType weights, bool int8_attention) {
  if (b.backend == "mock_device") return 0.0;
  if (b.backend == "cuda" && int8_attention) return 0.1;
  if (kind == plan::OpKind::kAttention && cuda_attention_mma(b)) return 0.1;
  if (b.backend == "cuda") return kind == plan::OpKind::kLinear && weights == DType::kF16 ? 3e-2 : 1e-4;
  if (b.backend == "xnnpack") return kind == plan::OpKind::kLinear && weights == DType::kF16 && xnnpack_half(b) ? 3e-2 : 1e-5;
  if (int8_attention) return 5e-3;
  if (kind == plan::OpKind::kLinear && weights == DType::kF16 && cpu_f16_arith(b)) return 1e-2;
  return 1e-5;
}

double model_tolerance(const BackendUnderTest& b, DType weights) {
  if (b.backend == "mock_device") return 0.0;
  // cuda int8: the first GPU run measured 0.385 on MiniLM (tests/backend/test_models.cpp's input)
  // where the guess was 0.25. On that input the CPU's own int8 paths are as far apart: int8 against
  // the fp32 model 0.503 (scalar kernels), avx512vnni against scalar int8 0.293 (a different
  // attention rounding moves per-row quantized values by a step, carried through the layers).
  // 0.6 is 1.2x the int8 error itself; a wrong kernel gives errors of 10 and more (MiniLM's
  // hidden max is ~28x its RMS). Sentence accuracy is minilm_check.py's (cosine to PyTorch).
  if (b.backend == "cuda") return weights == DType::kI8 ? 0.6 : weights == DType::kF16 ? 0.1 : 1e-3;
  if (weights == DType::kI8) return 3e-2;  // int8 layers run on the CPU backend (cuda's: above)
  if (weights == DType::kF16 && b.backend == "xnnpack" && xnnpack_half(b)) return 0.1;
  if (weights == DType::kF16 && cpu_f16_arith(b)) return 5e-2;
  return 1e-4;
}

}  // namespace encrt::conformance
