#include <cstdlib>
#include <limits>
#include <sstream>

#include "encrt/encrt.hpp"
#include "session/session_impl.h"

namespace encrt {

namespace {

constexpr int kMaxThreads = 256;

Status check_options(const ModelConfig& c, const SessionOptions& o, const kernels::KernelTable** table) {
  if (o.max_batch < 1) return invalid_argument("max_batch must be >= 1 (got " + std::to_string(o.max_batch) + ")");
  if (o.max_seq < 1) return invalid_argument("max_seq must be >= 1 (got " + std::to_string(o.max_seq) + ")");
  if (o.max_seq > c.max_seq_len)
    return invalid_argument("max_seq " + std::to_string(o.max_seq) + " exceeds the model's maximum sequence length " +
                            std::to_string(c.max_seq_len));
  if (o.threads < 1 || o.threads > kMaxThreads)
    return invalid_argument("threads must be in 1.." + std::to_string(kMaxThreads) + " (got " +
                            std::to_string(o.threads) + ")");
  if (o.attention_layer < -1 || o.attention_layer >= c.num_layers)
    return invalid_argument("attention_layer " + std::to_string(o.attention_layer) + " is not a layer of this model (0.." +
                            std::to_string(c.num_layers - 1) + ", or -1 for none)");
  // Token rows and the attention-probabilities buffer must stay far from size_t overflow.
  const double rows = static_cast<double>(o.max_batch) * o.max_seq;
  if (rows * (3.0 * c.hidden_size + c.ffn_size) * 4.0 > 1e12 ||
      (o.attention_layer >= 0 && rows * o.max_seq * c.num_heads * 4.0 > 1e12))
    return invalid_argument("max_batch x max_seq is too large to plan an arena for");
  if (o.arena && reinterpret_cast<uintptr_t>(o.arena) % plan::kArenaAlignment != 0)
    return invalid_argument("the caller's arena must be 64-byte aligned");
  if (o.isa.empty()) {
    *table = &kernels::default_kernel_table();
  } else {
    const kernels::IsaLevel* level = kernels::find_isa_level(o.isa);
    if (!level) return invalid_argument("unknown ISA level '" + o.isa + "' (" + kernels::isa_level_names() + ")");
    if (!kernels::isa_supported(level->features))
      return unsupported(std::string("this CPU does not support ISA level '") + o.isa + "' (best: " +
                         kernels::best_isa_level().name + ")");
    *table = kernels::preset_kernel_table(*level);
  }
  return Status::ok();
}

}  // namespace

Session::Session(std::unique_ptr<detail::SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Status Session::arena_size(const Model& model, const SessionOptions& options, size_t* bytes) {
  if (!bytes) return invalid_argument("Session::arena_size: bytes is null");
  const kernels::KernelTable* table = nullptr;
  if (Status s = check_options(model.config(), options, &table); !s) return s;
  detail::SessionImpl impl;
  if (Status s = detail::plan_session(model.impl(), options, *table, &impl); !s) return s;
  *bytes = impl.arena_plan.arena_size;
  return Status::ok();
}

Status Session::create(const Model& model, const SessionOptions& options, std::unique_ptr<Session>* out) {
  if (!out) return invalid_argument("Session::create: out is null");
  const kernels::KernelTable* table = nullptr;
  if (Status s = check_options(model.config(), options, &table); !s) return s;
  auto impl = std::make_unique<detail::SessionImpl>();
  impl->model = &model.impl();
  impl->options = options;
  impl->kernels = table;
  if (Status s = detail::plan_session(model.impl(), options, *table, impl.get()); !s) return s;
  const size_t need = impl->arena_plan.arena_size;
  if (options.arena) {
    if (options.arena_size < need)
      return out_of_memory("the caller's arena holds " + std::to_string(options.arena_size) + " bytes; this session needs " +
                           std::to_string(need));
    impl->arena = static_cast<unsigned char*>(options.arena);
  } else {
    void* p = std::aligned_alloc(plan::kArenaAlignment, need > 0 ? need : plan::kArenaAlignment);
    if (!p) return out_of_memory("cannot allocate a " + std::to_string(need) + "-byte arena");
    impl->owned_arena.reset(static_cast<unsigned char*>(p));
    impl->arena = impl->owned_arena.get();
  }
  impl->pool = std::make_unique<ThreadPool>(options.threads);
  for (const plan::Op& op : impl->graph.ops) {
    std::string name = std::string(plan::op_kind_name(op.kind));
    if (op.kind == plan::OpKind::kLinear) {
      name += op.linear->dtype == fb::DType::I8    ? std::string(" ") + table->gemm_u8s8_name
              : op.linear->dtype == fb::DType::F16 ? std::string(" ") + table->gemm_f16_name
                                                   : std::string(" ") + table->gemm_f32_name;
    } else if (op.kind == plan::OpKind::kAttention) {
      name += std::string(" ") + (op.int8_attention ? table->attention_i8_name : table->attention_f32_name);
    }
    impl->profile.push_back({op.label + " [" + name + "]", 0.0, 0});
  }
  out->reset(new Session(std::move(impl)));
  return Status::ok();
}

Status Session::run(const Inputs& in, const OpObserver& observer) {
  impl_->observer = &observer;
  const Status s = run(in);
  impl_->observer = nullptr;
  return s;
}

Status Session::run(const Inputs& in) {
  detail::SessionImpl& s = *impl_;
  const ModelConfig& c = s.model->config;
  s.has_output = false;
  if (in.batch < 1 || in.batch > s.options.max_batch)
    return invalid_argument("batch " + std::to_string(in.batch) + " is outside 1.." + std::to_string(s.options.max_batch) +
                            " (the session's max_batch)");
  if (in.seq < 1 || in.seq > s.options.max_seq)
    return invalid_argument("sequence length " + std::to_string(in.seq) + " is outside 1.." +
                            std::to_string(s.options.max_seq) + " (the session's max_seq)");
  if (!in.input_ids) return invalid_argument("input_ids is null");
  const size_t n = static_cast<size_t>(in.batch) * in.seq;
  for (size_t i = 0; i < n; ++i) {
    if (in.input_ids[i] < 0 || in.input_ids[i] >= c.vocab_size)
      return invalid_argument("token id " + std::to_string(in.input_ids[i]) + " at [" + std::to_string(i / in.seq) + ", " +
                              std::to_string(i % in.seq) + "] is outside the vocabulary (0.." +
                              std::to_string(c.vocab_size - 1) + ")");
    if (in.attention_mask && in.attention_mask[i] != 0 && in.attention_mask[i] != 1)
      return invalid_argument("attention mask value " + std::to_string(in.attention_mask[i]) + " at [" +
                              std::to_string(i / in.seq) + ", " + std::to_string(i % in.seq) + "] is not 0 or 1");
    if (in.token_type_ids) {
      const int limit = c.type_vocab_size > 0 ? c.type_vocab_size : 1;
      if (in.token_type_ids[i] < 0 || in.token_type_ids[i] >= limit)
        return invalid_argument("token type id " + std::to_string(in.token_type_ids[i]) + " at [" +
                                std::to_string(i / in.seq) + ", " + std::to_string(i % in.seq) +
                                "] is outside 0.." + std::to_string(limit - 1));
    }
  }
  s.batch = in.batch;
  s.seq = in.seq;
  s.ids = in.input_ids;
  s.mask = in.attention_mask;
  s.token_types = in.token_type_ids;
  detail::execute_graph(&s);
  s.has_output = true;
  return Status::ok();
}

const float* Session::last_hidden_state() const {
  return impl_->has_output ? impl_->buffer<float>(impl_->graph.hidden_output) : nullptr;
}
const float* Session::pooled() const {
  return impl_->has_output ? impl_->buffer<float>(impl_->graph.pooled_output) : nullptr;
}
const float* Session::attention_probs() const {
  return impl_->has_output && impl_->graph.probs_output >= 0 ? impl_->buffer<float>(impl_->graph.probs_output) : nullptr;
}
int Session::batch() const { return impl_->batch; }
int Session::seq() const { return impl_->seq; }
size_t Session::arena_bytes() const { return impl_->arena_plan.arena_size; }
const std::vector<PlannedBuffer>& Session::planned_buffers() const { return impl_->planned; }
size_t Session::intermediates_total_bytes() const { return impl_->intermediates_total; }

std::string Session::kernel_summary() const {
  const kernels::KernelTable& t = *impl_->kernels;
  std::ostringstream s;
  s << "isa=" << kernels::isa_features_name(t.features) << " gemm_f32=" << t.gemm_f32_name << " gemm_f16=" << t.gemm_f16_name
    << " gemm_u8s8=" << t.gemm_u8s8_name << " attention=" << t.attention_f32_name << " attention_i8=" << t.attention_i8_name << " threads=" << impl_->options.threads;
  return s.str();
}

std::vector<OpProfile> Session::profile() const { return impl_->profile; }
void Session::reset_profile() {
  for (OpProfile& p : impl_->profile) p.total_ms = 0.0, p.calls = 0;
}

}  // namespace encrt
