#include "backends/cpu/cpu_backend.h"

#include <memory>
#include <sstream>

#include "backends/cpu/cpu_executor.h"
#include "backends/cpu/thread_pool.h"
#include "kernels/kernel_table.h"

namespace encrt::cpu {

namespace {

struct CpuContext {
  const kernels::KernelTable* kernels = nullptr;
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;  // started by prepare()
};

const CpuContext& ctx(const void* c) { return *static_cast<const CpuContext*>(c); }

// The kernel table for the `isa` option: absent = the best for this CPU (ENCRT_ISA may force a
// level it supports).
Status select_kernels(const backend::Options& options, const kernels::KernelTable** table) {
  const auto it = options.find("isa");
  if (it == options.end() || it->second.empty()) {
    *table = &kernels::default_kernel_table();
    return Status::ok();
  }
  const kernels::IsaLevel* level = kernels::find_isa_level(it->second);
  if (!level)
    return invalid_argument("unknown ISA level '" + it->second + "' for option isa of backend cpu (" +
                            kernels::isa_level_names() + ")");
  if (!kernels::isa_supported(level->features))
    return unsupported("this CPU does not support ISA level '" + it->second + "' (best: " +
                       kernels::best_isa_level().name + ")");
  *table = kernels::preset_kernel_table(*level);
  return Status::ok();
}

Status create(const backend::Options& options, int threads, void** out) {
  auto c = std::make_unique<CpuContext>();
  if (Status s = select_kernels(options, &c->kernels); !s) return s;
  c->threads = threads;
  *out = c.release();
  return Status::ok();
}

void destroy(void* c) { delete static_cast<CpuContext*>(c); }

bool supports(const void*, const plan::Graph&, const plan::Op& op) { return op.kind != plan::OpKind::kCopy; }

size_t scratch_bytes(const void* c, const plan::Graph&, const plan::Op& op, backend::Shape max) {
  if (op.kind != plan::OpKind::kAttention) return 0;
  return attention_scratch_per_thread(*ctx(c).kernels, op.p<plan::AttentionParams>(), max.seq) *
         static_cast<size_t>(ctx(c).threads);
}

// Weights are read where the file maps them: nothing is copied or repacked.
Status prepare(void* c, const backend::PrepareArgs& args, backend::HeldBytes* held) {
  static_cast<CpuContext*>(c)->pool = std::make_unique<ThreadPool>(ctx(c).threads);
  auto table_bytes = [](const detail::TableView* t) {
    return t ? static_cast<size_t>(t->rows) * static_cast<size_t>(t->width) * dtype_size(t->dtype) : 0;
  };
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    if (op.kind == plan::OpKind::kLinear) held->weights_in_place += op.p<plan::LinearParams>().weights->packed_bytes;
    if (op.kind == plan::OpKind::kEmbed) {
      const plan::EmbedParams& e = op.p<plan::EmbedParams>();
      held->weights_in_place += table_bytes(e.word) + table_bytes(e.position) + table_bytes(e.token_type);
    }
  }
  return Status::ok();
}

Status run(void* c, const backend::RunArgs& args) {
  CpuContext& cc = *static_cast<CpuContext*>(c);
  for (int i = 0; i < args.op_count; ++i) execute_op(*cc.kernels, *cc.pool, args, args.ops[i]);
  return Status::ok();
}

std::string implementation(const void* c, const plan::Graph&, const plan::Op& op) {
  const kernels::KernelTable& t = *ctx(c).kernels;
  switch (op.kind) {
    case plan::OpKind::kLinear:
      switch (op.p<plan::LinearParams>().weights->dtype) {
        case DType::kI8: return t.gemm_u8s8_name;
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
  const kernels::KernelTable& t = *ctx(c).kernels;
  std::ostringstream s;
  s << "isa=" << kernels::isa_features_name(t.features) << " gemm_f32=" << t.gemm_f32_name << " gemm_f16=" << t.gemm_f16_name
    << " gemm_u8s8=" << t.gemm_u8s8_name << " attention=" << t.attention_f32_name << " attention_i8=" << t.attention_i8_name
    << " threads=" << ctx(c).threads;
  return s.str();
}

const char* const kOptionKeys[] = {"isa", nullptr};

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
};

}  // namespace encrt::cpu
