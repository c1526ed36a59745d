#include "backends/cpu/cpu_backend.h"

#include <memory>
#include <sstream>

#include "backends/cpu/cpu_executor.h"
#include "backends/cpu/thread_pool.h"
#include "kernels/kernel_lists.h"
#include "kernels/kernel_table.h"

namespace encrt::cpu {

namespace {

struct CpuContext {
  kernels::KernelTable kernels;
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;  // started by prepare()
  // prepare() found an int8 weight past gemm_u8s8's bound (-128 for the signed route): every
  // layer takes the table's kernel for any weights.
  bool weights_past_bound = false;
  int narrow_linears = 0, int8_linears = 0;  // int8 linears with 7-bit weights (run by gemm_u8s7), of all
  // Option int8_linears=f16: an int8 model's linears run as fp16 ones (model/dequantized_linears.h:
  // the file's weights without quantized activations; the same arithmetic the cuda backend takes
  // at small batches, so the two can be compared).
  bool dequantize_int8 = false;
};

const CpuContext& ctx(const void* c) { return *static_cast<const CpuContext*>(c); }

std::string option(const backend::Options& options, const char* key) {
  const auto it = options.find(key);
  return it == options.end() ? std::string() : it->second;
}

// The kernel table for the options: `isa` a level (absent or auto: the best for this CPU, or the one
// ENCRT_ISA forces), with this CPU's preferences (isa.h) unless `int8_route` overrides the AVX2
// int8 GEMM's: widened (vpmaddwd) or signed (vpsignb + vpmaddubsw), for every int8 linear; auto
// (the default) also runs linears with 7-bit weights on their own kernel (gemm_u8s7).
Status select_kernels(const backend::Options& options, kernels::KernelTable* table) {
  kernels::IsaFeatures features = kernels::default_kernel_table().features;
  if (const std::string isa = option(options, "isa"); !isa.empty() && isa != "auto") {
    const kernels::IsaLevel* level = kernels::find_isa_level(isa);
    if (!level)
      return invalid_argument("unknown ISA level '" + isa + "' for option isa of backend cpu (" +
                              kernels::isa_level_names() + ")");
    if (!kernels::isa_supported(level->features))
      return unsupported("this CPU does not support ISA level '" + isa + "' (best: " +
                         kernels::best_isa_level().name + ")");
    features = level->features | (kernels::cpu_isa_features() & kernels::kIsaPreferences);
  }
  const std::string route = option(options, "int8_route");
  if (route == "widened")
    features &= ~kernels::kPreferSignedMadd;
  else if (route == "signed")
    features |= kernels::kPreferSignedMadd;
  else if (!route.empty() && route != "auto")
    return invalid_argument("option int8_route of backend cpu is auto, widened or signed, not '" + route + "'");
  *table = kernels::make_kernel_table(features);
  if (route == "widened" || route == "signed") table->gemm_u8s7 = nullptr, table->gemm_u8s7_name = "";
  return Status::ok();
}

Status create(const backend::Options& options, int threads, void** out) {
  auto c = std::make_unique<CpuContext>();
  if (Status s = select_kernels(options, &c->kernels); !s) return s;
  c->threads = threads;
  const std::string linears = option(options, "int8_linears");
  if (!linears.empty() && linears != "int8" && linears != "f16")
    return invalid_argument("option int8_linears of backend cpu is int8 or f16, not '" + linears + "'");
  c->dequantize_int8 = linears == "f16";
  *out = c.release();
  return Status::ok();
}

// Whether an int8 linear layer's weights reach past `bound` (the loader found each layer's largest
// |w|): -128 for kernels that need symmetric weights. The converter never writes -128; a file from
// elsewhere may.
bool past_bound(const detail::LinearView& w, int bound) { return w.dtype == DType::kI8 && w.max_abs_weight > bound; }

void destroy(void* c) { delete static_cast<CpuContext*>(c); }

bool supports(const void*, const plan::Graph&, const plan::Op& op) { return op.kind != plan::OpKind::kCopy; }

// Every op runs packed but attention that writes its probabilities ([batch, heads, seq, seq]
// per padded position) or has a window (|i - j| counts padded positions between real tokens).
bool supports_packed(const void*, const plan::Graph&, const plan::Op& op) {
  if (op.kind != plan::OpKind::kAttention) return op.kind != plan::OpKind::kCopy;
  return op.p<plan::AttentionParams>().window == 0 && op.out(plan::slot::kAttentionProbs) < 0;
}

size_t scratch_bytes(const void* c, const plan::Graph&, const plan::Op& op, backend::Shape max) {
  const size_t threads = static_cast<size_t>(ctx(c).threads);
  if (op.kind == plan::OpKind::kLinear) return linear_scratch_per_thread(ctx(c).kernels, op.p<plan::LinearParams>()) * threads;
  if (op.kind != plan::OpKind::kAttention) return 0;
  return attention_scratch_per_thread(ctx(c).kernels, op.p<plan::AttentionParams>(), max.seq) * threads;
}

// Weights are read where the file maps them: nothing is copied or repacked. When the int8 GEMM
// needs symmetric weights and a layer has -128, every layer takes the table's kernel for any
// weights (exact as well; the scratch was planned for both).
Status prepare(void* c, const backend::PrepareArgs& args, backend::HeldBytes* held) {
  CpuContext& cc = *static_cast<CpuContext*>(c);
  cc.pool = std::make_unique<ThreadPool>(cc.threads);
  if (cc.kernels.gemm_u8s8_weight_bound < kernels::kAnyWeights) {
    for (int i = 0; i < args.op_count && !cc.weights_past_bound; ++i) {
      const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
      cc.weights_past_bound = op.kind == plan::OpKind::kLinear &&
                              past_bound(*op.p<plan::LinearParams>().weights, cc.kernels.gemm_u8s8_weight_bound);
    }
    if (cc.weights_past_bound) {
      cc.kernels.gemm_u8s8 = cc.kernels.gemm_u8s8_any_weights;
      cc.kernels.gemm_u8s8_name = cc.kernels.gemm_u8s8_any_weights_name;
      cc.kernels.gemm_u8s8_workspace = cc.kernels.gemm_u8s8_any_weights_workspace;
      cc.kernels.gemm_u8s8_min_task_rows = cc.kernels.gemm_u8s8_any_weights_min_task_rows;
      cc.kernels.gemm_u8s8_min_rows_per_thread = cc.kernels.gemm_u8s8_any_weights_min_rows_per_thread;
      cc.kernels.gemm_u8s8_weight_bound = kernels::kAnyWeights;
    }
  }
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    if (op.kind != plan::OpKind::kLinear || op.p<plan::LinearParams>().weights->dtype != DType::kI8) continue;
    ++cc.int8_linears;
    cc.narrow_linears += runs_narrow(cc.kernels, *op.p<plan::LinearParams>().weights);
  }
  auto table_bytes = [](const detail::TableView* t) {
    return t ? static_cast<size_t>(t->rows) * static_cast<size_t>(t->width) * dtype_size(t->dtype) : 0;
  };
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    if (op.kind == plan::OpKind::kLinear) {
      const detail::LinearView& w = *op.p<plan::LinearParams>().weights;
      // An int8 linear as fp16 (option int8_linears): its panels were made from the file's weights.
      (w.dequantized_from ? held->weights_packed : held->weights_in_place) += w.packed_bytes;
    }
    if (op.kind == plan::OpKind::kEmbed) {
      const plan::EmbedParams& e = op.p<plan::EmbedParams>();
      held->weights_in_place += table_bytes(e.word) + table_bytes(e.position) + table_bytes(e.token_type);
    }
  }
  return Status::ok();
}

Status run(void* c, const backend::RunArgs& args) {
  CpuContext& cc = *static_cast<CpuContext*>(c);
  for (int i = 0; i < args.op_count; ++i) {
    // A LayerNorm and the quantization of its output for the next int8 linear: one pass.
    if (i + 1 < args.op_count && quantizes_norm_output(*args.graph, args.ops[i], args.ops[i + 1])) {
      execute_norm_then_quantize(cc.kernels, *cc.pool, args, args.ops[i], args.ops[i + 1]);
      ++i;
      continue;
    }
    execute_op(cc.kernels, *cc.pool, args, args.ops[i]);
  }
  return Status::ok();
}

std::string implementation(const void* c, const plan::Graph&, const plan::Op& op) {
  const kernels::KernelTable& t = ctx(c).kernels;
  switch (op.kind) {
    case plan::OpKind::kLinear:
      switch (op.p<plan::LinearParams>().weights->dtype) {
        case DType::kI8: return runs_narrow(t, *op.p<plan::LinearParams>().weights) ? t.gemm_u8s7_name : t.gemm_u8s8_name;
        case DType::kF16: return t.gemm_f16_name;
        default: return t.gemm_f32_name;
      }
    case plan::OpKind::kAttention:
      return op.p<plan::AttentionParams>().int8 ? t.attention_i8_name : t.attention_f32_name;
    case plan::OpKind::kEmbed:
      return op.p<plan::EmbedParams>().norm ? std::string("gather+") + t.layer_norm_name : std::string("gather");
    case plan::OpKind::kLayerNorm:
      return t.layer_norm_name;
    case plan::OpKind::kQuantize:
      return t.quantize_rows_u8_name;
    default:
      return "loop";
  }
}

std::string summary(const void* c) {
  const kernels::KernelTable& t = ctx(c).kernels;
  std::ostringstream s;
  s << "isa=" << kernels::isa_features_name(t.features) << " gemm_f32=" << t.gemm_f32_name << " gemm_f16=" << t.gemm_f16_name
    << " gemm_u8s8=" << t.gemm_u8s8_name << (ctx(c).weights_past_bound ? " (int8 weights hold -128)" : "");
  if (ctx(c).narrow_linears > 0)
    s << " gemm_u8s7=" << t.gemm_u8s7_name << " (" << ctx(c).narrow_linears << " of " << ctx(c).int8_linears
      << " int8 linears: 7-bit weights)";
  s << " attention=" << t.attention_f32_name << " attention_i8=" << t.attention_i8_name << " threads=" << ctx(c).threads;
  return s.str();
}

bool dequantizes_int8_linears(const void* c, backend::Shape) { return ctx(c).dequantize_int8; }

const char* const kOptionKeys[] = {"isa", "int8_route", "int8_linears", nullptr};

// What tuning tries (backend.h, TuningChoice): the kernel levels above the portable ones (this
// CPU's best is auto's; a lower one can win where the wider registers lower the clock, or fp16
// arithmetic loses to fp32; a level this CPU lacks is refused: this build's architecture's levels
// only), the AVX2 int8 route, and an int8 model's linears in fp16.
#if defined(__aarch64__)
const char* const kIsaValues[] = {"auto", "neon", "neondot", "neonfp16", "neoni8mm", nullptr};
#elif defined(__x86_64__)
const char* const kIsaValues[] = {"auto", "avx2", "avx2vnni", "avx512", "avx512vnni", "avx512fp16", "amx", nullptr};
#else
const char* const kIsaValues[] = {"auto", nullptr};
#endif
const char* const kInt8RouteValues[] = {"auto", "widened", "signed", nullptr};
const char* const kInt8LinearsValues[] = {"int8", "f16", nullptr};
const backend::TuningChoice kTuning[] = {
    {"isa", kIsaValues}, {"int8_route", kInt8RouteValues}, {"int8_linears", kInt8LinearsValues}, {nullptr, nullptr}};

}  // namespace

const backend::BackendInterface kCpuBackend = {
    /*name=*/"cpu",
    /*memory=*/backend::MemoryKind::kHost,
    /*arena_alignment=*/64,
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
    /*available=*/nullptr,
    /*alloc_arena=*/nullptr,
    /*free_arena=*/nullptr,
    /*copy_to_host=*/nullptr,
    /*copy_from_host=*/nullptr,
    /*synchronize=*/nullptr,
    /*replay=*/nullptr,
    /*capture=*/nullptr,
    /*run_profiled=*/nullptr,
    /*storage_dtype=*/nullptr,
    /*last_device_ms=*/nullptr,
    supports_packed,
    /*expand_packed=*/nullptr,  // its memory is the host's: the core expands
    dequantizes_int8_linears,
    /*tuning=*/kTuning,
};

}  // namespace encrt::cpu
