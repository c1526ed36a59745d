#include "backends/cuda/cuda_backend.h"

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cublaslt_library.h"
#include "backends/cuda/cuda_gemm.h"
#include "backends/cuda/cuda_graph_cache.h"
#include "backends/cuda/cuda_host_mapping.h"
#include "backends/cuda/layer_fusions.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "core/half.h"
#include "kernels/panel_unpack.h"

namespace encrt::cuda {

namespace {

using plan::Op;
using plan::OpKind;

constexpr size_t kGraphCacheShapes = 8;
constexpr size_t kAlign = 256;
// A packed run's row-wise ops work on its real tokens rounded up to a multiple of this, so that
// the batches of real texts, whose token counts differ almost every time, share a few captured
// graphs (each fixes the M of every GEMM) at a cost of at most 63 extra rows per op.
constexpr int kPackedRowBucket = 64;

Elem elem(DType d) { return d == DType::kF16 ? Elem::kF16 : Elem::kF32; }
cudaDataType_t cuda_type(DType d) { return d == DType::kF16 ? CUDA_R_16F : CUDA_R_32F; }

// What each op of the backend needs at run time, resolved at prepare.
struct OpPlan {
  // kLinear
  std::unique_ptr<Gemm> gemm;
  const void* weights = nullptr;  // [N, K] row-major, the model's dtype
  const void* gemm_bias = nullptr;  // [N] in the output's type, for cuBLASLt's epilogue
  const float* bias = nullptr;      // fp32 [N], for a LayerNorm fused after (fused_into_norm)
  int activation = 0;             // applied by encrt's kernel after cuBLASLt
  bool gelu_in_gemm = false;      // GELU in cuBLASLt's epilogue instead (option gelu=cublaslt)
  bool residual_in_kernel = false;  // the residual is added by that kernel, not by cuBLASLt
  bool fused_into_norm = false;     // no bias or residual here: the next LayerNorm adds them
  // encrt's fp16 tensor-core GEMM can run this linear (gemm_f16_mma.cu: fp16 in and out, K a
  // multiple of 8, an fp16 residual if any); option fp16_gemm says for which row counts.
  bool f16_mma = false;
  // Where that GEMM runs this linear and the LayerNorm after it adds the bias and residual
  // (fused_into_norm): one kernel does both (gemm_f16_layer_norm.cu: the row over a thread-block
  // cluster, sm_90), and the LayerNorm op launches nothing. Option linear_norm.
  bool gemm_norm = false;
  // An up projection whose down projection (i + 1) has gemm_norm and reads its output alone: the
  // whole feed-forward block, both linears and the LayerNorm (i + 2), in one kernel
  // (ffn_layer_norm.cu, sm_90), launched at this op. Option linear_norm=ffn.
  bool ffn_norm = false;
  // An attention output projection with gemm_norm whose LayerNorm's output is the input and the
  // residual of a feed-forward block with ffn_norm (i + 2): the projection, its LayerNorm and the
  // block (i + 1 .. i + 4) in one kernel (ffn_layer_norm.cu with its projection, sm_90), launched
  // at this op; layer16 / layer_active16: that build's clusters of 16 (as cluster16, active16).
  // Option linear_norm=layer.
  bool layer_tail = false;
  bool layer16 = false;
  int layer_active16 = 0;
  // A QKV projection whose attention (i + 1, the fp16 tensor-core kernel's, no probabilities)
  // reads its output alone: both in one kernel (qkv_attention.cu, sm_90) for padded runs of
  // sequences up to 128 tokens, launched at this op. Option qkv_attention.
  bool qkv_attention = false;
  // gemm_norm, ffn_norm: the GPU runs that kernel in clusters of 16 blocks too (checked at
  // prepare), at most active16 of them at once; option norm_cluster says when they are used.
  bool cluster16 = false;
  int active16 = 0;
  // gemm_norm: the GPU runs that kernel's 64-row build too (gemm_f16_layer_norm_rows_kernel.cuh,
  // checked at prepare) in clusters of 8 (rows64) and of 16 (rows64_16); option norm_rows says
  // when it is used.
  bool rows64 = false;
  bool rows64_16 = false;
  // gemm_norm under norm_rows=128: the GPU runs that kernel's 128-row build (8 warps; up to 96
  // columns a block) in clusters of 8, or of 4 under norm_cluster=4.
  bool rows128 = false;
  // gemm_norm under norm_cluster=4: the GPU runs that kernel in clusters of 4 (checked at prepare;
  // rows64 then says so of the 64-row build in clusters of 4, not 8).
  bool cluster4 = false;
  // kLayerNorm, kEmbed
  const float* gamma = nullptr;
  const float* beta = nullptr;
  int fused_linear = -1;  // kLayerNorm: LN(linear's output + its bias + its residual)
  // kEmbed
  const void* word = nullptr;
  const float* word_row_scales = nullptr;  // an int8 word table's
  const void* position = nullptr;
  const void* token_type = nullptr;
  // kCopy from the host: pinned staging of the source
  void* staging = nullptr;
  // kLinear int8: weights int8 [ld_d, Kp] (rows past N zero), the epilogue's w_scale, w_sum and
  // (in `bias`) the bias, each [ld_d], zero past N; cuBLASLt's int32 D [rows, ld_d] is the op's
  // scratch.
  bool int8 = false;
  const float* w_scale = nullptr;
  const int32_t* w_sum = nullptr;
  int ld_d = 0;
  // kLinear int8 on encrt's tensor-core GEMM (gemm_i8_mma.cu: the epilogue in registers, no
  // cuBLASLt plan, no int32 scratch) instead of cuBLASLt + the epilogue kernel.
  bool gemm_mma = false;
  // kLinear int8, kLayerNorm: the kQuantize op (i + 1) this op's kernel does too, for the int8
  // linear (i + 2) that reads its rows (fuses_at: when the three run in one segment); -1: none.
  // The rows go to slot fused_slot of the context's fused_rows, not the graph's buffers (those are
  // planned to live from op i + 1 only).
  int fused_quantize = -1;
  int fused_consumer = -1;
  int fused_slot = 0;
  bool writes_y = true;  // false: only that quantize op reads this op's fp32 output
  // kQuantize: the linear's activation multipliers [K] (null: none).
  const float* multipliers = nullptr;
  // kAttention: the tensor-core kernel (attention_mma.cu) instead of the SIMT one
  bool attention_mma = false;
  // kAttention of an int8 model under attention=int8: the int8 tensor-core kernel
  // (attention_i8_mma.cu, the CPU reference's int8 semantics) instead of fp32 attention
  bool attention_i8 = false;
};

// Option attention: which attention kernel runs (auto: the tensor-core one where it applies and
// loses nothing the model asked for: an fp16 model's attention (fp16 tensor cores) and an int8
// model's (bf16 ones on its fp32 activations), never an fp32 model's, which rounding to bf16 would
// make silently less exact; mma: also an fp32 model's, on bf16 tensor cores; int8: an int8
// model's attention on the int8 tensor-core kernel, every other attention op refused).
enum class AttentionKernel : uint8_t { kAuto, kMma, kSimt, kInt8 };
// Option int8_gemm: which GEMM runs an int8 linear (auto: encrt's tensor-core one where it applies).
enum class Int8Gemm : uint8_t { kAuto, kMma, kCublasLt };
// Option fp16_gemm: which GEMM runs an fp16 linear: cuBLASLt (the default), encrt's tensor-core
// GEMM wherever it applies (mma), or encrt's up to kF16MmaAutoRows rows and cuBLASLt above (auto),
// or as auto and above those rows encrt's too for the linears whose LayerNorm it runs in the same
// kernel (norm: OpPlan::gemm_norm, one kernel instead of cuBLASLt's and a LayerNorm at any rows;
// the 64-row build of that kernel where it fills the GPU, option norm_rows).
enum class F16Gemm : uint8_t { kCublasLt, kMma, kAuto, kNorm };
constexpr int kF16MmaAutoRows = 256;
// Option int8_linears: how an int8 model's linears run: int8 arithmetic (int8), or as fp16 linears
// on the weights dequantized once per model (f16: model/dequantized_linears.h; fp16 activations,
// float attention, every fp16 kernel and fusion); auto: the faster of the two as measured, which is
// f16 at every shape so far. Measured on an H200 (build E, MiniLM seq 128): batch 1 fp16 169.2 µs,
// int8 277.8 (57 kernels against 44, each as slow at 128 rows); batch 32 fp16 497.7, int8 1119.4
// (the int8 tensor-core GEMMs 26 µs each against cuBLASLt's fp16 9; fp32 activations between the
// int8 path's kernels, and its quantize kernels). When int8 arithmetic wins at some shape, auto
// takes it there (dequantizes_int8_linears has the session's maximum shape for that).
enum class Int8Linears : uint8_t { kAuto, kInt8, kF16 };
// Option linear_norm (CudaContext::linear_norm).
enum class LinearNorm : uint8_t { kFfn, kFused, kSeparate, kLayer };

struct CudaContext {
  int device = 0;
  bool graphs = true;
  bool tf32 = false;
  // weights=mapped: the tensors the GPU reads as they are stored (embedding tables, LayerNorm
  // parameters) are read from the model's own bytes, registered with the GPU, not copied.
  bool mapped_weights = false;
  AttentionKernel attention = AttentionKernel::kAuto;
  Int8Gemm int8_gemm = Int8Gemm::kAuto;
  Int8Linears int8_linears = Int8Linears::kAuto;
  RowKernels row_kernels = RowKernels::kAuto;
  // gelu=cublaslt (the default): an fp16 linear's GELU in cuBLASLt's epilogue (one kernel fewer
  // per feed-forward block; cuBLASLt's formula, which NVIDIA does not document and which is not
  // erf's: see prepare_linear); gelu=kernel: encrt's exact (erf) kernel. Measured on the H200
  // (2026-12-04): batch 32 538.4 → 499.1 µs, batch 1 183.4 → 178.3 µs, MiniLM cosine against
  // PyTorch fp32 0.999999 / 0.999996, the conformance suite passing under it.
  bool gelu_in_gemm = true;
  // attention_split=auto|off|on: the tensor-core attention kernel's warps split the keys of 16
  // query rows (on: 4) or each own 16 rows (off: 1); auto (0) by the grid (AttentionArgs::key_split).
  int attention_split = 0;
  // attention_prefetch=auto|on: on: the tensor-core attention's unsplit layout also holds the next
  // key tile's loads in registers while it computes (AttentionArgs::prefetch_keys); auto: only the
  // split layout does (unmeasured either way at the unsplit layout's large grids).
  bool attention_prefetch = false;
  // attention_occupancy=auto|6: 6: that layout without the held tile, at head_dim 32, compiled
  // for 6 resident blocks a multiprocessor (AttentionArgs::six_blocks: MiniLM's 768 blocks at
  // batch 32 in one wave on an H200 instead of two, for a few spilled registers); auto: the
  // compiler's own register budget (4 such blocks fit). Unmeasured.
  bool attention_six_blocks = false;
  // attention_keys=auto|whole: whole: that layout, for fp16 sequences of up to 128 tokens, copies
  // every key of the sequence to shared memory at once (cp.async) instead of 64 at a time through
  // registers (AttentionArgs::whole_keys: one round trip a block, 66 registers a thread at head_dim
  // 32 on sm_90, 7 blocks a multiprocessor); auto: the tiled layout. Unmeasured.
  bool attention_whole_keys = false;
  // int8_tile=auto|32|64|128x64|128: the int8 tensor-core GEMM's block tile (auto: by the grid,
  // gemm_i8_mma_tile); the others force one, to measure them against each other.
  GemmI8Tile int8_tile = GemmI8Tile::kAuto;
  F16Gemm fp16_gemm = F16Gemm::kCublasLt;
  // linear_norm=ffn|fused|separate: where encrt's fp16 GEMM runs post-norm's linear + residual +
  // LayerNorm, one kernel does both (fused, sm_90: OpPlan::gemm_norm) or two (separate); ffn (the
  // default) also runs a feed-forward block's two linears and its LayerNorm as one kernel
  // (OpPlan::ffn_norm); layer also takes the attention's output projection and its LayerNorm into
  // that kernel (OpPlan::layer_tail: a layer's tail after its attention in one kernel). Unmeasured.
  LinearNorm linear_norm = LinearNorm::kFfn;
  // qkv_attention=fused|separate: where encrt's fp16 GEMM runs a QKV projection, its attention in
  // the same kernel for short sequences (fused, sm_90: OpPlan::qkv_attention) or not.
  bool qkv_attention_fused = true;
  // norm_cluster=auto|4|8|16: the most blocks of a fused linear + LayerNorm or feed-forward kernel's
  // cluster (a row's columns over them): 16 halves each block's weights where the GPU runs such
  // clusters; auto (0) takes 16 where every block of the grid then has a multiprocessor of its own
  // and the GPU runs all its clusters at once (gemm_f16_layer_norm_cluster_for), else 8. 4: the
  // fused linear + LayerNorm kernel in clusters of up to 4 wider blocks (MiniLM: 96 columns), so
  // that each row tile of x is read by 4 blocks instead of 8 (its other reads, the weights', do not
  // change), where the GPU runs them; the feed-forward kernels keep 8. Unmeasured.
  int norm_cluster = 0;
  // norm_rows=auto|16|64|128: the rows a block of the fused linear + LayerNorm kernel takes: 16 (its
  // K split over the warps) or 64 (a warp a 16-row tile: 4× fewer weight reads) or 128 (8 such
  // warps, up to 96 columns a block, not in clusters of 16; 64 or 16 as auto elsewhere); auto (0)
  // 64 where that still gives every multiprocessor a block (gemm_f16_layer_norm_rows), else 16.
  // Unmeasured.
  int norm_rows = 0;
  // pdl=auto|on|off: encrt's kernels start with programmatic dependent launch
  // (kernels/dependent_launch.cuh; sm_90 and newer). auto: on from sm_90 (measured on the H200,
  // 2026-12-04: batch 1 183.4 → 178.3 µs fp16, 297.0 → 281.8 µs int8; batch 32 unchanged).
  bool dependent_launch = false;
  HostMapping mapping;
  size_t mapped_bytes = 0;
  const CublasLt* lt = nullptr;
  cublasLtHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  bool timed = false;
  void* weights = nullptr;
  size_t weights_bytes = 0;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  // The rows a kernel quantizes for the next int8 linear (OpPlan::fused_quantize), two slots (a
  // linear that reads one writes the other): q [fused_max_rows, fused_max_kp] bytes, then scale
  // and zero point [fused_max_rows], each 256-aligned, per slot.
  void* fused_rows = nullptr;
  size_t fused_max_rows = 0, fused_max_kp = 0;
  std::vector<OpPlan> plans;  // by graph op
  std::vector<void*> pinned;  // staging buffers
  // Packed runs (prepared only when the session may pack): the layout's offsets [max_batch + 1]
  // and then its source [max_batch · max_seq], staged in pinned memory outside any graph and
  // copied to the device inside each segment (so a replayed graph reads the run's own layout);
  // and the copy of a token-level output that expand_packed gathers from.
  int32_t* layout_host = nullptr;
  int32_t* layout_device = nullptr;
  size_t layout_source_at = 0;  // max_batch + 1: where source starts in both
  void* expand_scratch = nullptr;
  size_t expand_scratch_bytes = 0;
  std::unique_ptr<GraphCache> graphs_cache;
  std::string device_name;
  int cc_major = 0, cc_minor = 0, sms = 0;
  size_t device_memory = 0;
  size_t arena_bytes = 0;

  ~CudaContext() {
    if (stream) cudaSetDevice(device);  // (use_device) what prepare made is that device's
    graphs_cache.reset();
    plans.clear();  // the GEMM descriptors before the handle
    if (handle) lt->destroy(handle);
    for (void* p : pinned) pinned_free(p);
    device_free(layout_device);
    device_free(expand_scratch);
    device_free(weights);
    device_free(workspace);
    device_free(fused_rows);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

CudaContext& ctx(void* c) { return *static_cast<CudaContext*>(c); }
const CudaContext& ctx(const void* c) { return *static_cast<const CudaContext*>(c); }

// The CUDA runtime's current device is the calling thread's, and a launch or copy on another
// device's stream fails: a session created on device 1 and run from a thread whose current device
// is 0 (another session's, or the default), or from a new thread, would. So each entry point that
// uses the stream makes the session's device current first (cheap: a thread-local setting).
Status use_device(const CudaContext& c) { return cuda_status(cudaSetDevice(c.device), "cudaSetDevice"); }

// ---- Availability and options.

bool available(std::string* why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    if (why_not) *why_not = std::string("no usable CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    return false;
  }
  if (count == 0) {
    if (why_not) *why_not = "no CUDA device";
    return false;
  }
  std::string why;
  if (!cublaslt(&why)) {
    if (why_not) *why_not = why;
    return false;
  }
  return true;
}

Status parse_switch(const backend::Options& o, const char* key, bool fallback, bool* out) {
  *out = fallback;
  const auto it = o.find(key);
  if (it == o.end()) return Status::ok();
  if (it->second == "on") {
    *out = true;
  } else if (it->second == "off") {
    *out = false;
  } else {
    return invalid_argument(std::string("option ") + key + " of backend cuda must be on or off, got '" + it->second + "'");
  }
  return Status::ok();
}

// An option that names one of `choices` (its value in the key's order): *out keeps its default
// when the option is absent; anything else is an error listing the choices.
template <typename E, size_t N>
Status parse_choice(const backend::Options& o, const char* key, const std::pair<const char*, E> (&choices)[N], E* out) {
  const auto it = o.find(key);
  if (it == o.end()) return Status::ok();
  std::string names;
  for (size_t i = 0; i < N; ++i) {
    if (it->second == choices[i].first) {
      *out = choices[i].second;
      return Status::ok();
    }
    names += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + choices[i].first;
  }
  return invalid_argument(std::string("option ") + key + " of backend cuda must be " + names + ", got '" + it->second + "'");
}

Status create(const backend::Options& options, int, void** out) {
  std::string why;
  if (!available(&why)) return unsupported("backend 'cuda' is not available on this machine: " + why);
  auto c = std::make_unique<CudaContext>();
  if (auto it = options.find("device"); it != options.end()) {
    char* end = nullptr;
    const long d = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || d < 0 || d > 1024)
      return invalid_argument("option device of backend cuda must be a device index, got '" + it->second + "'");
    c->device = static_cast<int>(d);
  }
  if (Status s = parse_switch(options, "graphs", true, &c->graphs); !s) return s;
  if (Status s = parse_switch(options, "tf32", false, &c->tf32); !s) return s;
  if (auto it = options.find("weights"); it != options.end()) {
    if (it->second != "device" && it->second != "mapped")
      return invalid_argument("option weights of backend cuda must be device or mapped, got '" + it->second + "'");
    c->mapped_weights = it->second == "mapped";
  }
  if (Status s = parse_choice(options, "attention",
                              {std::pair{"auto", AttentionKernel::kAuto}, std::pair{"mma", AttentionKernel::kMma},
                               std::pair{"simt", AttentionKernel::kSimt}, std::pair{"int8", AttentionKernel::kInt8}},
                              &c->attention);
      !s)
    return s;
  if (Status s = parse_choice(options, "int8_gemm",
                              {std::pair{"auto", Int8Gemm::kAuto}, std::pair{"mma", Int8Gemm::kMma},
                               std::pair{"cublaslt", Int8Gemm::kCublasLt}},
                              &c->int8_gemm);
      !s)
    return s;
  if (Status s = parse_choice(options, "rows",
                              {std::pair{"auto", RowKernels::kAuto}, std::pair{"warp", RowKernels::kWarp},
                               std::pair{"block", RowKernels::kBlock}},
                              &c->row_kernels);
      !s)
    return s;
  if (Status s = parse_choice(options, "fp16_gemm",
                              {std::pair{"cublaslt", F16Gemm::kCublasLt}, std::pair{"mma", F16Gemm::kMma},
                               std::pair{"auto", F16Gemm::kAuto}, std::pair{"norm", F16Gemm::kNorm}},
                              &c->fp16_gemm);
      !s)
    return s;
  if (Status s = parse_choice(options, "linear_norm",
                              {std::pair{"ffn", LinearNorm::kFfn}, std::pair{"fused", LinearNorm::kFused},
                               std::pair{"separate", LinearNorm::kSeparate}, std::pair{"layer", LinearNorm::kLayer}},
                              &c->linear_norm);
      !s)
    return s;
  if (Status s = parse_choice(options, "qkv_attention", {std::pair{"fused", true}, std::pair{"separate", false}},
                              &c->qkv_attention_fused);
      !s)
    return s;
  if (Status s = parse_choice(options, "norm_cluster",
                              {std::pair{"auto", 0}, std::pair{"4", 4}, std::pair{"8", 8}, std::pair{"16", 16}},
                              &c->norm_cluster);
      !s)
    return s;
  if (Status s = parse_choice(options, "norm_rows",
                              {std::pair{"auto", 0}, std::pair{"16", 16}, std::pair{"64", 64}, std::pair{"128", 128}},
                              &c->norm_rows);
      !s)
    return s;
  if (Status s = parse_choice(options, "int8_tile",
                              {std::pair{"auto", GemmI8Tile::kAuto}, std::pair{"32", GemmI8Tile::k32},
                               std::pair{"64", GemmI8Tile::k64}, std::pair{"128x64", GemmI8Tile::k128x64},
                               std::pair{"128", GemmI8Tile::k128}},
                              &c->int8_tile);
      !s)
    return s;
  if (Status s = parse_choice(options, "attention_split", {std::pair{"auto", 0}, std::pair{"off", 1}, std::pair{"on", 4}},
                              &c->attention_split);
      !s)
    return s;
  if (Status s = parse_choice(options, "int8_linears",
                              {std::pair{"auto", Int8Linears::kAuto}, std::pair{"int8", Int8Linears::kInt8},
                               std::pair{"f16", Int8Linears::kF16}},
                              &c->int8_linears);
      !s)
    return s;
  if (c->int8_linears == Int8Linears::kF16 && c->attention == AttentionKernel::kInt8)
    return invalid_argument("options int8_linears=f16 and attention=int8 of backend cuda contradict each other: "
                            "fp16 linears leave no int8 attention (use int8_linears=int8)");
  if (Status s = parse_choice(options, "attention_prefetch", {std::pair{"auto", false}, std::pair{"on", true}},
                              &c->attention_prefetch);
      !s)
    return s;
  if (Status s = parse_choice(options, "attention_occupancy", {std::pair{"auto", false}, std::pair{"6", true}},
                              &c->attention_six_blocks);
      !s)
    return s;
  if (Status s = parse_choice(options, "attention_keys", {std::pair{"auto", false}, std::pair{"whole", true}},
                              &c->attention_whole_keys);
      !s)
    return s;
  if (c->attention_whole_keys && (c->attention_six_blocks || c->attention_prefetch))
    return invalid_argument(std::string("options attention_keys=whole and ") +
                            (c->attention_prefetch ? "attention_prefetch=on" : "attention_occupancy=6") +
                            " of backend cuda contradict each other: they are other builds of the layout that "
                            "attention_keys=whole replaces (use one of them)");
  if (c->attention_six_blocks && c->attention_prefetch)
    return invalid_argument("options attention_occupancy=6 and attention_prefetch=on of backend cuda contradict each "
                            "other: the held key tile takes the registers that 6 blocks a multiprocessor leave no room "
                            "for (use one of them)");
  int pdl = -1;  // auto
  if (Status s = parse_choice(options, "pdl", {std::pair{"auto", -1}, std::pair{"on", 1}, std::pair{"off", 0}}, &pdl); !s)
    return s;
  if (Status s = parse_choice(options, "gelu", {std::pair{"cublaslt", true}, std::pair{"kernel", false}}, &c->gelu_in_gemm);
      !s)
    return s;
  int count = 0;
  cudaGetDeviceCount(&count);
  if (c->device >= count)
    return invalid_argument("option device=" + std::to_string(c->device) + " of backend cuda: this machine has " +
                            std::to_string(count) + " CUDA device(s)");
  if (Status s = cuda_status(cudaSetDevice(c->device), "cudaSetDevice"); !s) return s;
  cudaDeviceProp prop;
  if (Status s = cuda_status(cudaGetDeviceProperties(&prop, c->device), "cudaGetDeviceProperties"); !s) return s;
  c->device_name = prop.name;
  c->cc_major = prop.major;
  c->cc_minor = prop.minor;
  c->sms = prop.multiProcessorCount;
  c->device_memory = prop.totalGlobalMem;
  if (pdl == 1 && c->cc_major < 9)
    return unsupported("option pdl=on of backend cuda needs programmatic dependent launch (sm_90 and newer); " +
                       c->device_name + " is sm_" + std::to_string(c->cc_major) + std::to_string(c->cc_minor));
  c->dependent_launch = pdl == 1 || (pdl == -1 && c->cc_major >= 9);
  if (const cudaError_t e = kernels_loadable(); e != cudaSuccess)
    return unsupported("backend 'cuda': this build's kernels do not load on " + c->device_name + " (sm_" +
                       std::to_string(c->cc_major) + std::to_string(c->cc_minor) +
                       "; this build has kernels for CUDA architectures " ENCRT_CUDA_ARCHITECTURES "): " + cudaGetErrorString(e));
  c->lt = cublaslt(&why);
  *out = c.release();
  return Status::ok();
}

void destroy(void* c) { delete static_cast<CudaContext*>(c); }

// Option int8_linears (Int8Linears); auto keeps int8 under attention=int8 (the user asked for
// int8 attention, which fp16 linears would leave none of).
bool dequantizes_int8_linears(const void* cv, backend::Shape) {
  const CudaContext& c = ctx(cv);
  if (c.int8_linears != Int8Linears::kAuto) return c.int8_linears == Int8Linears::kF16;
  return c.attention != AttentionKernel::kInt8;
}

// ---- What runs here: a whole fp16 or fp32 encoder, or nothing (a model split between the GPU
// and the CPU would copy activations at every layer).

DType model_dtype(const plan::Graph& g) {
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::kLinear) return op.p<plan::LinearParams>().weights->dtype;
    if (op.kind == OpKind::kQuantize) return DType::kI8;  // it feeds an int8 linear
  }
  return DType::kF32;
}

bool op_supported(const plan::Graph& g, const Op& op, DType model) {
  // int8 tables (an int8 model's): the word table is read as stored with its row scales, the
  // others are uploaded dequantized to fp32 (prepare).
  auto table_ok = [](const detail::TableView* t) {
    return !t || t->dtype == DType::kF32 || t->dtype == DType::kF16 || (t->dtype == DType::kI8 && t->row_scales);
  };
  switch (op.kind) {
    case OpKind::kCopy:
    case OpKind::kPoolMean:
    case OpKind::kPoolFirst:
    case OpKind::kTanh:
      return true;
    case OpKind::kQuantize: {
      const detail::LinearView* w = op.p<plan::QuantizeParams>().linear;
      return model == DType::kI8 && w && w->K > 0;
    }
    case OpKind::kPoolMax:
    case OpKind::kL2Normalize:
    case OpKind::kScores:
      return false;
    case OpKind::kEmbed: {
      const plan::EmbedParams& e = op.p<plan::EmbedParams>();
      return e.width <= kMaxRowWidth && table_ok(e.word) && table_ok(e.position) && table_ok(e.token_type);
    }
    case OpKind::kLayerNorm:
      return op.p<plan::LayerNormParams>().width <= kMaxRowWidth;
    case OpKind::kLinear: {
      const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
      if (w.dtype != model) return false;
      // int8: cuBLASLt's int8 TN GEMM over [round_up(N, 4), round_up(K, 4)] (prepare pads both),
      // encrt's epilogue for the scales, zero points, bias, activation and residual.
      return w.dtype != DType::kI8 || (w.scales && w.column_sums && w.N > 0 && w.K > 0);
    }
    case OpKind::kAttention: {
      const plan::AttentionParams& a = op.p<plan::AttentionParams>();
      // The device kernel has the key padding mask only: a src mask or a sliding window keeps
      // the model on the CPU backend (which has both).
      if (a.window > 0 || op.in(plan::slot::kAttentionSrcMaskBool) >= 0 || op.in(plan::slot::kAttentionSrcMaskFloat) >= 0)
        return false;
      // An int8 model's int8 attention (AttentionParams::int8) runs on its fp32 QKV rows here: on
      // bf16 tensor cores where the tensor-core kernel applies (attention_mma_applies: Q, K, V and
      // P rounded to bf16, ≤ 2^-8 relative per value, no worse than the CPU's per-row int8 and u8
      // P), else as fp32 attention on the SIMT kernel; either is as exact as the CPU's int8
      // attention or more.
      return attention_head_dim_supported(a.head_dim);
    }
  }
  (void)g;
  return false;
}

// Ops after the encoder's outputs that stay on the CPU backend: max pooling, normalization and a
// task head's ops read [batch, hidden] or [batch, seq, hidden] rows copied to the host once, not
// activations at every layer (and the head's small classifier is no work for a GPU).
bool tail_op(const Op& op) {
  return op.head || op.kind == OpKind::kPoolMax || op.kind == OpKind::kL2Normalize || op.kind == OpKind::kScores;
}

bool supports(const void*, const plan::Graph& g, const Op& op) {
  const DType model = model_dtype(g);
  if (model != DType::kF32 && model != DType::kF16 && model != DType::kI8) return false;
  for (const Op& o : g.ops)
    if (!tail_op(o) && !op_supported(g, o, model)) return false;
  return !tail_op(op) && op_supported(g, op, model);
}


// Quantized activation rows: a kQuantize op's bytes, an int8 linear's input.
bool holds_quantized_rows(const plan::Graph& g, int buffer) {
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::kQuantize && op.out(0) == buffer) return true;
    if (op.kind == OpKind::kLinear && op.in(0) == buffer && op.p<plan::LinearParams>().weights->dtype == DType::kI8)
      return true;
  }
  return false;
}

// fp16 models keep their activations in fp16 on the device; the named outputs stay fp32 (what
// callers read), and so do buffers that cross to the host. Quantized rows (uint8 q in the graph)
// are stored as int8 q − 128 (int8_math.h), what cuBLASLt's int8 GEMMs read, unless they leave
// the device.
DType storage_dtype(const void*, const plan::Graph& g, int buffer) {
  const plan::BufferSpec& b = g.buffers[static_cast<size_t>(buffer)];
  if (b.dtype == DType::kU8 && holds_quantized_rows(g, buffer) && !leaves_device(g, buffer)) return DType::kI8;
  if (b.dtype != DType::kF32 || model_dtype(g) != DType::kF16) return b.dtype;
  for (const plan::NamedTensor& t : g.outputs)
    if (t.buffer == buffer) return b.dtype;
  for (const Op& op : g.ops) {
    if (op.kind == OpKind::kCopy && (op.in(0) == buffer || op.out(0) == buffer)) return b.dtype;
    // The attention kernel writes its probabilities as floats, named output or not.
    if (op.kind == OpKind::kAttention && op.out(plan::slot::kAttentionProbs) == buffer) return b.dtype;
  }
  return DType::kF16;
}

int round_up4(int x) { return (x + 3) / 4 * 4; }

// Whether an int8 linear with weights w can run on the tensor-core GEMM; when it cannot, *why_not
// says why.
bool int8_gemm_mma_applies(const CudaContext& c, const detail::LinearView& w, std::string* why_not) {
  if (gemm_i8_mma_supported(c.cc_major, round_up4(w.K))) return true;
  if (why_not) {
    if (c.cc_major < 8)
      *why_not = "sm_" + std::to_string(c.cc_major) + std::to_string(c.cc_minor) + " has no mma.sync m16n8k32 (sm_80 and newer)";
    else
      *why_not = "K = " + std::to_string(w.K) + " (the tensor-core GEMM's int32 sums take K up to " +
                 std::to_string(kGemmI8MmaMaxKp) + ")";
  }
  return false;
}

// The choice, from the options and the device alone (scratch_bytes makes it before prepare).
bool uses_int8_gemm_mma(const CudaContext& c, const detail::LinearView& w) {
  return c.int8_gemm != Int8Gemm::kCublasLt && int8_gemm_mma_applies(c, w, nullptr);
}

// An int8 linear's int32 D [rows, round_up(N, 4)] from cuBLASLt, read by the epilogue kernel (none
// on the tensor-core GEMM, whose D stays in registers).
size_t scratch_bytes(const void* cv, const plan::Graph& g, const Op& op, backend::Shape max) {
  if (op.kind != OpKind::kLinear) return 0;
  const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
  if (w.dtype != DType::kI8) return 0;
  if (cv && uses_int8_gemm_mma(ctx(cv), w)) return 0;
  const size_t rows = plan::max_rows(g.buffers[static_cast<size_t>(op.out(0))].rows, max.batch, max.seq);
  return rows * static_cast<size_t>(round_up4(w.N)) * sizeof(int32_t);
}

// Whether the tensor-core kernel can run attention op `op` (fp16 QKV on fp16 tensor cores, fp32 on
// bf16 ones); when it cannot, *why_not says why. (Its QKV's dtype is the stored one: fp16 only in
// an fp16 model.) Whether it does run it: uses_attention_mma.
bool attention_mma_applies(const CudaContext& c, const plan::Graph& g, const Op& op, std::string* why_not) {
  const plan::AttentionParams& p = op.p<plan::AttentionParams>();
  const Elem type = elem(storage_dtype(&c, g, op.in(plan::slot::kX)));
  const bool probs = op.out(plan::slot::kAttentionProbs) >= 0;
  if (attention_mma_supported(p.head_dim, type, probs, c.cc_major)) return true;
  if (why_not) {
    if (!attention_mma_head_dim_supported(p.head_dim))
      *why_not = "head_dim " + std::to_string(p.head_dim) + " (the tensor-core kernel takes 16, 32 and 64)";
    else if (probs)
      *why_not = "it outputs its probabilities (the SIMT kernel writes them)";
    else
      *why_not = "sm_" + std::to_string(c.cc_major) + std::to_string(c.cc_minor) + " has no mma.sync m16n8k16 (sm_80 and newer)";
  }
  return false;
}

// Whether the kernel is bf16's (fp32 activations) rather than fp16's.
bool attention_mma_bf16(const CudaContext& c, const plan::Graph& g, const Op& op) {
  return elem(storage_dtype(&c, g, op.in(plan::slot::kX))) == Elem::kF32;
}

bool uses_attention_mma(const CudaContext& c, const plan::Graph& g, const Op& op) {
  if (c.attention == AttentionKernel::kSimt || c.attention == AttentionKernel::kInt8 ||
      !attention_mma_applies(c, g, op, nullptr))
    return false;
  // auto: bf16 tensor cores on fp32 activations only for an int8 model's attention (the project's
  // rule for an fp32 model: lower precision only when the user asks, as tf32).
  return c.attention == AttentionKernel::kMma || !attention_mma_bf16(c, g, op) || op.p<plan::AttentionParams>().int8;
}

// Why the int8 tensor-core attention kernel (attention=int8) cannot run attention op `op` in a
// session of sequences up to max_seq; empty: it can.
std::string attention_i8_refusal(const CudaContext& c, const plan::Graph& g, const Op& op, int max_seq) {
  const plan::AttentionParams& p = op.p<plan::AttentionParams>();
  if (!p.int8) return "it is not an int8 model's int8 attention (attention=int8 takes those only)";
  if (elem(storage_dtype(&c, g, op.in(plan::slot::kX))) != Elem::kF32) return "its QKV rows are not fp32";
  if (!attention_i8_mma_head_dim_supported(p.head_dim))
    return "head_dim " + std::to_string(p.head_dim) + " (the int8 kernel takes 32 and 64)";
  if (op.out(plan::slot::kAttentionProbs) >= 0) return "it outputs its probabilities (the SIMT kernel writes them)";
  if (max_seq > kAttentionI8MmaMaxSeq)
    return "max_seq " + std::to_string(max_seq) + " (the int8 kernel holds at most " +
           std::to_string(kAttentionI8MmaMaxSeq) + " tokens' K and V in shared memory)";
  if (!attention_i8_mma_supported(p.head_dim, max_seq, false, c.cc_major))
    return "sm_" + std::to_string(c.cc_major) + std::to_string(c.cc_minor) + " has no int8 mma.sync m16n8k32 (sm_80 and newer)";
  return "";
}

// ---- Prepare: one upload of everything the ops read, GEMM plans, pinned staging.

// The weights of every op, laid out host-side (each piece 256-byte aligned) before one upload.
class Upload {
 public:
  size_t add(const void* data, size_t bytes) {
    const size_t at = (host_.size() + kAlign - 1) / kAlign * kAlign;
    host_.resize(at + bytes);
    std::memcpy(host_.data() + at, data, bytes);
    return at;
  }
  template <typename T>
  size_t add(const std::vector<T>& v) {
    return add(v.data(), v.size() * sizeof(T));
  }
  // Room for `bytes` that a kernel writes on the device after the upload (zeros until then).
  size_t reserve(size_t bytes) {
    const size_t at = (host_.size() + kAlign - 1) / kAlign * kAlign;
    host_.resize(at + bytes);
    return at;
  }
  size_t bytes() const { return host_.size(); }
  const unsigned char* data() const { return host_.data(); }

 private:
  std::vector<unsigned char> host_;
};

// The int8 linears that run as fp16 ones (option int8_linears, LinearView::dequantized_from): their
// int8 weights, scales and multipliers go to the device in a staging allocation of their own, freed
// once the dequantize kernel has written each linear's fp16 weights into the upload's room for them.
struct DeviceDequantization {
  Upload staging;
  struct Linear {
    int N = 0, K = 0;
    size_t q = 0, scales = 0, multipliers = 0;  // offsets in staging (multipliers: SIZE_MAX, none)
    size_t out = 0;                             // offset in the weights upload
  };
  std::vector<Linear> linears;
};

// Offsets into the upload, resolved to device pointers once it is on the device.
struct PendingPointers {
  std::vector<std::pair<const void**, size_t>> at;
  void add(const void** p, size_t offset) { at.emplace_back(p, offset); }
  void resolve(void* base) {
    for (auto& [p, offset] : at) *p = static_cast<unsigned char*>(base) + offset;
  }
};

size_t table_bytes(const detail::TableView& t) {
  return static_cast<size_t>(t.rows) * static_cast<size_t>(t.width) * dtype_size(t.dtype);
}

std::vector<unsigned char> row_major_weights(const detail::LinearView& w) {
  const size_t n = static_cast<size_t>(w.N) * static_cast<size_t>(w.K);
  std::vector<unsigned char> out(n * dtype_size(w.dtype));
  if (w.dtype == DType::kF16)
    kernels::unpack_panel_n16(w.N, w.K, static_cast<const uint16_t*>(w.packed), reinterpret_cast<uint16_t*>(out.data()));
  else
    kernels::unpack_panel_n16(w.N, w.K, static_cast<const float*>(w.packed), reinterpret_cast<float*>(out.data()));
  return out;
}


// An int8 linear: the weights unpacked to row-major int8 [ld_d, Kp] (zero rows past N: cuBLASLt
// wants N and K multiples of 4), the epilogue's per-column arrays padded to ld_d with zeros.
void prepare_linear_i8(CudaContext& c, const plan::Graph& g, int i, Upload* up, PendingPointers* pending) {
  const Op& op = g.ops[static_cast<size_t>(i)];
  const plan::LinearParams& p = op.p<plan::LinearParams>();
  const detail::LinearView& w = *p.weights;
  OpPlan& plan = c.plans[static_cast<size_t>(i)];
  plan.int8 = true;
  plan.gemm_mma = uses_int8_gemm_mma(c, w);
  plan.ld_d = round_up4(w.N);
  const int Kp = round_up4(w.K);
  const size_t ld = static_cast<size_t>(plan.ld_d);
  std::vector<int8_t> rows(ld * static_cast<size_t>(Kp));
  kernels::unpack_panel_n16k4(w.N, w.K, static_cast<const int8_t*>(w.packed), plan.ld_d, Kp, rows.data());
  pending->add(&plan.weights, up->add(rows));
  std::vector<float> scale(ld, 0.0f);
  std::vector<int32_t> sum(ld, 0);
  std::copy(w.scales, w.scales + w.N, scale.begin());
  std::copy(w.column_sums, w.column_sums + w.N, sum.begin());
  pending->add(reinterpret_cast<const void**>(&plan.w_scale), up->add(scale));
  pending->add(reinterpret_cast<const void**>(&plan.w_sum), up->add(sum));
  if (w.bias) {  // none: no add at all, as the reference (not + 0, which would turn -0 into +0)
    std::vector<float> bias(ld, 0.0f);
    std::copy(w.bias, w.bias + w.N, bias.begin());
    pending->add(reinterpret_cast<const void**>(&plan.bias), up->add(bias));
  }
  plan.activation = p.activation == kernels::Activation::kGelu ? 2 : p.activation == kernels::Activation::kRelu ? 1 : 0;
  // Post-norm's linear + LayerNorm: the epilogue writes the dequantized value, the LayerNorm adds
  // the bias and the residual (the reference's order: value + bias, then + residual).
  plan.fused_into_norm = fuses_into_norm(g, i);
  if (plan.fused_into_norm) c.plans[static_cast<size_t>(i) + 1].fused_linear = i;
}


// Whether up projection u, the down projection u + 1 (gemm_norm) and its LayerNorm run as one
// kernel (OpPlan::ffn_norm): u an fp16 linear on encrt's GEMM without a residual, its output read
// by u + 1 alone, and the kernel's shared memory within the GPU's.
void plan_ffn(CudaContext& c, const plan::Graph& g, int u) {
  const Op& up = g.ops[static_cast<size_t>(u)];
  if (!ffn_block_at(g, u) || !c.plans[static_cast<size_t>(u)].f16_mma || c.plans[static_cast<size_t>(u)].int8) return;
  const detail::LinearView& w = *up.p<plan::LinearParams>().weights;
  int most = 0;
  if (cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, c.device) != cudaSuccess) return;
  OpPlan& plan = c.plans[static_cast<size_t>(u)];
  plan.ffn_norm = ffn_layer_norm_supported(c.cc_major, w.K, w.N, most, 8) && ffn_layer_norm_prepare(w.K, w.N, 8) == cudaSuccess;
  plan.cluster16 = plan.ffn_norm && (c.norm_cluster == 0 || c.norm_cluster == 16) && ffn_layer_norm_supported(c.cc_major, w.K, w.N, most, 16) &&
                   ffn_layer_norm_prepare(w.K, w.N, 16, &plan.active16) == cudaSuccess;
}

// Whether output projection o, its LayerNorm and the feed-forward block after them run as one
// kernel (OpPlan::layer_tail): the graph's shape (layer_tail_at), the projection on the fused
// linear + LayerNorm kernel and the block on the fused feed-forward kernel (so both fp16 on
// encrt's GEMM), and the projecting build's shared memory and clusters within the GPU's. Clusters
// of 16 where all three kernels run them.
void plan_layer_tail(CudaContext& c, const plan::Graph& g, int o) {
  OpPlan& plan = c.plans[static_cast<size_t>(o)];
  const OpPlan& up = c.plans[static_cast<size_t>(o) + 2];
  if (!layer_tail_at(g, o) || !plan.gemm_norm || !up.ffn_norm) return;
  const detail::LinearView& w1 = *g.ops[static_cast<size_t>(o) + 2].p<plan::LinearParams>().weights;
  int most = 0;
  if (cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, c.device) != cudaSuccess) return;
  plan.layer_tail = ffn_layer_norm_supported(c.cc_major, w1.K, w1.N, most, 8, true) &&
                    ffn_layer_norm_prepare(w1.K, w1.N, 8, nullptr, true) == cudaSuccess;
  plan.layer16 = plan.layer_tail && plan.cluster16 && up.cluster16 &&
                 ffn_layer_norm_supported(c.cc_major, w1.K, w1.N, most, 16, true) &&
                 ffn_layer_norm_prepare(w1.K, w1.N, 16, &plan.layer_active16, true) == cudaSuccess;
}

// Whether QKV projection q and the attention q + 1 run as one kernel (OpPlan::qkv_attention): q an
// fp16 linear on encrt's GEMM without activation or residual, its output read by the attention
// alone, the attention on the fp16 tensor-core kernel (its semantics are the fused kernel's),
// without probabilities, head_dim 32 or 64, the GPU able to run the kernel's clusters.
void plan_qkv_attention(CudaContext& c, const plan::Graph& g, int q) {
  const OpPlan& plan = c.plans[static_cast<size_t>(q)];
  if (!qkv_attention_at(g, q) || !plan.f16_mma || plan.int8 || plan.gelu_in_gemm) return;
  const Op& att = g.ops[static_cast<size_t>(q) + 1];
  const plan::AttentionParams& p = att.p<plan::AttentionParams>();
  if (!c.plans[static_cast<size_t>(q) + 1].attention_mma || g.buffers[static_cast<size_t>(att.out(0))].dtype != DType::kF16 ||
      !qkv_attention_supported(c.cc_major, p.head_dim, g.ops[static_cast<size_t>(q)].p<plan::LinearParams>().weights->K))
    return;
  c.plans[static_cast<size_t>(q)].qkv_attention = qkv_attention_prepare(p.head_dim) == cudaSuccess;
}

// Decides how linear op i runs (fusion, where its residual goes), uploads its weights and the
// bias it needs; the GEMM is made once the upload has device addresses (make_gemm).
void prepare_linear(CudaContext& c, const plan::Graph& g, int i, Upload* up, PendingPointers* pending,
                    DeviceDequantization* dequantization) {
  const Op& op = g.ops[static_cast<size_t>(i)];
  const plan::LinearParams& p = op.p<plan::LinearParams>();
  const detail::LinearView& w = *p.weights;
  if (w.dtype == DType::kI8) return prepare_linear_i8(c, g, i, up, pending);
  OpPlan& plan = c.plans[static_cast<size_t>(i)];
  if (const detail::LinearView* q = w.dequantized_from) {
    // An int8 linear as fp16 (option int8_linears): its weights made on the device from the int8
    // ones (never from the view's host panels: the session makes those only for host backends).
    DeviceDequantization::Linear d;
    d.N = q->N;
    d.K = q->K;
    std::vector<int8_t> rows(static_cast<size_t>(q->N) * static_cast<size_t>(q->K));
    kernels::unpack_panel_n16k4(q->N, q->K, static_cast<const int8_t*>(q->packed), q->N, q->K, rows.data());
    d.q = dequantization->staging.add(rows);
    d.scales = dequantization->staging.add(q->scales, static_cast<size_t>(q->N) * sizeof(float));
    d.multipliers = q->activation_multipliers
                        ? dequantization->staging.add(q->activation_multipliers, static_cast<size_t>(q->K) * sizeof(float))
                        : SIZE_MAX;
    d.out = up->reserve(static_cast<size_t>(q->N) * static_cast<size_t>(q->K) * sizeof(uint16_t));
    pending->add(&plan.weights, d.out);
    dequantization->linears.push_back(d);
  } else {
    pending->add(&plan.weights, up->add(row_major_weights(w)));
  }
  const DType y_type = g.buffers[static_cast<size_t>(op.out(0))].dtype;
  const int residual = op.in(plan::slot::kLinearResidual);
  plan.fused_into_norm = fuses_into_norm(g, i);
  plan.f16_mma = c.fp16_gemm != F16Gemm::kCublasLt && w.dtype == DType::kF16 && y_type == DType::kF16 &&
                 g.buffers[static_cast<size_t>(op.in(0))].dtype == DType::kF16 && gemm_f16_mma_supported(c.cc_major, w.K) &&
                 (residual < 0 || plan.fused_into_norm || g.buffers[static_cast<size_t>(residual)].dtype == DType::kF16);
  plan.activation = p.activation == kernels::Activation::kGelu ? 2 : p.activation == kernels::Activation::kRelu ? 1 : 0;
  if (plan.fused_into_norm) {
    // fp32 bias for the LayerNorm (or the fused kernel) that adds it.
    pending->add(reinterpret_cast<const void**>(&plan.bias), up->add(w.bias, static_cast<size_t>(w.N) * sizeof(float)));
    c.plans[static_cast<size_t>(i) + 1].fused_linear = i;
    plan.gemm_norm = plan.f16_mma && c.linear_norm != LinearNorm::kSeparate &&
                     g.buffers[static_cast<size_t>(residual)].dtype == DType::kF16 &&
                     gemm_f16_layer_norm_supported(c.cc_major, w.N, w.K) &&
                     gemm_f16_layer_norm_prepare(w.N, 8) == cudaSuccess;  // the GPU can run its clusters
    plan.cluster16 = plan.gemm_norm && (c.norm_cluster == 0 || c.norm_cluster == 16) &&
                     gemm_f16_layer_norm_prepare(w.N, 16, &plan.active16) == cudaSuccess;
    plan.cluster4 = plan.gemm_norm && c.norm_cluster == 4 && gemm_f16_layer_norm_prepare(w.N, 4) == cudaSuccess;
    // The 64-row build in each cluster size the 16-row one may take here.
    const int cluster = plan.cluster4 ? 4 : 8;
    plan.rows64 = plan.gemm_norm && c.norm_rows != 16 && gemm_f16_layer_norm_prepare(w.N, cluster, nullptr, 64) == cudaSuccess;
    plan.rows64_16 = plan.rows64 && plan.cluster16 && gemm_f16_layer_norm_prepare(w.N, 16, nullptr, 64) == cudaSuccess;
    plan.rows128 = plan.gemm_norm && c.norm_rows == 128 && gemm_f16_layer_norm_prepare(w.N, cluster, nullptr, 128) == cudaSuccess;
    if (plan.gemm_norm && (c.linear_norm == LinearNorm::kFfn || c.linear_norm == LinearNorm::kLayer) && i > 0)
      plan_ffn(c, g, i - 1);
    if (c.linear_norm == LinearNorm::kLayer && i >= 3) plan_layer_tail(c, g, i - 3);
    return;
  }
  // cuBLASLt adds the residual as its C matrix when nothing comes between (act(x + b) + r needs
  // the activation first) and its type is the output's; else the activation kernel adds it.
  plan.residual_in_kernel = residual >= 0 && (plan.activation != 0 || g.buffers[static_cast<size_t>(residual)].dtype != y_type);
  // gelu=cublaslt takes fp16 linears only: on the H200 cuBLASLt's GELU left an fp32 linear 5.1e-4
  // (max error / RMS) from the exact one, five times an fp32 op's conformance tolerance, and
  // below fp16's own rounding (2^-11 relative).
  if (c.gelu_in_gemm && plan.activation == 2 && y_type == DType::kF16) {  // the activation kernel then only adds a residual
    plan.gelu_in_gemm = true;
    plan.activation = 0;
  }
  // cuBLASLt's epilogue bias, in the output's type.
  std::vector<unsigned char> bias(static_cast<size_t>(w.N) * dtype_size(y_type));
  if (y_type == DType::kF16)
    for (int n = 0; n < w.N; ++n) reinterpret_cast<uint16_t*>(bias.data())[n] = float_to_half(w.bias[n]);
  else
    std::memcpy(bias.data(), w.bias, bias.size());
  pending->add(&plan.gemm_bias, up->add(bias));
}

// cuBLASLt's int8 TN GEMM: D [M, ld_d] int32 = X' [M, Kp] · W [ld_d, Kp]ᵀ, X' the rows as int8
// q − 128 (storage_dtype), int32 accumulation and scale type (alpha 1, beta 0). Nothing for a
// linear on the tensor-core GEMM (which int8_gemm=mma requires of every int8 linear).
Status make_gemm_i8(CudaContext& c, const plan::Graph& g, int i, backend::Shape max) {
  const Op& op = g.ops[static_cast<size_t>(i)];
  const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
  OpPlan& plan = c.plans[static_cast<size_t>(i)];
  if (g.buffers[static_cast<size_t>(op.in(0))].dtype != DType::kI8)
    return unsupported(std::string("cuda: int8 linear '") + op.label +
                       "' reads quantized rows stored outside the GPU's int8 (q - 128) form");
  std::string why;
  if (c.int8_gemm == Int8Gemm::kMma && !int8_gemm_mma_applies(c, w, &why))
    return unsupported("backend cuda, int8_gemm=mma: the tensor-core int8 GEMM cannot run linear '" + op.label + "': " + why +
                       " (int8_gemm=auto or cublaslt runs it on cuBLASLt)");
  if (plan.gemm_mma) return Status::ok();
  if (op.scratch < 0) return internal_error(std::string("cuda: int8 linear '") + op.label + "' has no scratch for its int32 output");
  GemmSpec spec;
  spec.N = plan.ld_d;
  spec.K = round_up4(w.K);
  spec.max_M = static_cast<int>(plan::max_rows(g.buffers[static_cast<size_t>(op.out(0))].rows, max.batch, max.seq));
  spec.weights = spec.x = CUDA_R_8I;
  spec.y = CUDA_R_32I;
  spec.compute = CUBLAS_COMPUTE_32I;
  spec.workspace_bytes = c.workspace_bytes;
  plan.gemm = std::make_unique<Gemm>();
  return plan.gemm->init(c.lt, c.handle, spec);
}

Status make_gemm(CudaContext& c, const plan::Graph& g, int i, backend::Shape max) {
  const Op& op = g.ops[static_cast<size_t>(i)];
  const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
  if (w.dtype == DType::kI8) return make_gemm_i8(c, g, i, max);
  OpPlan& plan = c.plans[static_cast<size_t>(i)];
  const DType x_type = g.buffers[static_cast<size_t>(op.in(0))].dtype;
  const DType y_type = g.buffers[static_cast<size_t>(op.out(0))].dtype;
  if (x_type != w.dtype)
    return unsupported(std::string("cuda: linear '") + op.label + "' would multiply " + dtype_name(x_type) +
                       " activations by " + dtype_name(w.dtype) + " weights");
  GemmSpec spec;
  spec.N = w.N;
  spec.K = w.K;
  spec.max_M = static_cast<int>(plan::max_rows(g.buffers[static_cast<size_t>(op.out(0))].rows, max.batch, max.seq));
  spec.weights = spec.x = cuda_type(w.dtype);
  spec.y = cuda_type(y_type);
  spec.compute = c.tf32 && w.dtype == DType::kF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  spec.bias = plan.gemm_bias;
  spec.residual = op.in(plan::slot::kLinearResidual) >= 0 && !plan.fused_into_norm && !plan.residual_in_kernel;
  spec.gelu = plan.gelu_in_gemm;
  spec.workspace_bytes = c.workspace_bytes;
  plan.gemm = std::make_unique<Gemm>();
  return plan.gemm->init(c.lt, c.handle, spec);
}


// The fusions of a kQuantize op into the kernel before it (OpPlan::fused_quantize): op i, an int8
// linear (not fused into a LayerNorm) or a LayerNorm of fp32 rows, whose output op i + 1 quantizes
// for the int8 linear i + 2, the quantized rows, scales and zero points read by that linear alone,
// the row at most kMaxRowWidth wide (one block holds it). In a BERT layer: the FFN's up projection
// (GELU) feeding the down projection, and each LayerNorm feeding the next QKV or up projection.
// A linear that reads fused rows writes the other slot.
void decide_fusions(CudaContext& c, const plan::Graph& g, const std::vector<bool>& here, backend::Shape max) {
  for (size_t i = 0; i + 2 < g.ops.size(); ++i) {
    if (!here[i] || !here[i + 1] || !here[i + 2]) continue;
    const Op& op = g.ops[i];
    const Op& q = g.ops[i + 1];
    const Op& next = g.ops[i + 2];
    OpPlan& plan = c.plans[i];
    int width = 0;
    // (The tensor-core GEMM does not fuse the next quantize: that op's kernel reads its fp32 rows,
    // the same bytes per value as the fused cuBLASLt path's int32 D round trip; see README.)
    if (op.kind == OpKind::kLinear && plan.int8 && !plan.fused_into_norm && !plan.gemm_mma) {
      width = op.p<plan::LinearParams>().weights->N;
    } else if (op.kind == OpKind::kLayerNorm && g.buffers[static_cast<size_t>(op.in(0))].dtype == DType::kF32 &&
               g.buffers[static_cast<size_t>(op.out(0))].dtype == DType::kF32) {
      width = op.p<plan::LayerNormParams>().width;
    } else {
      continue;
    }
    if (q.kind != OpKind::kQuantize || q.in(0) != op.out(0)) continue;
    if (next.kind != OpKind::kLinear || !c.plans[i + 2].int8 || next.in(plan::slot::kX) != q.out(0) ||
        next.in(plan::slot::kLinearScale) != q.out(plan::slot::kQuantizeScale) ||
        next.in(plan::slot::kLinearZeroPoint) != q.out(plan::slot::kQuantizeZeroPoint))
      continue;
    if (width > kMaxRowWidth || q.p<plan::QuantizeParams>().linear->K != width) continue;
    const int consumer = static_cast<int>(i) + 2;
    if (read_elsewhere(g, q.out(0), consumer) || read_elsewhere(g, q.out(plan::slot::kQuantizeScale), consumer) ||
        read_elsewhere(g, q.out(plan::slot::kQuantizeZeroPoint), consumer))
      continue;
    plan.fused_quantize = static_cast<int>(i) + 1;
    plan.fused_consumer = consumer;
    const bool reads_fused = i >= 2 && c.plans[i - 2].fused_consumer == static_cast<int>(i);
    plan.fused_slot = reads_fused ? 1 - c.plans[i - 2].fused_slot : 0;
    plan.writes_y = read_elsewhere(g, op.out(0), plan.fused_quantize);
    c.fused_max_rows = std::max(c.fused_max_rows, plan::max_rows(g.buffers[static_cast<size_t>(q.out(0))].rows, max.batch, max.seq));
    c.fused_max_kp = std::max(c.fused_max_kp, static_cast<size_t>(round_up4(width)));
  }
}

size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Where the fused rows of a slot lie in the context's fused_rows buffer.
struct FusedRows {
  int8_t* q = nullptr;
  float* scale = nullptr;
  int32_t* zero_point = nullptr;
};
size_t fused_slot_bytes(const CudaContext& c) {
  return align_up(c.fused_max_rows * c.fused_max_kp) + align_up(c.fused_max_rows * sizeof(float)) +
         align_up(c.fused_max_rows * sizeof(int32_t));
}
FusedRows fused_rows(const CudaContext& c, int slot) {
  if (!c.fused_rows) return {};
  auto* base = static_cast<unsigned char*>(c.fused_rows) + static_cast<size_t>(slot) * fused_slot_bytes(c);
  const size_t q_bytes = align_up(c.fused_max_rows * c.fused_max_kp);
  return {reinterpret_cast<int8_t*>(base), reinterpret_cast<float*>(base + q_bytes),
          reinterpret_cast<int32_t*>(base + q_bytes + align_up(c.fused_max_rows * sizeof(float)))};
}

// An int8 position or token-type table (per-row scales) as fp32 rows: q · row_scale, the CPU's
// value exactly (it adds those rows with scale 1).
std::vector<float> dequantized_table(const detail::TableView& t) {
  std::vector<float> out(static_cast<size_t>(t.rows) * static_cast<size_t>(t.width));
  const int8_t* q = static_cast<const int8_t*>(t.data);
  for (size_t r = 0; r < static_cast<size_t>(t.rows); ++r)
    for (size_t k = 0; k < static_cast<size_t>(t.width); ++k)
      out[r * t.width + k] = static_cast<float>(q[r * t.width + k]) * t.row_scales[r];
  return out;
}

bool writes(const plan::Graph& g, const backend::PrepareArgs& args, int buffer) {
  for (int k = 0; k < args.op_count; ++k)
    for (int out : g.ops[static_cast<size_t>(args.ops[k])].outputs)
      if (out == buffer) return true;
  return false;
}

// What packed runs need, allocated once: the layout's pinned staging and its device copy, and the
// scratch that expand_packed copies a token-level output of these ops to (sized for the largest).
Status prepare_packed(CudaContext& c, const backend::PrepareArgs& args) {
  const plan::Graph& g = *args.graph;
  c.layout_source_at = static_cast<size_t>(args.max.batch) + 1;
  const size_t bytes =
      (c.layout_source_at + static_cast<size_t>(args.max.batch) * static_cast<size_t>(args.max.seq)) * sizeof(int32_t);
  void* host = nullptr;
  if (Status s = cuda_status(pinned_alloc(&host, bytes), "cudaHostAlloc (packed layout)"); !s) return s;
  c.pinned.push_back(host);
  c.layout_host = static_cast<int32_t*>(host);
  void* device = nullptr;
  if (Status s = cuda_status(device_alloc(&device, bytes), "cudaMalloc (packed layout)"); !s) return s;
  c.layout_device = static_cast<int32_t*>(device);
  for (const plan::NamedTensor& t : g.outputs) {
    const plan::BufferSpec& b = g.buffers[static_cast<size_t>(t.buffer)];
    if (b.rows == plan::Rows::kTokens && writes(g, args, t.buffer))
      c.expand_scratch_bytes = std::max(c.expand_scratch_bytes, b.max_bytes);
  }
  if (c.expand_scratch_bytes == 0) return Status::ok();
  return cuda_status(device_alloc(&c.expand_scratch, c.expand_scratch_bytes), "cudaMalloc (packed outputs' scratch)");
}

// The fp16 weights of the int8 linears that run as fp16 ones, written into the uploaded weights
// from their int8 ones (DeviceDequantization), then the staging freed.
Status dequantize_on_device(CudaContext& c, const DeviceDequantization& d) {
  if (d.linears.empty()) return Status::ok();
  void* staging = nullptr;
  if (Status s = cuda_status(device_alloc(&staging, d.staging.bytes()), "cudaMalloc (int8 weights to dequantize)"); !s)
    return s;
  // On the session's stream (prepare's weight upload says why), so the kernels below see every byte.
  Status status = cuda_status(
      cudaMemcpyAsync(staging, d.staging.data(), d.staging.bytes(), cudaMemcpyHostToDevice, c.stream),
      "uploading int8 weights to dequantize");
  auto at = [](void* base, size_t offset) { return static_cast<unsigned char*>(base) + offset; };
  for (const DeviceDequantization::Linear& l : d.linears) {
    if (!status) break;
    DequantizeWeightsArgs k;
    k.N = l.N;
    k.K = l.K;
    k.q = reinterpret_cast<const int8_t*>(at(staging, l.q));
    k.scales = reinterpret_cast<const float*>(at(staging, l.scales));
    k.multipliers = l.multipliers == SIZE_MAX ? nullptr : reinterpret_cast<const float*>(at(staging, l.multipliers));
    k.out = at(c.weights, l.out);
    status = cuda_status(dequantize_weights(k, c.stream), "dequantize weights kernel");
  }
  if (status) status = cuda_status(cudaStreamSynchronize(c.stream), "dequantizing int8 weights");
  device_free(staging);
  return status;
}

Status prepare(void* cv, const backend::PrepareArgs& args, backend::HeldBytes* held) {
  CudaContext& c = ctx(cv);
  const plan::Graph& g = *args.graph;
  if (Status s = cuda_status(cudaSetDevice(c.device), "cudaSetDevice"); !s) return s;
  if (Status s = cuda_status(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate"); !s) return s;
  if (Status s = cuda_status(cudaEventCreate(&c.start), "cudaEventCreate"); !s) return s;
  if (Status s = cuda_status(cudaEventCreate(&c.stop), "cudaEventCreate"); !s) return s;
  if (Status s = cublas_status(c.lt->create(&c.handle), "cublasLtCreate"); !s) return s;
  c.workspace_bytes = c.cc_major >= 9 ? (32u << 20) : (4u << 20);
  if (Status s = cuda_status(device_alloc(&c.workspace, c.workspace_bytes), "cudaMalloc (cuBLASLt workspace)"); !s)
    return s;
  c.plans.clear();
  c.plans.resize(g.ops.size());
  c.graphs_cache = std::make_unique<GraphCache>(kGraphCacheShapes);
  if (args.may_pack)
    if (Status s = prepare_packed(c, args); !s) return s;

  Upload up;
  PendingPointers pending;
  DeviceDequantization dequantization;
  if (c.mapped_weights)
    if (Status s = c.mapping.map(c.device, args.model->data, args.model->size); !s) return s;
  // A tensor the GPU reads as it is stored: where it lies when mapped, else in the upload.
  auto place = [&](const void** slot, const void* host, size_t bytes) {
    // (The kernels' vector loads want 16-byte alignment; the upload gives every piece 256.)
    const void* dev = reinterpret_cast<uintptr_t>(host) % 16 == 0 ? c.mapping.device_address(host) : nullptr;
    if (dev) {
      *slot = dev;
      c.mapped_bytes += bytes;
    } else {
      pending.add(slot, up.add(host, bytes));
    }
  };
  auto place_floats = [&](const float** slot, const float* host, int count) {
    place(reinterpret_cast<const void**>(slot), host, sizeof(float) * static_cast<size_t>(count));
  };
  for (int k = 0; k < args.op_count; ++k) {
    const int i = args.ops[k];
    const Op& op = g.ops[static_cast<size_t>(i)];
    OpPlan& plan = c.plans[static_cast<size_t>(i)];
    switch (op.kind) {
      case OpKind::kEmbed: {
        const plan::EmbedParams& e = op.p<plan::EmbedParams>();
        // The word table as stored, int8 ones with their row scales (the embed kernel applies
        // them as the CPU does); the small int8 position and token-type tables are uploaded as
        // fp32 (the kernel's type is then kF32: elem(kI8)).
        auto place_table = [&](const void** slot, const detail::TableView& t) {
          if (t.dtype == DType::kI8)
            pending.add(slot, up.add(dequantized_table(t)));
          else
            place(slot, t.data, table_bytes(t));
        };
        place(&plan.word, e.word->data, table_bytes(*e.word));
        if (e.word->dtype == DType::kI8) place_floats(&plan.word_row_scales, e.word->row_scales, e.word->rows);
        place_table(&plan.position, *e.position);
        if (e.token_type) place_table(&plan.token_type, *e.token_type);
        if (e.norm) {
          place_floats(&plan.gamma, e.norm->gamma, e.width);
          place_floats(&plan.beta, e.norm->beta, e.width);
        }
        break;
      }
      case OpKind::kLayerNorm: {
        const plan::LayerNormParams& n = op.p<plan::LayerNormParams>();
        place_floats(&plan.gamma, n.norm->gamma, n.width);
        place_floats(&plan.beta, n.norm->beta, n.width);
        break;
      }
      case OpKind::kLinear:
        prepare_linear(c, g, i, &up, &pending, &dequantization);
        break;
      case OpKind::kQuantize: {
        const detail::LinearView& w = *op.p<plan::QuantizeParams>().linear;
        if (w.activation_multipliers)
          pending.add(reinterpret_cast<const void**>(&plan.multipliers),
                      up.add(w.activation_multipliers, static_cast<size_t>(w.K) * sizeof(float)));
        break;
      }
      case OpKind::kAttention: {
        if (c.attention == AttentionKernel::kInt8) {
          if (const std::string why = attention_i8_refusal(c, g, op, args.max.seq); !why.empty())
            return unsupported("backend cuda, attention=int8: the int8 tensor-core attention kernel cannot run attention op '" +
                               op.label + "': " + why + " (attention=auto runs it)");
          // Its dynamic shared memory (above 48 KB): a function attribute, set here, outside any
          // graph capture, for the current device.
          if (Status s = cuda_status(attention_i8_mma_prepare(), "cudaFuncSetAttribute (int8 attention kernel)"); !s) return s;
          plan.attention_i8 = true;
          break;
        }
        std::string why;
        if (c.attention == AttentionKernel::kMma && !attention_mma_applies(c, g, op, &why))
          return unsupported("backend cuda, attention=mma: the tensor-core attention kernel cannot run attention op '" +
                             op.label + "': " + why + " (attention=auto or simt runs it on the SIMT kernel)");
        plan.attention_mma = uses_attention_mma(c, g, op);
        if (c.qkv_attention_fused && i > 0) plan_qkv_attention(c, g, static_cast<int>(i) - 1);
        break;
      }
      case OpKind::kCopy: {
        if (op.p<plan::CopyParams>().to_memory == plan::kHostMemory) break;  // to the host: direct
        void* p = nullptr;
        if (Status s = cuda_status(pinned_alloc(&p, g.buffers[static_cast<size_t>(op.in(0))].max_bytes), "cudaHostAlloc");
            !s)
          return s;
        c.pinned.push_back(p);
        plan.staging = p;
        break;
      }
      default:
        break;
    }
  }
  std::vector<bool> here(g.ops.size(), false);
  for (int k = 0; k < args.op_count; ++k) here[static_cast<size_t>(args.ops[k])] = true;
  decide_fusions(c, g, here, args.max);
  if (c.fused_max_rows > 0)
    if (Status s = cuda_status(device_alloc(&c.fused_rows, 2 * fused_slot_bytes(c)), "cudaMalloc (fused quantized rows)"); !s)
      return s;
  c.weights_bytes = up.bytes();
  if (c.weights_bytes > 0) {
    if (Status s = cuda_status(device_alloc(&c.weights, c.weights_bytes), "cudaMalloc (weights)"); !s) return s;
    // cudaMemcpy from pageable memory returns once the bytes are staged, not once they have
    // arrived, and it is ordered on the legacy stream, which the session's non-blocking stream
    // does not wait for: a kernel on that stream could read weights still in flight. The copy is
    // on the session's stream instead (a pageable copy is staged before the call returns, so `up`
    // may go), and the stream is synchronized before the first run.
    if (Status s = cuda_status(cudaMemcpyAsync(c.weights, up.data(), c.weights_bytes, cudaMemcpyHostToDevice, c.stream),
                               "uploading weights");
        !s)
      return s;
    if (Status s = cuda_status(cudaStreamSynchronize(c.stream), "uploading weights"); !s) return s;
    pending.resolve(c.weights);
  }
  if (Status s = dequantize_on_device(c, dequantization); !s) return s;
  // The GEMM descriptors, now that the biases have device addresses.
  for (int k = 0; k < args.op_count; ++k)
    if (g.ops[static_cast<size_t>(args.ops[k])].kind == OpKind::kLinear)
      if (Status s = make_gemm(c, g, args.ops[k], args.max); !s) return s;
  held->weights_copied = c.weights_bytes;
  held->weights_in_place = c.mapped_bytes;
  return Status::ok();
}

// ---- Run: encrt's kernels and cuBLASLt calls on the session's stream.

// A packed run's bucket: its real tokens rounded up to kPackedRowBucket, never past batch · seq
// (what the buffers hold). The row-wise ops run on these rows; those past the real tokens are
// zeros from the embedding on, rows never mix in a row-wise op (a GEMM's row of Y is its row of
// X times W), and attention, pooling, expand_packed and the copies to the host read only real
// rows: a value in a bucket row, even NaN, reaches no result. (Attention leaves its output's bucket
// rows as the arena had them, so they may hold anything: a kernel that reduces over the rows of a
// token buffer, such as a per-tensor quantization scale, must read offsets[batch] rows only.)
int bucket_rows(const backend::RunArgs& a) {
  const int all = a.shape.batch * a.shape.seq;
  const int rounded = (a.packed->tokens + kPackedRowBucket - 1) / kPackedRowBucket * kPackedRowBucket;
  return std::min(rounded, all);
}

// Rows of `buffer` the kernels work on: padded, the run's (batch, seq) rows; packed, the bucket
// for the graph's token-row buffers (the [batch, seq] inputs keep their rows).
size_t rows_of(const backend::RunArgs& a, int buffer) {
  if (!a.packed) return plan::rows_of(a.graph->buffers[static_cast<size_t>(buffer)], a.shape.batch, a.shape.seq);
  plan::TokenLayout bucket = *a.packed;
  bucket.tokens = bucket_rows(a);
  return plan::rows_in_run(*a.graph, buffer, a.shape.batch, a.shape.seq, &bucket);
}
// Rows of `buffer` that hold results: packed, the real tokens (what a copy to the host carries).
size_t real_rows_of(const backend::RunArgs& a, int buffer) {
  return plan::rows_in_run(*a.graph, buffer, a.shape.batch, a.shape.seq, a.packed);
}
size_t row_bytes_of(const backend::RunArgs& a, int buffer) { return a.graph->buffers[static_cast<size_t>(buffer)].row_bytes; }
const int32_t* device_offsets(const CudaContext& c) { return c.layout_device; }
const int32_t* device_source(const CudaContext& c) { return c.layout_device + c.layout_source_at; }
Elem elem_of(const backend::RunArgs& a, int buffer) { return elem(a.graph->buffers[static_cast<size_t>(buffer)].dtype); }
void* ptr(const backend::RunArgs& a, int buffer) { return buffer >= 0 ? a.buffers[static_cast<size_t>(buffer)] : nullptr; }

bool copies_to_device(const Op& op) {
  return op.kind == OpKind::kCopy && op.p<plan::CopyParams>().to_memory != plan::kHostMemory;
}

// The host half of the copies into the device: the caller's bytes and a packed run's layout into
// pinned staging (outside any graph: a graph replays the staging's transfer, never a host memcpy).
void stage_inputs(const CudaContext& c, const backend::RunArgs& a) {
  if (a.packed && c.layout_host) {
    std::memcpy(c.layout_host, a.packed->offsets, (static_cast<size_t>(a.shape.batch) + 1) * sizeof(int32_t));
    std::memcpy(c.layout_host + c.layout_source_at, a.packed->source, static_cast<size_t>(a.packed->tokens) * sizeof(int32_t));
  }
  for (int k = 0; k < a.op_count; ++k) {
    const Op& op = a.graph->ops[static_cast<size_t>(a.ops[k])];
    if (!copies_to_device(op)) continue;
    const void* src = ptr(a, op.in(0));
    if (src) std::memcpy(c.plans[static_cast<size_t>(a.ops[k])].staging, src, real_rows_of(a, op.in(0)) * row_bytes_of(a, op.in(0)));
  }
}

// ---- The int8 path: kQuantize and int8 kLinear.

// Op i's position in the segment, or -1.
int position_of(const backend::RunArgs& a, int i) {
  for (int k = 0; k < a.op_count; ++k)
    if (a.ops[k] == i) return k;
  return -1;
}

// Whether the linear at segment position k runs fused with its quantize op: the linear, the
// quantize and the linear reading its rows all in this segment, in order (a segment of one op, as
// observed runs make, runs each op by itself, through the graph's buffers).
bool fuses_at(const CudaContext& c, const backend::RunArgs& a, int k) {
  if (k < 0 || k + 2 >= a.op_count) return false;
  const OpPlan& p = c.plans[static_cast<size_t>(a.ops[k])];
  return p.fused_quantize >= 0 && a.ops[k + 1] == p.fused_quantize && a.ops[k + 2] == p.fused_consumer;
}

Status enqueue_quantize(CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& op = a.graph->ops[static_cast<size_t>(i)];
  if (fuses_at(c, a, position_of(a, i) - 1)) return Status::ok();  // done by the linear's epilogue
  QuantizeArgs k;
  k.rows = static_cast<int>(rows_of(a, op.out(0)));
  k.K = op.p<plan::QuantizeParams>().linear->K;
  k.x = static_cast<const float*>(ptr(a, op.in(plan::slot::kX)));
  k.multipliers = c.plans[static_cast<size_t>(i)].multipliers;
  k.q = ptr(a, op.out(0));
  k.shifted = a.graph->buffers[static_cast<size_t>(op.out(0))].dtype == DType::kI8;
  k.scale = static_cast<float*>(ptr(a, op.out(plan::slot::kQuantizeScale)));
  k.zero_point = static_cast<int32_t*>(ptr(a, op.out(plan::slot::kQuantizeZeroPoint)));
  k.layout = c.row_kernels;
  return cuda_status(quantize_rows(k, c.stream), "quantize kernel");
}

// cuBLASLt's D = X'·Wᵀ into the op's scratch, then encrt's epilogue (and, fused, the next
// layer's quantization into fused_rows).
Status enqueue_linear_i8(CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& op = a.graph->ops[static_cast<size_t>(i)];
  const OpPlan& plan = c.plans[static_cast<size_t>(i)];
  const int k = position_of(a, i);
  const bool fused_out = fuses_at(c, a, k);
  const bool fused_in = fuses_at(c, a, k - 2);
  const FusedRows in = fused_in ? fused_rows(c, c.plans[static_cast<size_t>(a.ops[k - 2])].fused_slot) : FusedRows{};
  const FusedRows out = fused_out ? fused_rows(c, plan.fused_slot) : FusedRows{};
  const int M = static_cast<int>(rows_of(a, op.out(0)));
  if (M == 0) return Status::ok();
  const void* x = fused_in ? in.q : ptr(a, op.in(plan::slot::kX));
  if (plan.gemm_mma) {
    GemmI8MmaArgs m;
    m.M = M;
    m.N = op.p<plan::LinearParams>().weights->N;
    m.ld_w = plan.ld_d;
    m.Kp = round_up4(op.p<plan::LinearParams>().weights->K);
    m.x = x;
    m.w = static_cast<const int8_t*>(plan.weights);
    m.x_scale = fused_in ? in.scale : static_cast<const float*>(ptr(a, op.in(plan::slot::kLinearScale)));
    m.x_zero_point = fused_in ? in.zero_point : static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kLinearZeroPoint)));
    m.w_scale = plan.w_scale;
    m.w_sum = plan.w_sum;
    m.activation = plan.activation;
    if (!plan.fused_into_norm) {  // else the LayerNorm after adds the bias and the residual
      m.bias = plan.bias;
      m.residual = static_cast<const float*>(ptr(a, op.in(plan::slot::kLinearResidual)));
    }
    m.y = static_cast<float*>(ptr(a, op.out(0)));
    m.sms = c.sms;
    m.tile = c.int8_tile;
    return cuda_status(gemm_i8_mma(m, c.stream), "int8 GEMM kernel (tensor cores)");
  }
  void* d = ptr(a, op.scratch);
  if (Status st = plan.gemm->run(M, plan.weights, x, nullptr, d, c.workspace, c.stream); !st) return st;
  Int8EpilogueArgs e;
  e.rows = M;
  e.N = op.p<plan::LinearParams>().weights->N;
  e.ld_d = plan.ld_d;
  e.d = static_cast<const int32_t*>(d);
  e.x_scale = fused_in ? in.scale : static_cast<const float*>(ptr(a, op.in(plan::slot::kLinearScale)));
  e.x_zero_point = fused_in ? in.zero_point : static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kLinearZeroPoint)));
  e.w_scale = plan.w_scale;
  e.w_sum = plan.w_sum;
  e.activation = plan.activation;
  if (!plan.fused_into_norm) {  // else the LayerNorm after adds the bias and the residual
    e.bias = plan.bias;
    e.residual = static_cast<const float*>(ptr(a, op.in(plan::slot::kLinearResidual)));
  }
  e.y = fused_out && !plan.writes_y ? nullptr : static_cast<float*>(ptr(a, op.out(0)));
  if (fused_out) {
    e.next_multipliers = c.plans[static_cast<size_t>(plan.fused_quantize)].multipliers;
    e.next_q = out.q;
    e.next_shifted = true;
    e.next_scale = out.scale;
    e.next_zero_point = out.zero_point;
  }
  return cuda_status(int8_epilogue(e, c.stream), "int8 epilogue kernel");
}

// LayerNorm + the next int8 linear's quantization (fuses_at the LayerNorm's position).
Status enqueue_layer_norm_quantize(CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& op = a.graph->ops[static_cast<size_t>(i)];
  const OpPlan& plan = c.plans[static_cast<size_t>(i)];
  const plan::LayerNormParams& n = op.p<plan::LayerNormParams>();
  LayerNormQuantizeArgs k;
  k.norm.rows = static_cast<int>(rows_of(a, op.in(0)));
  k.norm.width = n.width;
  k.norm.x = ptr(a, op.in(0));
  k.norm.x_type = elem_of(a, op.in(0));
  if (plan.fused_linear >= 0) {
    const Op& lin = a.graph->ops[static_cast<size_t>(plan.fused_linear)];
    const int r = lin.in(plan::slot::kLinearResidual);
    k.norm.bias = c.plans[static_cast<size_t>(plan.fused_linear)].bias;
    k.norm.residual = ptr(a, r);
    k.norm.residual_type = elem_of(a, r);
  }
  k.norm.gamma = plan.gamma;
  k.norm.beta = plan.beta;
  k.norm.eps = n.eps;
  k.norm.y = plan.writes_y ? ptr(a, op.out(0)) : nullptr;
  k.norm.y_type = elem_of(a, op.out(0));
  const FusedRows out = fused_rows(c, plan.fused_slot);
  k.multipliers = c.plans[static_cast<size_t>(plan.fused_quantize)].multipliers;
  k.q = out.q;
  k.shifted = true;
  k.scale = out.scale;
  k.zero_point = out.zero_point;
  k.norm.layout = c.row_kernels;
  return cuda_status(layer_norm_quantize(k, c.stream), "LayerNorm + quantize kernel");
}

// The device half of a packed run's layout: every offset slot and the bucket's source entries
// (those past the real tokens are never read), sizes that the graph's key fixes.
Status enqueue_layout(CudaContext& c, const backend::RunArgs& a) {
  if (!a.packed) return Status::ok();
  if (!c.layout_device) return internal_error("cuda: a packed run in a session prepared for padded runs only");
  const size_t bytes = (c.layout_source_at + static_cast<size_t>(bucket_rows(a))) * sizeof(int32_t);
  return cuda_status(cudaMemcpyAsync(c.layout_device, c.layout_host, bytes, cudaMemcpyHostToDevice, c.stream),
                     "copy of the packed layout to the device");
}

// Whether encrt's fp16 GEMM runs linear `plan` at M rows (option fp16_gemm).
bool runs_f16_mma(const CudaContext& c, const OpPlan& plan, int M) {
  return plan.f16_mma && (c.fp16_gemm == F16Gemm::kMma || M <= kF16MmaAutoRows || (c.fp16_gemm == F16Gemm::kNorm && plan.gemm_norm));
}

// The most blocks of a fused kernel's cluster for op plan p at M rows (option norm_cluster).
int norm_cluster_of(const CudaContext& c, const OpPlan& p, int M) {
  if (!p.cluster16 || c.norm_cluster == 8) return 8;
  return c.norm_cluster == 16 ? 16 : gemm_f16_layer_norm_cluster_for(M, c.sms, p.active16);
}

// The most blocks of the fused linear + LayerNorm kernel's cluster for op plan p at M rows: as
// norm_cluster_of, and 4 under norm_cluster=4 where the GPU runs such clusters (the feed-forward
// kernels keep 8 there).
int linear_norm_cluster_of(const CudaContext& c, const OpPlan& p, int M) {
  return p.cluster4 ? 4 : norm_cluster_of(c, p, M);
}

// The rows a block of the fused linear + LayerNorm kernel takes for op plan p at M rows in clusters
// of up to max_cluster blocks (option norm_rows; 16 where the 64-row build was not prepared).
int norm_rows_of(const CudaContext& c, const OpPlan& p, int M, int N, int max_cluster) {
  if (c.norm_rows == 128 && p.rows128 && max_cluster != 16) return 128;
  if (!(max_cluster == 16 ? p.rows64_16 : p.rows64)) return 16;
  return c.norm_rows == 64 ? 64 : gemm_f16_layer_norm_rows(M, N, max_cluster, c.sms);
}

// Whether the linear at segment position k runs with the LayerNorm after it in one kernel
// (OpPlan::gemm_norm): both in this segment, in order, on encrt's GEMM at this run's rows (a
// segment of one op, as observed runs make, runs each op by itself). Then the LayerNorm op
// launches nothing.
bool norm_fused_at(const CudaContext& c, const backend::RunArgs& a, int k) {
  if (k < 0 || k + 1 >= a.op_count || a.ops[k + 1] != a.ops[k] + 1) return false;
  const OpPlan& p = c.plans[static_cast<size_t>(a.ops[k])];
  return p.gemm_norm && runs_f16_mma(c, p, static_cast<int>(rows_of(a, a.graph->ops[static_cast<size_t>(a.ops[k])].out(0))));
}

// Whether the up projection at segment position k runs its feed-forward block in one kernel
// (OpPlan::ffn_norm): the down projection and its LayerNorm next in this segment, fused as above.
// Then the down projection and the LayerNorm launch nothing.
bool ffn_fused_at(const CudaContext& c, const backend::RunArgs& a, int k) {
  if (k < 0 || k + 2 >= a.op_count || a.ops[k + 1] != a.ops[k] + 1) return false;
  const OpPlan& p = c.plans[static_cast<size_t>(a.ops[k])];
  return p.ffn_norm && runs_f16_mma(c, p, static_cast<int>(rows_of(a, a.graph->ops[static_cast<size_t>(a.ops[k])].out(0)))) &&
         norm_fused_at(c, a, k + 1);
}

// Whether the output projection at segment position k runs the layer's tail in one kernel
// (OpPlan::layer_tail): its LayerNorm fused as above, and the feed-forward block after it (k + 2)
// fused as above, all five ops next in this segment, and the block's output y where the kernel
// may write it (layer_tail_memory_fits: the arena may put y over the projection's input or
// residual). Then ops k + 1 .. k + 4 launch nothing.
bool layer_fused_at(const CudaContext& c, const backend::RunArgs& a, int k) {
  if (k < 0 || k + 4 >= a.op_count || a.ops[k + 2] != a.ops[k] + 2) return false;
  if (!c.plans[static_cast<size_t>(a.ops[k])].layer_tail || !norm_fused_at(c, a, k) || !ffn_fused_at(c, a, k + 2)) return false;
  const Op& projection = a.graph->ops[static_cast<size_t>(a.ops[k])];
  const int y = a.graph->ops[static_cast<size_t>(a.ops[k]) + 4].out(0);
  return layer_tail_memory_fits(ptr(a, y), ptr(a, projection.in(0)), ptr(a, projection.in(plan::slot::kLinearResidual)),
                                rows_of(a, y) * row_bytes_of(a, y));
}

// Whether the QKV projection at segment position k runs with its attention in one kernel
// (OpPlan::qkv_attention): the attention next in this segment, a padded run (the kernel takes
// whole sequences of at most 128 rows, not packed ones), on encrt's GEMM at this run's rows.
// Then the attention op launches nothing.
bool qkv_fused_at(const CudaContext& c, const backend::RunArgs& a, int k) {
  if (k < 0 || k + 1 >= a.op_count || a.ops[k + 1] != a.ops[k] + 1 || a.packed || a.shape.seq > kQkvAttentionMaxSeq)
    return false;
  const OpPlan& p = c.plans[static_cast<size_t>(a.ops[k])];
  return p.qkv_attention && runs_f16_mma(c, p, static_cast<int>(rows_of(a, a.graph->ops[static_cast<size_t>(a.ops[k])].out(0))));
}

// QKV projection i and its attention (qkv_fused_at) as one kernel.
Status enqueue_qkv_attention(CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& lin = a.graph->ops[static_cast<size_t>(i)];
  const Op& att = a.graph->ops[static_cast<size_t>(i) + 1];
  const OpPlan& plan = c.plans[static_cast<size_t>(i)];
  const plan::AttentionParams& p = att.p<plan::AttentionParams>();
  QkvAttentionArgs k;
  k.batch = a.shape.batch;
  k.seq = a.shape.seq;
  k.heads = p.heads;
  k.head_dim = p.head_dim;
  k.width = lin.p<plan::LinearParams>().weights->K;
  k.x = ptr(a, lin.in(0));
  k.w = plan.weights;
  k.bias = plan.gemm_bias;
  k.mask = static_cast<const int32_t*>(ptr(a, att.in(plan::slot::kAttentionMask)));
  k.scale = p.scale;
  k.out = ptr(a, att.out(0));
  return cuda_status(qkv_attention(k, c.stream), "QKV projection + attention kernel (tensor cores, clusters)");
}

// The fused feed-forward kernel's arguments for up projection i's block (without a projection).
FfnLayerNormArgs ffn_args(const CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& up = a.graph->ops[static_cast<size_t>(i)];
  const Op& down = a.graph->ops[static_cast<size_t>(i) + 1];
  const Op& ln = a.graph->ops[static_cast<size_t>(i) + 2];
  const OpPlan& up_plan = c.plans[static_cast<size_t>(i)];
  const OpPlan& down_plan = c.plans[static_cast<size_t>(i) + 1];
  const OpPlan& ln_plan = c.plans[static_cast<size_t>(i) + 2];
  const detail::LinearView& w1 = *up.p<plan::LinearParams>().weights;
  FfnLayerNormArgs k;
  k.M = static_cast<int>(rows_of(a, up.out(0)));
  k.H = w1.K;
  k.F = w1.N;
  k.x = ptr(a, up.in(0));
  k.w1 = up_plan.weights;
  k.b1 = up_plan.gemm_bias;
  k.activation = up_plan.gelu_in_gemm ? 2 : up_plan.activation;  // exact GELU even under gelu=cublaslt
  k.w2 = down_plan.weights;
  k.b2 = down_plan.bias;
  k.residual = ptr(a, down.in(plan::slot::kLinearResidual));
  k.gamma = ln_plan.gamma;
  k.beta = ln_plan.beta;
  k.eps = ln.p<plan::LayerNormParams>().eps;
  k.y = ptr(a, ln.out(0));
  k.max_cluster = norm_cluster_of(c, up_plan, k.M);
  return k;
}

// The feed-forward block of up projection i (ffn_fused_at) as one kernel.
Status enqueue_ffn(CudaContext& c, const backend::RunArgs& a, int i) {
  return cuda_status(ffn_layer_norm(ffn_args(c, a, i), c.stream), "feed-forward block kernel (tensor cores, clusters)");
}

// Output projection o, its LayerNorm and the feed-forward block after them (layer_fused_at) as one
// kernel: the block's kernel with the projection, which writes the block's input x.
Status enqueue_layer_tail(CudaContext& c, const backend::RunArgs& a, int o) {
  const Op& projection = a.graph->ops[static_cast<size_t>(o)];
  const Op& ln = a.graph->ops[static_cast<size_t>(o) + 1];
  const OpPlan& plan = c.plans[static_cast<size_t>(o)];
  const OpPlan& ln_plan = c.plans[static_cast<size_t>(o) + 1];
  FfnLayerNormArgs k = ffn_args(c, a, o + 2);
  k.projection.in = ptr(a, projection.in(0));
  k.projection.w = plan.weights;
  k.projection.bias = plan.bias;
  k.projection.residual = ptr(a, projection.in(plan::slot::kLinearResidual));
  k.projection.gamma = ln_plan.gamma;
  k.projection.beta = ln_plan.beta;
  k.projection.eps = ln.p<plan::LayerNormParams>().eps;
  k.projection.out = ptr(a, ln.out(0));  // = k.x, the block's input (layer_tail_at)
  k.max_cluster = !plan.layer16 || c.norm_cluster == 8 ? 8
                  : c.norm_cluster == 16             ? 16
                                                     : gemm_f16_layer_norm_cluster_for(k.M, c.sms, plan.layer_active16);
  return cuda_status(ffn_layer_norm(k, c.stream),
                     "output projection + LayerNorm + feed-forward block kernel (tensor cores, clusters)");
}

Status enqueue_op(CudaContext& c, const backend::RunArgs& a, int i) {
  const Op& op = a.graph->ops[static_cast<size_t>(i)];
  const OpPlan& plan = c.plans[static_cast<size_t>(i)];
  cudaStream_t s = c.stream;
  const DependentLaunchScope launch_mode(c.dependent_launch);  // the launchers of encrt's kernels read it
  switch (op.kind) {
    case OpKind::kCopy: {
      const void* src = ptr(a, op.in(0));
      void* dst = ptr(a, op.out(0));
      if (!src || !dst) return Status::ok();  // an absent optional input: its mirror is absent too
      // Into the device, the rows the kernels read (a graph fixes the size: the bucket's, packed);
      // to the host (never in a graph), only the rows that hold results.
      const size_t row_bytes = row_bytes_of(a, op.in(0));
      if (copies_to_device(op))
        return cuda_status(cudaMemcpyAsync(dst, plan.staging, rows_of(a, op.in(0)) * row_bytes, cudaMemcpyHostToDevice, s),
                           "copy to the device");
      return cuda_status(cudaMemcpyAsync(dst, src, real_rows_of(a, op.in(0)) * row_bytes, cudaMemcpyDeviceToHost, s),
                         "copy to the host");
    }
    case OpKind::kEmbed: {
      const plan::EmbedParams& e = op.p<plan::EmbedParams>();
      EmbedArgs k;
      k.rows = static_cast<int>(rows_of(a, op.out(0)));
      k.seq = a.shape.seq;
      k.width = e.width;
      k.ids = static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kX)));
      k.token_types = static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kEmbedTokenTypes)));
      k.word = plan.word;
      k.word_type = elem(e.word->dtype);
      k.word_row_scales = plan.word_row_scales;
      k.position = plan.position;
      k.position_type = elem(e.position->dtype);
      k.token_type_table = plan.token_type;
      k.token_type_type = e.token_type ? elem(e.token_type->dtype) : Elem::kF32;
      k.scale = e.scale;
      k.gamma = plan.gamma;
      k.beta = plan.beta;
      k.eps = e.eps;
      k.out = ptr(a, op.out(0));
      k.out_type = elem_of(a, op.out(0));
      if (a.packed) {
        k.offsets = device_offsets(c);
        k.source = device_source(c);
        k.batch = a.shape.batch;
      }
      k.layout = c.row_kernels;
      return cuda_status(embed_layer_norm(k, s), "embeddings kernel");
    }
    case OpKind::kLayerNorm: {
      if (fuses_at(c, a, position_of(a, i))) return enqueue_layer_norm_quantize(c, a, i);
      if (norm_fused_at(c, a, position_of(a, i) - 1)) return Status::ok();  // done by the linear's kernel
      const plan::LayerNormParams& n = op.p<plan::LayerNormParams>();
      LayerNormArgs k;
      k.rows = static_cast<int>(rows_of(a, op.in(0)));
      k.width = n.width;
      k.x = ptr(a, op.in(0));
      k.x_type = elem_of(a, op.in(0));
      if (plan.fused_linear >= 0) {
        const Op& lin = a.graph->ops[static_cast<size_t>(plan.fused_linear)];
        const int r = lin.in(plan::slot::kLinearResidual);
        k.bias = c.plans[static_cast<size_t>(plan.fused_linear)].bias;
        k.residual = ptr(a, r);
        k.residual_type = elem_of(a, r);
      }
      k.gamma = plan.gamma;
      k.beta = plan.beta;
      k.eps = n.eps;
      k.y = ptr(a, op.out(0));
      k.y_type = elem_of(a, op.out(0));
      k.layout = c.row_kernels;
      return cuda_status(layer_norm(k, s), "LayerNorm kernel");
    }
    case OpKind::kLinear: {
      if (plan.int8) return enqueue_linear_i8(c, a, i);
      const int M = static_cast<int>(rows_of(a, op.out(0)));
      const int r = op.in(plan::slot::kLinearResidual);
      const int k_at = position_of(a, i);
      if (qkv_fused_at(c, a, k_at)) return enqueue_qkv_attention(c, a, i);
      if (layer_fused_at(c, a, k_at)) return enqueue_layer_tail(c, a, i);
      if (layer_fused_at(c, a, k_at - 2)) return Status::ok();  // done by the output projection's kernel
      if (ffn_fused_at(c, a, k_at)) return enqueue_ffn(c, a, i);
      if (ffn_fused_at(c, a, k_at - 1)) return Status::ok();  // done by the up projection's kernel
      if (norm_fused_at(c, a, k_at)) {  // linear + bias + residual + the LayerNorm after, one kernel
        const plan::LinearParams& p = op.p<plan::LinearParams>();
        const Op& ln = a.graph->ops[static_cast<size_t>(i) + 1];
        const OpPlan& ln_plan = c.plans[static_cast<size_t>(i) + 1];
        GemmF16LayerNormArgs k;
        k.M = M;
        k.N = p.weights->N;
        k.K = p.weights->K;
        k.x = ptr(a, op.in(0));
        k.w = plan.weights;
        k.bias = plan.bias;
        k.residual = ptr(a, r);
        k.gamma = ln_plan.gamma;
        k.beta = ln_plan.beta;
        k.eps = ln.p<plan::LayerNormParams>().eps;
        k.y = ptr(a, ln.out(0));
        k.max_cluster = linear_norm_cluster_of(c, plan, M);
        k.block_rows = norm_rows_of(c, plan, M, k.N, k.max_cluster);
        return cuda_status(gemm_f16_layer_norm(k, s), "fp16 GEMM + LayerNorm kernel (tensor cores, clusters)");
      }
      if (runs_f16_mma(c, plan, M)) {
        // One kernel: bias, the exact activation (GELU even under gelu=cublaslt, which is
        // cuBLASLt's) and the residual, unless the LayerNorm after adds the bias and residual.
        const plan::LinearParams& p = op.p<plan::LinearParams>();
        GemmF16MmaArgs k;
        k.M = M;
        k.N = p.weights->N;
        k.K = p.weights->K;
        k.x = ptr(a, op.in(0));
        k.w = plan.weights;
        if (!plan.fused_into_norm) {
          k.bias = plan.gemm_bias;
          k.residual = r >= 0 ? ptr(a, r) : nullptr;
        }
        k.activation = plan.gelu_in_gemm ? 2 : plan.activation;
        k.y = ptr(a, op.out(0));
        k.sms = c.sms;
        return cuda_status(gemm_f16_mma(k, s), "fp16 GEMM kernel (tensor cores)");
      }
      const void* residual = r >= 0 && !plan.fused_into_norm && !plan.residual_in_kernel ? ptr(a, r) : nullptr;
      if (Status st = plan.gemm->run(M, plan.weights, ptr(a, op.in(0)), residual, ptr(a, op.out(0)), c.workspace, s); !st)
        return st;
      if (plan.activation == 0 && !plan.residual_in_kernel) return Status::ok();
      ActivationArgs k;
      k.n = static_cast<size_t>(M) * static_cast<size_t>(op.p<plan::LinearParams>().weights->N);
      k.y = ptr(a, op.out(0));
      k.y_type = elem_of(a, op.out(0));
      if (plan.residual_in_kernel) {
        k.residual = ptr(a, r);
        k.residual_type = elem_of(a, r);
      }
      k.activation = plan.activation;
      return cuda_status(activation(k, s), "activation kernel");
    }
    case OpKind::kAttention: {
      const plan::AttentionParams& p = op.p<plan::AttentionParams>();
      if (qkv_fused_at(c, a, position_of(a, i) - 1)) return Status::ok();  // done by the QKV projection's kernel
      AttentionArgs k;
      k.batch = a.shape.batch;
      k.seq = a.shape.seq;
      k.heads = p.heads;
      k.head_dim = p.head_dim;
      k.qkv = ptr(a, op.in(plan::slot::kX));
      k.mask = static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kAttentionMask)));
      k.scale = p.scale;
      k.out = ptr(a, op.out(0));
      k.probs = static_cast<float*>(ptr(a, op.out(plan::slot::kAttentionProbs)));
      k.type = elem_of(a, op.in(plan::slot::kX));
      if (a.packed) k.offsets = device_offsets(c);
      if (plan.attention_i8) return cuda_status(attention_i8_mma(k, s), "attention kernel (int8 tensor cores)");
      k.key_split = c.attention_split;
      k.sms = c.sms;
      k.prefetch_keys = c.attention_prefetch;
      k.six_blocks = c.attention_six_blocks;
      k.whole_keys = c.attention_whole_keys;
      if (plan.attention_mma) return cuda_status(attention_mma(k, s), "attention kernel (tensor cores)");
      return cuda_status(attention(k, s), "attention kernel");
    }
    case OpKind::kPoolMean:
    case OpKind::kPoolFirst: {
      PoolArgs k;
      k.batch = a.shape.batch;
      k.seq = a.shape.seq;
      k.width = op.p<plan::RowsParams>().width;
      k.x = ptr(a, op.in(plan::slot::kX));
      k.x_type = elem_of(a, op.in(plan::slot::kX));
      k.mask = op.kind == OpKind::kPoolMean ? static_cast<const int32_t*>(ptr(a, op.in(plan::slot::kPoolMask))) : nullptr;
      k.mean = op.kind == OpKind::kPoolMean;
      k.out = ptr(a, op.out(0));
      k.out_type = elem_of(a, op.out(0));
      if (a.packed) k.offsets = device_offsets(c);
      return cuda_status(pool(k, s), "pooling kernel");
    }
    case OpKind::kTanh:
      return cuda_status(tanh_in_place(rows_of(a, op.out(0)) * static_cast<size_t>(op.p<plan::RowsParams>().width),
                                       ptr(a, op.out(0)), elem_of(a, op.out(0)), s),
                         "tanh kernel");
    case OpKind::kQuantize:
      return enqueue_quantize(c, a, i);
    case OpKind::kPoolMax:
    case OpKind::kL2Normalize:
    case OpKind::kScores:
      break;
  }
  return internal_error("cuda: op '" + op.label + "' of a kind this backend does not run");
}

// Ops [from, to) of the segment (the packed layout's copy first when the range starts it).
Status enqueue(CudaContext& c, const backend::RunArgs& a, int from, int to) {
  if (from == 0)
    if (Status s = enqueue_layout(c, a); !s) return s;
  for (int k = from; k < to; ++k)
    if (Status s = enqueue_op(c, a, a.ops[k]); !s) return s;
  return Status::ok();
}
Status enqueue(CudaContext& c, const backend::RunArgs& a) { return enqueue(c, a, 0, a.op_count); }

// How many ops of the segment a graph holds: those before its first copy to the host (a graph
// may not write pageable host memory), which run eagerly after the graph. A model whose pooled
// output goes on to a CPU op (MiniLM's L2 normalization) ends its segment with such a copy: the
// whole encoder is still replayed from the graph.
int graph_ops(const backend::RunArgs& a) {
  for (int k = 0; k < a.op_count; ++k) {
    const Op& op = a.graph->ops[static_cast<size_t>(a.ops[k])];
    if (op.kind == OpKind::kCopy && !copies_to_device(op)) return k;
  }
  return a.op_count;
}

Status run(void* cv, const backend::RunArgs& a) {
  CudaContext& c = ctx(cv);
  if (Status s = use_device(c); !s) return s;
  stage_inputs(c, a);
  if (Status s = cuda_status(cudaEventRecord(c.start, c.stream), "cudaEventRecord"); !s) return s;
  if (Status s = enqueue(c, a); !s) return s;
  c.timed = true;
  return cuda_status(cudaEventRecord(c.stop, c.stream), "cudaEventRecord");
}

GraphKey key_of(const backend::RunArgs& a) {
  GraphKey k;
  k.first_op = a.ops[0];
  k.op_count = a.op_count;
  k.batch = a.shape.batch;
  k.seq = a.shape.seq;
  k.packed_rows = a.packed ? bucket_rows(a) : -1;
  int bit = 0;
  for (int i = 0; i < a.op_count && bit < 32; ++i) {
    const Op& op = a.graph->ops[static_cast<size_t>(a.ops[i])];
    if (!copies_to_device(op)) continue;
    if (!ptr(a, op.in(0))) k.absent_inputs |= 1u << bit;
    ++bit;
  }
  return k;
}

// The graph of the segment's first graph_ops(a) ops, then the rest eagerly, between the events.
Status launch(CudaContext& c, const backend::RunArgs& a, cudaGraphExec_t exec) {
  if (Status s = cuda_status(cudaEventRecord(c.start, c.stream), "cudaEventRecord"); !s) return s;
  if (Status s = cuda_status(cudaGraphLaunch(exec, c.stream), "cudaGraphLaunch"); !s) return s;
  if (Status s = enqueue(c, a, graph_ops(a), a.op_count); !s) return s;
  c.timed = true;
  return cuda_status(cudaEventRecord(c.stop, c.stream), "cudaEventRecord");
}

Status replay(void* cv, const backend::RunArgs& a, bool* replayed) {
  CudaContext& c = ctx(cv);
  *replayed = false;
  if (!c.graphs) return Status::ok();
  if (Status s = use_device(c); !s) return s;
  cudaGraphExec_t exec = c.graphs_cache->find(key_of(a));
  if (!exec) return Status::ok();
  stage_inputs(c, a);
  *replayed = true;
  return launch(c, a, exec);
}

// Records the segment's ops up to its first copy to the host into a graph and runs it (and the
// rest eagerly); all eager when graphs are off or the segment starts with such a copy.
Status capture(void* cv, const backend::RunArgs& a) {
  CudaContext& c = ctx(cv);
  const int captured = graph_ops(a);
  if (!c.graphs || captured == 0) return run(cv, a);
  if (Status s = use_device(c); !s) return s;
  stage_inputs(c, a);
  if (Status s = cuda_status(cudaStreamBeginCapture(c.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture"); !s)
    return s;
  const Status enqueued = enqueue(c, a, 0, captured);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(c.stream, &graph);
  if (!enqueued) {
    if (graph) cudaGraphDestroy(graph);
    return enqueued;
  }
  if (Status s = cuda_status(ended, "cudaStreamEndCapture"); !s) return s;
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (Status s = cuda_status(instantiated, "cudaGraphInstantiate"); !s) return s;
  c.graphs_cache->insert(key_of(a), exec);
  return launch(c, a, exec);
}

Status synchronize(void* cv) {
  if (Status s = use_device(ctx(cv)); !s) return s;
  return cuda_status(cudaStreamSynchronize(ctx(cv).stream), "cudaStreamSynchronize");
}

double last_device_ms(void* cv) {
  CudaContext& c = ctx(cv);
  if (!c.timed) return -1.0;
  float ms = 0.0f;
  return cudaEventElapsedTime(&ms, c.start, c.stop) == cudaSuccess ? static_cast<double>(ms) : -1.0;
}

Status run_profiled(void* cv, const backend::RunArgs& a, double* ms) {
  CudaContext& c = ctx(cv);
  if (Status s = use_device(c); !s) return s;
  stage_inputs(c, a);
  if (Status s = enqueue_layout(c, a); !s) return s;
  for (int k = 0; k < a.op_count; ++k) {
    if (Status s = cuda_status(cudaEventRecord(c.start, c.stream), "cudaEventRecord"); !s) return s;
    if (Status s = enqueue_op(c, a, a.ops[k]); !s) return s;
    if (Status s = cuda_status(cudaEventRecord(c.stop, c.stream), "cudaEventRecord"); !s) return s;
    if (Status s = synchronize(cv); !s) return s;
    float t = 0.0f;
    cudaEventElapsedTime(&t, c.start, c.stop);
    ms[k] = t;
  }
  c.timed = false;
  return Status::ok();
}

// ---- Packed runs.

// Every op this backend runs but attention that writes its probabilities (per padded position);
// a window or a src mask already keeps attention off this backend (op_supported).
bool supports_packed(const void* cv, const plan::Graph& g, const Op& op) {
  if (!supports(cv, g, op)) return false;
  return op.kind != OpKind::kAttention || op.out(plan::slot::kAttentionProbs) < 0;
}

// A token-level output back to [batch, seq] rows: its real rows into the scratch, then the gather
// kernel from there (the device copy of the layout is the run's: its segments copied it, on this
// stream, before this). The stop event moves after it, so last_device_ms counts it.
Status expand_packed(void* cv, const backend::RunArgs& a, int buffer) {
  CudaContext& c = ctx(cv);
  if (Status s = use_device(c); !s) return s;
  if (!a.packed || !c.layout_device) return internal_error("cuda: expand_packed without a packed run");
  const size_t row_bytes = row_bytes_of(a, buffer);
  const size_t bytes = static_cast<size_t>(a.packed->tokens) * row_bytes;
  if (row_bytes % sizeof(uint32_t) != 0 || bytes > c.expand_scratch_bytes)
    return internal_error("cuda: output buffer " + std::to_string(buffer) + " cannot be expanded (" +
                          std::to_string(row_bytes) + "-byte rows, " + std::to_string(bytes) + " bytes for a scratch of " +
                          std::to_string(c.expand_scratch_bytes) + ")");
  void* data = ptr(a, buffer);
  if (Status s = cuda_status(cudaMemcpyAsync(c.expand_scratch, data, bytes, cudaMemcpyDeviceToDevice, c.stream),
                             "copy of packed rows to the scratch");
      !s)
    return s;
  ExpandRowsArgs k;
  k.batch = a.shape.batch;
  k.seq = a.shape.seq;
  k.row_words = row_bytes / sizeof(uint32_t);
  k.offsets = device_offsets(c);
  k.source = device_source(c);
  k.packed = c.expand_scratch;
  k.out = data;
  if (Status s = cuda_status(expand_packed_rows(k, c.stream), "packed rows expansion kernel"); !s) return s;
  return c.timed ? cuda_status(cudaEventRecord(c.stop, c.stream), "cudaEventRecord") : Status::ok();
}

// ---- Memory.

Status alloc_arena(void* cv, size_t bytes, void** arena) {
  CudaContext& c = ctx(cv);
  if (Status s = use_device(c); !s) return s;
  if (Status s = cuda_status(device_alloc(arena, bytes), "cudaMalloc (arena)"); !s) return s;
  c.arena_bytes += bytes;
  return Status::ok();
}

void free_arena(void* cv, void* arena) {
  (void)use_device(ctx(cv));
  device_free(arena);
}

Status copy_to_host(void* cv, void* dst, const void* src, size_t bytes) {
  if (Status s = use_device(ctx(cv)); !s) return s;
  return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx(cv).stream), "copy to the host");
}

Status copy_from_host(void* cv, void* dst, const void* src, size_t bytes) {
  if (Status s = use_device(ctx(cv)); !s) return s;
  return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx(cv).stream), "copy to the device");
}

// ---- Descriptions.

// The int8 path's kernels, as implementation() names them (fusions as prepare decided them; a run
// of one op at a time, as observed runs make, runs them unfused).
// The op's plan once prepare made it (null before, or without a context).
const OpPlan* plan_of(const void* cv, const plan::Graph& g, const Op& op) {
  const size_t i = static_cast<size_t>(&op - g.ops.data());
  return cv && i < ctx(cv).plans.size() ? &ctx(cv).plans[i] : nullptr;
}

std::string implementation_i8(const void* cv, const plan::Graph& g, const Op& op) {
  const size_t i = static_cast<size_t>(&op - g.ops.data());
  const OpPlan* plan = plan_of(cv, g, op);
  if (op.kind == OpKind::kQuantize) {
    const OpPlan* before = i > 0 ? plan_of(cv, g, g.ops[i - 1]) : nullptr;
    if (before && before->fused_quantize == static_cast<int>(i))
      return "in the previous op's kernel (fused)";
    return "quantize kernel (int8 q-128)";
  }
  const plan::LinearParams& p = op.p<plan::LinearParams>();
  const bool mma = cv && uses_int8_gemm_mma(ctx(cv), *p.weights);
  std::string s = mma ? "int8 GEMM kernel (tensor cores, mma.sync m16n8k32; 128x128, 128x64, 64x64 or 32x32 tiles by the "
                        "grid, option int8_tile) with the epilogue "
                        "in registers (zero point, scales"
                      : "cublasLt int8 TN (int32) + int8 epilogue kernel (zero point, scales";
  if (fuses_into_norm(g, static_cast<int>(i))) return s + "; bias+residual in the LayerNorm)";
  s += ", bias";
  if (p.activation == kernels::Activation::kGelu) s += ", gelu";
  if (p.activation == kernels::Activation::kRelu) s += ", relu";
  if (op.in(plan::slot::kLinearResidual) >= 0) s += ", residual";
  if (plan && plan->fused_quantize >= 0) s += ", + the next linear's quantize";
  return s + ")";
}

// The tensor-core attention's unsplit layout (large grids): blocks resident on a multiprocessor
// at once, as the GPU reports them for the kernel the session's options pick (attention_keys,
// attention_occupancy, attention_prefetch), and so how many blocks run in one wave.
std::string attention_occupancy(const CudaContext& c, int head_dim, bool bf16) {
  AttentionArgs k;
  k.head_dim = head_dim;
  k.seq = kAttentionWholeKeysMaxSeq;
  k.type = bf16 ? Elem::kF32 : Elem::kF16;
  k.prefetch_keys = c.attention_prefetch;
  k.six_blocks = c.attention_six_blocks;
  k.whole_keys = c.attention_whole_keys;
  int blocks = 0;
  if (!use_device(c) || attention_mma_resident_blocks(k, &blocks) != cudaSuccess) return "";
  const bool whole = c.attention_whole_keys && !bf16;
  return "; large grids: " + std::to_string(blocks) + " blocks a multiprocessor (" + std::to_string(blocks * c.sms) +
         " at once)" +
         (whole ? " with every key in shared memory, for sequences of up to " + std::to_string(kAttentionWholeKeysMaxSeq) +
                      " tokens (longer ones: 64-key tiles)"
                : "");
}

std::string implementation(const void* cv, const plan::Graph& g, const Op& op) {
  const bool int8 = op.kind == OpKind::kQuantize ||
                    (op.kind == OpKind::kLinear && op.p<plan::LinearParams>().weights->dtype == DType::kI8);
  if (int8) return implementation_i8(cv, g, op);
  switch (op.kind) {
    case OpKind::kLinear: {
      const plan::LinearParams& p = op.p<plan::LinearParams>();
      const OpPlan* mma_plan = plan_of(cv, g, op);
      // fp16_gemm=auto: every kernel below up to kF16MmaAutoRows rows; norm: the same, and above
      // them the fused linear + LayerNorm kernel for a linear it fuses (runs_f16_mma).
      const bool norm_any_rows = ctx(cv).fp16_gemm == F16Gemm::kNorm && mma_plan && mma_plan->gemm_norm;
      const std::string rows_note =
          ctx(cv).fp16_gemm == F16Gemm::kAuto || ctx(cv).fp16_gemm == F16Gemm::kNorm
              ? " up to " + std::to_string(kF16MmaAutoRows) + " rows, " +
                    (norm_any_rows ? "the fp16 GEMM + LayerNorm kernel above" : "cuBLASLt above")
              : "";
      const size_t at = static_cast<size_t>(&op - g.ops.data());
      if (mma_plan && mma_plan->qkv_attention)
        return "fp16 QKV projection + attention kernel (tensor cores, mma.sync m16n8k16; a sequence's 16-row tiles over a "
               "thread-block cluster) for padded runs of up to " +
               std::to_string(kQkvAttentionMaxSeq) + " tokens" + rows_note + "; else fp16 GEMM kernel";
      if (mma_plan && mma_plan->layer_tail)
        return "fp16 output projection + LayerNorm + feed-forward block kernel (tensor cores, mma.sync m16n8k16; this "
               "linear, its bias, residual and LayerNorm, then the feed-forward block after it with its LayerNorm, in one "
               "kernel over a thread-block cluster)" +
               rows_note + "; else the kernels below";
      if (const OpPlan* two_before = at > 1 ? plan_of(cv, g, g.ops[at - 2]) : nullptr;
          two_before && two_before->layer_tail && mma_plan && mma_plan->ffn_norm)
        return "in the output projection's layer-tail kernel" + rows_note +
               "; else the fp16 feed-forward block kernel (this up projection, the down projection and its LayerNorm)";
      if (mma_plan && mma_plan->ffn_norm)
        return "fp16 feed-forward block kernel (tensor cores, mma.sync m16n8k16; this up projection, its activation, the "
               "down projection, its bias and residual and the LayerNorm in one kernel, over a thread-block cluster)" +
               rows_note;
      if (const OpPlan* before = at > 0 ? plan_of(cv, g, g.ops[at - 1]) : nullptr; before && before->ffn_norm) {
        if (const OpPlan* tail = at > 2 ? plan_of(cv, g, g.ops[at - 3]) : nullptr; tail && tail->layer_tail)
          return "in the output projection's layer-tail kernel" + rows_note + "; else the up projection's feed-forward block kernel";
        return "in the up projection's feed-forward block kernel" + rows_note;
      }
      if (mma_plan && mma_plan->gemm_norm)
        return "fp16 GEMM + LayerNorm kernel (tensor cores, mma.sync m16n8k16; the row over a thread-block cluster of " +
               std::to_string((p.weights->N + gemm_f16_layer_norm_columns(p.weights->N, mma_plan->cluster4 ? 4 : 8) - 1) /
                              gemm_f16_layer_norm_columns(p.weights->N, mma_plan->cluster4 ? 4 : 8)) +
               (mma_plan->cluster16 ? " or, where the GPU runs all the rows' clusters at once (" +
                                          std::to_string(mma_plan->active16) + " of 16), " +
                                          std::to_string((p.weights->N + gemm_f16_layer_norm_columns(p.weights->N, 16) - 1) /
                                                         gemm_f16_layer_norm_columns(p.weights->N, 16))
                                    : std::string()) +
               " blocks; bias, residual and the next op's LayerNorm" +
               (mma_plan->rows128 ? std::string("; 128 rows a block") + (mma_plan->cluster16 ? " (in clusters of 16: 64 or 16)" : "") :
                mma_plan->rows64 ? std::string(ctx(cv).norm_rows == 64 ? "; 64 rows a block"
                                                                        : "; 64 rows a block where that still gives every "
                                                                          "multiprocessor a block, else 16")
                                 : std::string("; 16 rows a block")) +
               ")" + (norm_any_rows ? "" : rows_note);
      if (mma_plan && mma_plan->f16_mma)
        return std::string("fp16 GEMM kernel (tensor cores, mma.sync m16n8k16; epilogue: ") +
               (mma_plan->fused_into_norm ? "none, bias+residual in the LayerNorm"
                                          : std::string("bias") + (p.activation == kernels::Activation::kGelu   ? ", exact gelu"
                                                                   : p.activation == kernels::Activation::kRelu ? ", relu"
                                                                                                                : "") +
                                                (op.in(plan::slot::kLinearResidual) >= 0 ? ", residual" : "")) +
               ")" + rows_note;
      std::string s = std::string("cublasLt ") + dtype_name(p.weights->dtype) + " TN";
      if (fuses_into_norm(g, static_cast<int>(&op - g.ops.data()))) return s + " (bias+residual in the LayerNorm)";
      s += "+bias";
      if (p.activation == kernels::Activation::kGelu) {
        const OpPlan* plan = plan_of(cv, g, op);
        s += plan && plan->gelu_in_gemm ? "+gelu (cuBLASLt's)" : ", gelu kernel";
      }
      if (p.activation == kernels::Activation::kRelu) s += ", relu kernel";
      return s;
    }
    case OpKind::kLayerNorm: {
      const size_t i = static_cast<size_t>(&op - g.ops.data());
      const OpPlan* linear = i > 0 ? plan_of(cv, g, g.ops[i - 1]) : nullptr;
      const OpPlan* tail = i > 3 ? plan_of(cv, g, g.ops[i - 4]) : nullptr;  // (the second LayerNorm of a layer tail)
      const bool norm_any_rows = ctx(cv).fp16_gemm == F16Gemm::kNorm && linear && linear->gemm_norm;
      const std::string above =
          ctx(cv).fp16_gemm == F16Gemm::kAuto || ctx(cv).fp16_gemm == F16Gemm::kNorm
              ? " up to " + std::to_string(kF16MmaAutoRows) + " rows; " +
                    (norm_any_rows ? "in the linear's fp16 GEMM + LayerNorm kernel above" : "residual+bias+layer_norm kernel above")
              : "";
      if ((linear && linear->layer_tail) || (tail && tail->layer_tail && linear && linear->gemm_norm))
        return "in the output projection's layer-tail kernel" + above;
      if (linear && linear->gemm_norm)
        return "in the linear's fp16 GEMM + LayerNorm kernel" + (norm_any_rows ? std::string() : above);
      std::string s = i > 0 && fuses_into_norm(g, static_cast<int>(i) - 1) ? "residual+bias+layer_norm kernel" : "layer_norm kernel";
      if (const OpPlan* p = plan_of(cv, g, op); p && p->fused_quantize >= 0) s += " + the next linear's quantize";
      return s;
    }
    case OpKind::kEmbed: return op.p<plan::EmbedParams>().norm ? "embed+layer_norm kernel" : "embed kernel";
    case OpKind::kAttention: {
      const size_t at = static_cast<size_t>(&op - g.ops.data());
      const OpPlan* qkv = at > 0 ? plan_of(cv, g, g.ops[at - 1]) : nullptr;
      const std::string fused = qkv && qkv->qkv_attention ? "in the QKV projection's kernel for padded runs of up to " +
                                                                std::to_string(kQkvAttentionMaxSeq) + " tokens; else "
                                                          : "";
      if (ctx(cv).attention == AttentionKernel::kInt8)  // every other attention op is refused at prepare
        return "attention kernel (int8 tensor cores, mma.sync s8/u8), head_dim " + std::to_string(op.p<plan::AttentionParams>().head_dim);
      const bool mma = uses_attention_mma(ctx(cv), g, op);
      return fused +
             std::string(!mma                                  ? "attention kernel (SIMT)"
                         : attention_mma_bf16(ctx(cv), g, op) ? "attention kernel (tensor cores, mma.sync bf16)"
                                                              : "attention kernel (tensor cores, mma.sync)") +
             ", head_dim " + std::to_string(op.p<plan::AttentionParams>().head_dim) +
             (mma ? attention_occupancy(ctx(cv), op.p<plan::AttentionParams>().head_dim, attention_mma_bf16(ctx(cv), g, op))
                  : "");
    }
    case OpKind::kCopy: return copies_to_device(op) ? "pinned staging + cudaMemcpyAsync" : "cudaMemcpyAsync";
    case OpKind::kPoolMean: return "mean pooling kernel";
    case OpKind::kPoolFirst: return "first-token kernel";
    case OpKind::kTanh: return "tanh kernel";
    case OpKind::kQuantize:  // implementation_i8
    case OpKind::kPoolMax:
    case OpKind::kL2Normalize:
    case OpKind::kScores:
      break;
  }
  return "";
}

// Where a session runs int8 linears on the tensor-core GEMM: each tile's blocks resident on a
// multiprocessor at once, as the GPU reports them (with the grid, how many waves a shape takes).
std::string int8_tile_occupancy(const CudaContext& c) {
  if (std::none_of(c.plans.begin(), c.plans.end(), [](const OpPlan& p) { return p.int8 && p.gemm_mma; }) || !use_device(c))
    return "";
  std::string s = ", int8 GEMM blocks a multiprocessor:";
  for (auto [tile, name] : {std::pair{GemmI8Tile::k128, "128x128"}, std::pair{GemmI8Tile::k128x64, "128x64"},
                            std::pair{GemmI8Tile::k64, "64x64"}, std::pair{GemmI8Tile::k32, "32x32"}}) {
    int blocks = 0;
    s += std::string(" ") + name + " " + (gemm_i8_mma_resident_blocks(tile, &blocks) == cudaSuccess ? std::to_string(blocks) : "?");
  }
  return s;
}

std::string summary(const void* cv) {
  const CudaContext& c = ctx(cv);
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(c.device_memory) / (1024.0 * 1024.0 * 1024.0));
  return c.device_name + " (device " + std::to_string(c.device) + ", sm_" + std::to_string(c.cc_major) +
         std::to_string(c.cc_minor) + ", " + std::to_string(c.sms) + " SMs, " + memory + "), CUDA runtime " +
         std::to_string(runtime) + " / driver " + std::to_string(driver) + ", " + (c.lt ? c.lt->path : std::string("no cuBLASLt")) +
         ", graphs " + (c.graphs ? "on" : "off") + (c.tf32 ? ", tf32 on" : "") + ", weights on the device " +
         std::to_string(c.weights_bytes) + " bytes" +
         (c.mapped_weights ? ", read in place from the mapped model " + std::to_string(c.mapped_bytes) + " bytes" : "") +
         ", attention " +
         (c.attention == AttentionKernel::kMma    ? "mma"
          : c.attention == AttentionKernel::kSimt ? "simt"
          : c.attention == AttentionKernel::kInt8 ? "int8"
                                                  : "auto") +
         ", int8_linears " +
         (c.int8_linears == Int8Linears::kF16 ? "f16" : c.int8_linears == Int8Linears::kInt8 ? "int8" : "auto") +
         ", int8_gemm " + (c.int8_gemm == Int8Gemm::kMma ? "mma" : c.int8_gemm == Int8Gemm::kCublasLt ? "cublaslt" : "auto") +
         ", fp16_gemm " +
         (c.fp16_gemm == F16Gemm::kMma    ? "mma"
          : c.fp16_gemm == F16Gemm::kAuto ? "auto"
          : c.fp16_gemm == F16Gemm::kNorm ? "norm"
                                          : "cublaslt") +
         ", linear_norm " +
         (c.linear_norm == LinearNorm::kFfn     ? "ffn"
          : c.linear_norm == LinearNorm::kFused ? "fused"
          : c.linear_norm == LinearNorm::kLayer ? "layer"
                                                : "separate") +
         ", qkv_attention " + (c.qkv_attention_fused ? "fused" : "separate") +
         (c.attention_prefetch ? ", attention_prefetch on" : "") + (c.attention_six_blocks ? ", attention_occupancy 6" : "") +
         (c.attention_whole_keys ? ", attention_keys whole" : "") +
         int8_tile_occupancy(c) + ", norm_cluster " +
         (c.norm_cluster == 0 ? std::string("auto") : std::to_string(c.norm_cluster)) + ", norm_rows " +
         (c.norm_rows == 0 ? std::string("auto") : std::to_string(c.norm_rows)) +
         (c.dependent_launch ? ", pdl on" : "");
}

const char* const kOptionKeys[] = {"device", "graphs",          "tf32", "weights", "attention", "int8_gemm",
                                   "rows",   "attention_split", "gelu", "pdl",      "int8_tile", "fp16_gemm", "linear_norm", "qkv_attention", "norm_cluster",
                                   "norm_rows", "int8_linears", "attention_prefetch", "attention_occupancy", "attention_keys", nullptr};

// What tuning tries (backend.h, TuningChoice), in this order: the int8 model's arithmetic first
// (it decides which kernels the rest choose among), then the fp16 GEMM (its fused kernels' options
// follow it), the attention's kernels and builds, the row kernels and launches. Each list starts
// with the default. The options above that only compare (graphs, tf32) or place (device, weights)
// are not tuned: they are the user's to choose.
const char* const kTuneInt8Linears[] = {"auto", "int8", "f16", nullptr};
const char* const kTuneFp16Gemm[] = {"cublaslt", "auto", "norm", "mma", nullptr};
const char* const kTuneLinearNorm[] = {"ffn", "layer", "fused", "separate", nullptr};
const char* const kTuneQkvAttention[] = {"fused", "separate", nullptr};
const char* const kTuneNormCluster[] = {"auto", "8", "16", "4", nullptr};
const char* const kTuneNormRows[] = {"auto", "16", "64", "128", nullptr};
const char* const kTuneAttention[] = {"auto", "mma", "simt", "int8", nullptr};
const char* const kTuneAttentionSplit[] = {"auto", "on", "off", nullptr};
const char* const kTuneAttentionKeys[] = {"auto", "whole", nullptr};
const char* const kTuneAttentionPrefetch[] = {"auto", "on", nullptr};
const char* const kTuneAttentionOccupancy[] = {"auto", "6", nullptr};
const char* const kTuneGelu[] = {"cublaslt", "kernel", nullptr};
const char* const kTunePdl[] = {"auto", "on", "off", nullptr};
const char* const kTuneRows[] = {"auto", "warp", "block", nullptr};
const char* const kTuneInt8Gemm[] = {"auto", "mma", "cublaslt", nullptr};
const char* const kTuneInt8Tile[] = {"auto", "32", "64", "128x64", "128", nullptr};
// The options that change something only where a kernel runs are tried under their parent's
// values that run it (and with each of them: backend.h): the fused kernels' under encrt's fp16
// GEMM, the tensor-core attention's builds under it, the int8 GEMM's under int8 arithmetic.
const char* const kWhereF16Mma[] = {"auto", "norm", "mma", nullptr};
const char* const kWhereAttentionMma[] = {"auto", "mma", nullptr};
const char* const kWhereInt8[] = {"int8", nullptr};
const backend::TuningChoice kTuning[] = {{"int8_linears", kTuneInt8Linears},
                                         {"fp16_gemm", kTuneFp16Gemm},
                                         {"linear_norm", kTuneLinearNorm, "fp16_gemm", kWhereF16Mma},
                                         {"qkv_attention", kTuneQkvAttention, "fp16_gemm", kWhereF16Mma},
                                         {"norm_cluster", kTuneNormCluster, "fp16_gemm", kWhereF16Mma},
                                         {"norm_rows", kTuneNormRows, "fp16_gemm", kWhereF16Mma},
                                         {"attention", kTuneAttention},
                                         {"attention_split", kTuneAttentionSplit, "attention", kWhereAttentionMma},
                                         {"attention_keys", kTuneAttentionKeys, "attention", kWhereAttentionMma},
                                         {"attention_prefetch", kTuneAttentionPrefetch, "attention", kWhereAttentionMma},
                                         {"attention_occupancy", kTuneAttentionOccupancy, "attention", kWhereAttentionMma},
                                         {"gelu", kTuneGelu},
                                         {"pdl", kTunePdl},
                                         {"rows", kTuneRows},
                                         {"int8_gemm", kTuneInt8Gemm, "int8_linears", kWhereInt8},
                                         {"int8_tile", kTuneInt8Tile, "int8_linears", kWhereInt8},
                                         {nullptr, nullptr}};

}  // namespace

const backend::BackendInterface kCudaBackend = {
    /*name=*/"cuda",
    /*memory=*/backend::MemoryKind::kDevice,
    /*arena_alignment=*/kAlign,
    /*read_overrun=*/0,
    /*option_keys=*/kOptionKeys,
    create,
    destroy,
    supports,
    scratch_bytes,
    prepare,
    run,
    implementation,
    summary,
    available,
    alloc_arena,
    free_arena,
    copy_to_host,
    copy_from_host,
    synchronize,
    replay,
    capture,
    run_profiled,
    storage_dtype,
    last_device_ms,
    supports_packed,
    expand_packed,
    dequantizes_int8_linears,
    /*tuning=*/kTuning,
};

}  // namespace encrt::cuda
