#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/registry.h"
#include "encrt/encrt.hpp"
#include "model/dequantized_linears.h"
#include "session/session_impl.h"

namespace encrt {

namespace {

constexpr int kMaxThreads = 256;

Status check_options(const ModelConfig& c, const SessionOptions& o) {
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
  // Token rows and the attention-probabilities buffer must stay far from size_t overflow: 1e12
  // bytes on 64-bit, an eighth of the address space on 32-bit (the arena holds several such
  // buffers, and their offsets and sizes are size_t sums).
  const double rows = static_cast<double>(o.max_batch) * o.max_seq;
  const double limit = std::min(1e12, static_cast<double>(SIZE_MAX) / 8.0);
  if (rows * (3.0 * c.hidden_size + c.ffn_size) * 4.0 > limit ||
      (o.attention_layer >= 0 && rows * o.max_seq * c.num_heads * 4.0 > limit) ||
      (o.src_mask && rows * o.max_seq * 4.0 > limit))
    return invalid_argument("max_batch x max_seq is too large to plan an arena for");
  if (o.padding != Padding::kAuto && o.padding != Padding::kPacked && o.padding != Padding::kPadded)
    return invalid_argument("padding " + std::to_string(static_cast<int>(o.padding)) +
                            " is none of auto (0), packed (1) and padded (2)");
  if (o.arena && reinterpret_cast<uintptr_t>(o.arena) % plan::kArenaAlignment != 0)
    return invalid_argument("the caller's arena must be 64-byte aligned");
  return Status::ok();
}

// The shape of a named output in the last run.
std::vector<int64_t> shape_of(const plan::NamedTensor& t, int batch, int seq) {
  std::vector<int64_t> shape;
  for (const plan::Dim& d : t.shape)
    shape.push_back(d.kind == plan::Dim::kBatch ? batch : d.kind == plan::Dim::kSeq ? seq : d.value);
  return shape;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

Status Session::arena_size(const Model& model, const SessionOptions& options, size_t* bytes) {
  if (!bytes) return invalid_argument("Session::arena_size: bytes is null");
  if (Status s = check_options(model.config(), options); !s) return s;
  detail::SessionImpl impl;
  if (Status s = detail::build_session(*model.impl_, options, /*prepare=*/false, &impl); !s) return s;
  *bytes = impl.memories[plan::kHostMemory].plan.arena_size;
  return Status::ok();
}

Status Session::create(const Model& model, const SessionOptions& options, std::unique_ptr<Session>* out) {
  if (!out) return invalid_argument("Session::create: out is null");
  out->reset();
  if (Status s = check_options(model.config(), options); !s) return s;
  auto impl = std::make_unique<Impl>();
  if (Status s = detail::build_session(*model.impl_, options, /*prepare=*/true, impl.get()); !s) return s;
  out->reset(new Session(std::move(impl)));
  return Status::ok();
}

namespace {
std::string pair_position(const Inputs& in, size_t i) {
  const size_t S = static_cast<size_t>(in.seq);
  const std::string ij = std::to_string(i / S % S) + ", " + std::to_string(i % S) + "]";
  return in.src_mask_shape == SrcMaskShape::kBatchSeqSeq ? "[" + std::to_string(i / (S * S)) + ", " + ij : "[" + ij;
}

// The src mask: allowed by the session, one kind, a known shape, and every value meaningful.
Status check_src_mask(const detail::SessionImpl& s, const Inputs& in) {
  if (!in.src_mask_bool && !in.src_mask_float) return Status::ok();
  if (!s.options.src_mask)
    return invalid_argument("a src mask was given, but the session was not planned for one (SessionOptions::src_mask)");
  if (in.src_mask_bool && in.src_mask_float)
    return invalid_argument("give src_mask_bool or src_mask_float, not both");
  if (in.src_mask_shape != SrcMaskShape::kSeqSeq && in.src_mask_shape != SrcMaskShape::kBatchSeqSeq)
    return invalid_argument("src_mask_shape " + std::to_string(static_cast<int>(in.src_mask_shape)) +
                            " is neither [seq, seq] (0) nor [batch, seq, seq] (1)");
  const size_t n = (in.src_mask_shape == SrcMaskShape::kBatchSeqSeq ? static_cast<size_t>(in.batch) : 1) *
                   static_cast<size_t>(in.seq) * static_cast<size_t>(in.seq);
  if (in.src_mask_bool) {
    for (size_t i = 0; i < n; ++i)
      if (in.src_mask_bool[i] > 1)
        return invalid_argument("src_mask_bool value " + std::to_string(in.src_mask_bool[i]) + " at " +
                                pair_position(in, i) + " is not 0 (may attend) or 1 (may not)");
    return Status::ok();
  }
  for (size_t i = 0; i < n; ++i) {
    const float v = in.src_mask_float[i];
    if (std::isnan(v) || v == INFINITY)
      return invalid_argument(std::string("src_mask_float holds ") + (std::isnan(v) ? "NaN" : "+inf") + " at " +
                              pair_position(in, i) + ": an additive mask must be finite or -inf");
  }
  return Status::ok();
}

// Shapes and every id, mask value and token type are checked before anything runs.
Status check_inputs(const detail::SessionImpl& s, const Inputs& in) {
  const ModelConfig& c = s.model->config;
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
  return check_src_mask(s, in);
}

Status run_checked(detail::SessionImpl* s, const Inputs& in, const OpObserver* observer) {
  s->has_output = false;
  if (Status st = check_inputs(*s, in); !st) return st;
  if (Status st = detail::execute_session(s, in, observer); !st) return st;
  s->has_output = true;
  return Status::ok();
}
}  // namespace

Status Session::run(const Inputs& in, const OpObserver& observer) { return run_checked(impl_.get(), in, &observer); }
Status Session::run(const Inputs& in) { return run_checked(impl_.get(), in, nullptr); }

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> names;
  for (const plan::NamedTensor& t : impl_->graph.outputs) names.push_back(t.name);
  return names;
}

Status Session::output(const std::string& name, OutputInfo* info) const {
  if (!info) return invalid_argument("Session::output: info is null");
  const plan::NamedTensor* t = impl_->graph.output(name);
  if (!t && (name == "logits" || name == "scores" || name == "labels") && impl_->model->head.kind == detail::HeadKind::kNone)
    return invalid_argument("output '" + name + "' needs a task head, and this model has none (its outputs: hidden, pooled" +
                       std::string(impl_->graph.output("attention") ? ", attention" : "") + ")");
  if (!t) {
    std::string names;
    for (const std::string& n : output_names()) names += (names.empty() ? "" : ", ") + n;
    return invalid_argument("this session has no output '" + name + "' (it has: " + names + ")");
  }
  if (!impl_->has_output) return invalid_argument("no output yet: the session has not run successfully");
  const plan::BufferSpec& b = impl_->graph.buffers[static_cast<size_t>(t->buffer)];
  info->name = name;
  info->dtype = b.dtype;
  info->shape = shape_of(*t, impl_->batch, impl_->seq);
  size_t elements = 1;
  for (int64_t d : info->shape) elements *= static_cast<size_t>(d);
  info->bytes = elements * dtype_size(b.dtype);
  info->device = impl_->memories[static_cast<size_t>(b.memory)].name;
  info->data = impl_->bindings[static_cast<size_t>(t->buffer)];
  return Status::ok();
}

Status Session::copy_output(const std::string& name, void* dst, size_t capacity) const {
  OutputInfo info;
  if (Status s = output(name, &info); !s) return s;
  if (!dst) return invalid_argument("Session::copy_output: dst is null");
  if (capacity < info.bytes)
    return invalid_argument("output '" + name + "' has " + std::to_string(info.bytes) + " bytes; the destination holds " +
                            std::to_string(capacity));
  const plan::BufferSpec& b = impl_->graph.buffers[static_cast<size_t>(impl_->graph.output(name)->buffer)];
  const detail::MemorySpace& mem = impl_->memories[static_cast<size_t>(b.memory)];
  if (mem.owner < 0) {
    std::memcpy(dst, info.data, info.bytes);
    return Status::ok();
  }
  const detail::BackendSlot& owner = impl_->backends[static_cast<size_t>(mem.owner)];
  if (Status s = owner.table->copy_to_host(owner.context, dst, info.data, info.bytes); !s) return s;
  return owner.table->synchronize ? owner.table->synchronize(owner.context) : Status::ok();
}

namespace {
const float* host_output(const Session::Impl& impl, const char* name) {
  if (!impl.has_output) return nullptr;
  const plan::NamedTensor* t = impl.graph.output(name);
  if (!t) return nullptr;
  if (impl.graph.buffers[static_cast<size_t>(t->buffer)].memory != plan::kHostMemory) return nullptr;
  return static_cast<const float*>(impl.bindings[static_cast<size_t>(t->buffer)]);
}
}  // namespace

const float* Session::last_hidden_state() const { return host_output(*impl_, "hidden"); }
const float* Session::pooled() const { return host_output(*impl_, "pooled"); }
const float* Session::attention_probs() const { return host_output(*impl_, "attention"); }
int Session::batch() const { return impl_->batch; }
int Session::seq() const { return impl_->seq; }
size_t Session::arena_bytes() const { return impl_->memories[plan::kHostMemory].plan.arena_size; }
const std::vector<PlannedBuffer>& Session::planned_buffers() const { return impl_->planned; }
size_t Session::intermediates_total_bytes() const { return impl_->intermediates_total; }

std::vector<OpPlacement> Session::placement() const {
  std::vector<OpPlacement> out;
  const detail::SessionImpl& s = *impl_;
  for (size_t i = 0; i < s.graph.ops.size(); ++i) {
    const plan::Op& op = s.graph.ops[i];
    const detail::BackendSlot& b = s.backends[static_cast<size_t>(s.placement.op_backend[i])];
    out.push_back({op.label, plan::op_kind_name(op.kind), b.table->name, b.table->implementation(b.context, s.graph, op)});
  }
  return out;
}

std::vector<BackendUsage> Session::backends() const {
  std::vector<BackendUsage> out;
  for (const detail::BackendSlot& b : impl_->backends) {
    BackendUsage u;
    u.name = b.table->name;
    u.memory = impl_->memories[static_cast<size_t>(b.memory)].name;
    u.weights_in_place = b.held.weights_in_place;
    u.weights_copied = b.held.weights_copied;
    u.weights_packed = b.held.weights_packed;
    u.arena = impl_->memories[static_cast<size_t>(b.memory)].plan.arena_size;
    u.summary = b.table->summary(b.context);
    out.push_back(std::move(u));
  }
  return out;
}

std::string Session::kernel_summary() const {
  std::string s;
  for (const detail::BackendSlot& b : impl_->backends) {
    if (b.ops.empty()) continue;
    s += (s.empty() ? "" : "; ") + (impl_->backends.size() > 1 ? std::string(b.table->name) + ": " : std::string()) +
         b.table->summary(b.context);
  }
  if (impl_->dequantized_int8) {  // model/dequantized_linears.h
    const detail::DequantizedLinears& d = impl_->model->dequantized_linears();
    s += "; int8 linears run as fp16 (" + std::to_string(d.count()) + " of the model's; their fp16 panels in host memory: " +
         std::to_string(d.bytes()) + " bytes)";
  }
  if (!impl_->auto_fallback.empty()) s += "; " + impl_->auto_fallback;
  return s;
}

double Session::last_run_device_ms() const {
  if (!impl_->has_output) return -1.0;
  double total = -1.0;
  for (const detail::BackendSlot& b : impl_->backends) {
    if (!b.table->last_device_ms || b.ops.empty()) continue;
    const double ms = b.table->last_device_ms(b.context);
    if (ms >= 0) total = (total < 0 ? 0.0 : total) + ms;
  }
  return total;
}

bool Session::last_run_packed() const { return impl_->has_output && impl_->packed; }

std::vector<OpProfile> Session::profile() const { return impl_->profile; }
void Session::reset_profile() {
  for (OpProfile& p : impl_->profile) p.total_ms = 0.0, p.calls = 0;
}

std::vector<BackendStatus> available_backends() {
  std::vector<BackendStatus> out;
  for (const backend::KnownBackend& k : backend::known_backends()) {
    BackendStatus s;
    s.name = k.name;
    s.built = k.table != nullptr;
    std::string why;
    s.available = s.built && (!k.table->available || k.table->available(&why));
    s.detail = s.built && !s.available ? why : k.detail;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace encrt
