// Session creation: backends, graph, placement, scratch, arena plans, allocation, prepare.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/registry.h"
#include "model/dequantized_linears.h"
#include "plan/encoder_graph.h"
#include "plan/lifetimes.h"
#include "session/session_impl.h"

namespace encrt::detail {

namespace {

bool declares(const backend::BackendInterface& b, const std::string& key) {
  for (const char* const* k = b.option_keys; *k; ++k)
    if (key == *k) return true;
  return false;
}

// The session's backends: the CPU backend first, then the requested one (or, for auto, every
// backend the auto policy picks for some op). Each gets the options it declares.
Status open_backends(const SessionOptions& o, SessionImpl* s) {
  std::vector<const backend::BackendInterface*> tables = {&backend::cpu_backend()};
  if (o.backend == "auto") {
    for (const backend::BackendInterface* t : backend::auto_backends())
      if (std::find(tables.begin(), tables.end(), t) == tables.end()) tables.push_back(t);
  } else {
    const backend::BackendInterface* t = nullptr;
    if (Status st = backend::find_backend(o.backend, &t); !st) return st;
    if (t != tables[0]) tables.push_back(t);
  }
  for (const auto& [key, value] : o.backend_options) {
    bool known = false;
    for (const backend::BackendInterface* t : tables) known = known || declares(*t, key);
    if (known) continue;
    std::string keys;
    for (const backend::BackendInterface* t : tables)
      for (const char* const* k = t->option_keys; *k; ++k) keys += (keys.empty() ? "" : ", ") + std::string(*k);
    return invalid_argument("unknown backend option '" + key + "' for backend '" + o.backend + "' (its backends take: " +
                            (keys.empty() ? std::string("none") : keys) + ")");
  }
  int devices = 0;
  for (const backend::BackendInterface* t : tables) {
    backend::Options mine;
    for (const auto& [key, value] : o.backend_options)
      if (declares(*t, key)) mine[key] = value;
    BackendSlot slot;
    slot.table = t;
    slot.memory = t->memory == backend::MemoryKind::kHost ? plan::kHostMemory : ++devices;
    if (Status st = t->create(mine, o.threads, &slot.context); !st) return st;
    s->backends.push_back(std::move(slot));
  }
  s->memories.resize(static_cast<size_t>(devices) + 1);
  s->memories[plan::kHostMemory].name = "host";
  for (size_t b = 0; b < s->backends.size(); ++b) {
    const BackendSlot& slot = s->backends[b];
    if (slot.memory == plan::kHostMemory) continue;
    s->memories[static_cast<size_t>(slot.memory)].name = slot.table->name;
    s->memories[static_cast<size_t>(slot.memory)].owner = static_cast<int>(b);
  }
  return Status::ok();
}

// Which of the session's backends ask for the model's int8 linears as fp16 ones
// (BackendInterface::dequantizes_int8_linears), when the model has int8 linears; empty: none does.
std::vector<bool> asking_for_dequantized(const ModelImpl& model, const SessionOptions& o, const SessionImpl& s) {
  bool int8 = model.pooler.dtype == DType::kI8 || model.head.classifier.dtype == DType::kI8;
  for (const LayerView& l : model.layers)
    for (const LinearView* w : {&l.qkv, &l.attn_out, &l.ffn_up, &l.ffn_down}) int8 = int8 || w->dtype == DType::kI8;
  std::vector<bool> asking(s.backends.size(), false);
  bool any = false;
  for (size_t b = 0; b < s.backends.size() && int8; ++b) {
    const BackendSlot& slot = s.backends[b];
    asking[b] = slot.table->dequantizes_int8_linears && slot.table->dequantizes_int8_linears(slot.context, {o.max_batch, o.max_seq});
    any = any || asking[b];
  }
  return any ? asking : std::vector<bool>();
}

// The panels of the dequantized views (model/dequantized_linears.h) the session's linears read,
// except where a device backend that asked for the views runs the linear: it dequantizes on its
// device from the int8 linear.
Status materialize_dequantized(const ModelImpl& model, const std::vector<bool>& asking, const SessionImpl& s) {
  for (size_t i = 0; i < s.graph.ops.size(); ++i) {
    const plan::Op& op = s.graph.ops[i];
    if (op.kind != plan::OpKind::kLinear) continue;
    const LinearView& w = *op.p<plan::LinearParams>().weights;
    if (!w.dequantized_from) continue;
    const size_t b = static_cast<size_t>(s.placement.op_backend[i]);
    if (asking[b] && s.backends[b].table->memory == backend::MemoryKind::kDevice) continue;
    if (!model.dequantized_linears().materialize(w))
      return out_of_memory("cannot allocate the " + std::to_string(w.packed_bytes) + " bytes of linear '" + op.label +
                           "' as fp16 (option int8_linears)");
  }
  return Status::ok();
}

// Each op on the requested backend when it supports the op (for auto: on the first of its
// backends, in order of preference, that does), else on the CPU backend (slot 0).
void place(SessionImpl* s) {
  s->placement.backend_memory.clear();
  for (const BackendSlot& b : s->backends) s->placement.backend_memory.push_back(b.memory);
  s->placement.op_backend.clear();
  for (const plan::Op& op : s->graph.ops) {
    int chosen = 0;
    for (size_t b = s->backends.size(); b-- > 1;)
      if (s->backends[b].table->supports(s->backends[b].context, s->graph, op)) chosen = static_cast<int>(b);
    s->placement.op_backend.push_back(chosen);
  }
  plan::insert_copies(&s->graph, &s->placement);
}

// The scratch each op's backend asks for, as a buffer of the op's memory.
void add_scratch(const SessionOptions& o, SessionImpl* s) {
  const backend::Shape max{o.max_batch, o.max_seq};
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    const BackendSlot& b = s->backends[static_cast<size_t>(s->placement.op_backend[i])];
    plan::Op& op = s->graph.ops[i];
    const size_t bytes = b.table->scratch_bytes(b.context, s->graph, op, max);
    if (bytes == 0) continue;
    plan::BufferSpec spec;
    spec.name = op.label + ".scratch";
    spec.dtype = DType::kU8;
    spec.rows = plan::Rows::kFixed;
    spec.row_bytes = spec.max_bytes = bytes;
    spec.memory = b.memory;
    op.scratch = s->graph.add_buffer(std::move(spec));
  }
  // Buffers an op reads get the padding its backend may read past their end.
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    const size_t overrun = s->backends[static_cast<size_t>(s->placement.op_backend[i])].table->read_overrun;
    if (overrun == 0) continue;
    const plan::Op& op = s->graph.ops[i];
    for (int b : op.inputs)
      if (b >= 0) s->graph.buffers[static_cast<size_t>(b)].pad_bytes = std::max(s->graph.buffers[static_cast<size_t>(b)].pad_bytes, overrun);
    if (op.scratch >= 0) s->graph.buffers[static_cast<size_t>(op.scratch)].pad_bytes = overrun;
  }
}

// Buffers of a memory whose backend stores them in another element type take that type (and its
// size) before the plan.
void apply_storage_dtypes(SessionImpl* s) {
  for (size_t i = 0; i < s->graph.buffers.size(); ++i) {
    plan::BufferSpec& b = s->graph.buffers[i];
    const int owner = s->memories[static_cast<size_t>(b.memory)].owner;
    if (owner < 0 || b.storage != plan::Storage::kArena) continue;
    const BackendSlot& slot = s->backends[static_cast<size_t>(owner)];
    if (!slot.table->storage_dtype) continue;
    const DType d = slot.table->storage_dtype(slot.context, s->graph, static_cast<int>(i));
    if (d == b.dtype) continue;
    b.row_bytes = b.row_bytes / dtype_size(b.dtype) * dtype_size(d);
    b.max_bytes = b.max_bytes / dtype_size(b.dtype) * dtype_size(d);
    b.dtype = d;
  }
}

Status plan_memories(SessionImpl* s) {
  const std::vector<plan::Lifetime> life = plan::buffer_lifetimes(s->graph);
  s->planned.clear();
  s->intermediates_total = 0;
  for (size_t m = 0; m < s->memories.size(); ++m) {
    MemorySpace& mem = s->memories[m];
    size_t alignment = plan::kArenaAlignment;
    for (const BackendSlot& b : s->backends)
      if (b.memory == static_cast<int>(m)) alignment = std::max(alignment, b.table->arena_alignment);
    std::vector<plan::BufferLifetime> requests;
    std::vector<size_t> ids;
    for (size_t i = 0; i < s->graph.buffers.size(); ++i) {
      const plan::BufferSpec& b = s->graph.buffers[i];
      if (b.memory != static_cast<int>(m) || b.storage != plan::Storage::kArena) continue;
      if (life[i].first_op < 0) return internal_error("planned buffer '" + b.name + "' is never used");
      requests.push_back({b.max_bytes + b.pad_bytes, life[i].first_op, life[i].last_op});
      ids.push_back(i);
      s->intermediates_total += b.max_bytes;
    }
    mem.plan = plan::plan_arena(requests, alignment);
    for (size_t r = 0; r < ids.size(); ++r) {
      const plan::BufferSpec& b = s->graph.buffers[ids[r]];
      s->planned.push_back({b.name, mem.name, mem.plan.offsets[r], b.max_bytes, life[ids[r]].first_op, life[ids[r]].last_op});
    }
    // Offsets by buffer id for binding (the plan's are by request).
    std::vector<size_t> by_id(s->graph.buffers.size(), 0);
    for (size_t r = 0; r < ids.size(); ++r) by_id[ids[r]] = mem.plan.offsets[r];
    mem.plan.offsets = std::move(by_id);
  }
  return Status::ok();
}

Status allocate_arenas(const SessionOptions& o, SessionImpl* s) {
  for (MemorySpace& mem : s->memories) {
    const size_t need = mem.plan.arena_size;
    if (mem.owner >= 0) {
      const BackendSlot& b = s->backends[static_cast<size_t>(mem.owner)];
      void* p = nullptr;
      if (Status st = b.table->alloc_arena(b.context, need > 0 ? need : mem.plan.alignment, &p); !st) return st;
      mem.base = static_cast<unsigned char*>(p);
      mem.owned = true;
    } else if (o.arena) {
      if (o.arena_size < need)
        return out_of_memory("the caller's arena holds " + std::to_string(o.arena_size) + " bytes; this session needs " +
                             std::to_string(need));
      mem.base = static_cast<unsigned char*>(o.arena);
    } else {
      // posix_memalign rather than C11 aligned_alloc: Android's libc has it from API 9, aligned_alloc
      // only from API 28 (toolchains/android-arm64.cmake builds for API 24).
      void* p = nullptr;
      if (posix_memalign(&p, mem.plan.alignment, need > 0 ? need : mem.plan.alignment) != 0) p = nullptr;
      if (!p) return out_of_memory("cannot allocate a " + std::to_string(need) + "-byte arena");
      mem.base = static_cast<unsigned char*>(p);
      mem.owned = true;
    }
  }
  s->bindings.assign(s->graph.buffers.size(), nullptr);
  for (size_t i = 0; i < s->graph.buffers.size(); ++i) {
    const plan::BufferSpec& b = s->graph.buffers[i];
    if (b.storage != plan::Storage::kArena) continue;
    const MemorySpace& mem = s->memories[static_cast<size_t>(b.memory)];
    s->bindings[i] = mem.base + mem.plan.offsets[i];
  }
  return Status::ok();
}

Status prepare_backends(const SessionOptions& o, SessionImpl* s) {
  for (BackendSlot& b : s->backends) {
    backend::PrepareArgs args;
    args.model = s->model;
    args.graph = &s->graph;
    args.ops = b.ops.data();
    args.op_count = static_cast<int>(b.ops.size());
    args.max = {o.max_batch, o.max_seq};
    args.may_pack = s->can_pack;
    if (Status st = b.table->prepare(b.context, args, &b.held); !st) return st;
  }
  return Status::ok();
}

// Whether runs of this session can be packed (plan/token_layout.h): every op on a backend that
// runs it packed, no attention window, token-level outputs in host memory (the core expands
// them there) or in the memory of a backend that expands them (expand_packed). The layout's
// arrays are sized here, so that a run allocates nothing.
Status plan_packing(const SessionOptions& o, SessionImpl* s) {
  s->can_pack = true;
  s->cannot_pack.clear();
  s->token_outputs.clear();
  s->reads_first_token = false;
  for (size_t i = 0; i < s->graph.ops.size() && s->can_pack; ++i) {
    const plan::Op& op = s->graph.ops[i];
    const BackendSlot& b = s->backends[static_cast<size_t>(s->placement.op_backend[i])];
    s->reads_first_token = s->reads_first_token || op.kind == plan::OpKind::kPoolFirst;
    if (op.kind == plan::OpKind::kAttention && op.p<plan::AttentionParams>().window > 0) {
      s->cannot_pack = "the model has an attention window (a packed sequence loses the distances to padded positions)";
    } else if (op.kind == plan::OpKind::kAttention && op.out(plan::slot::kAttentionProbs) >= 0) {
      s->cannot_pack = "the attention probabilities (attention_layer) are per padded position";
    } else if (op.kind != plan::OpKind::kCopy &&
               (!b.table->supports_packed || !b.table->supports_packed(b.context, s->graph, op))) {
      s->cannot_pack = "backend '" + std::string(b.table->name) + "' does not run op '" + op.label + "' packed";
    }
    s->can_pack = s->cannot_pack.empty();
  }
  for (const plan::NamedTensor& t : s->graph.outputs) {
    const plan::BufferSpec& b = s->graph.buffers[static_cast<size_t>(t.buffer)];
    if (b.rows != plan::Rows::kTokens) continue;
    const MemorySpace& mem = s->memories[static_cast<size_t>(b.memory)];
    const BackendSlot* owner = mem.owner >= 0 ? &s->backends[static_cast<size_t>(mem.owner)] : nullptr;
    if (owner && !owner->table->expand_packed && s->can_pack) {
      s->can_pack = false;
      s->cannot_pack = "output '" + t.name + "' lives in the memory of backend '" + owner->table->name +
                       "', which does not expand packed rows there";
    }
    s->token_outputs.push_back(t.buffer);
  }
  if (o.padding == Padding::kPacked && !s->can_pack)
    return unsupported("padding=packed: this session cannot run packed batches: " + s->cannot_pack);
  if (s->can_pack) {
    s->pack_offsets.assign(static_cast<size_t>(o.max_batch) + 1, 0);
    s->pack_source.assign(static_cast<size_t>(o.max_batch) * static_cast<size_t>(o.max_seq), 0);
  }
  return Status::ok();
}

void describe_ops(SessionImpl* s) {
  s->profile.clear();
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    const plan::Op& op = s->graph.ops[i];
    const BackendSlot& b = s->backends[static_cast<size_t>(s->placement.op_backend[i])];
    const std::string impl = b.table->implementation(b.context, s->graph, op);
    s->profile.push_back({op.label + " [" + plan::op_kind_name(op.kind) + (impl.empty() ? "" : " " + impl) + "]", 0.0, 0});
  }
  s->profile_ms.assign(s->graph.ops.size(), 0.0);
}

}  // namespace

SessionImpl::~SessionImpl() {
  for (MemorySpace& mem : memories) {
    if (!mem.owned || !mem.base) continue;
    if (mem.owner >= 0) {
      const BackendSlot& b = backends[static_cast<size_t>(mem.owner)];
      b.table->free_arena(b.context, mem.base);
    } else {
      std::free(mem.base);
    }
  }
  for (BackendSlot& b : backends)
    if (b.context) b.table->destroy(b.context);
}

backend::RunArgs SessionImpl::run_args(int first_op, int count) const {
  backend::RunArgs args;
  args.graph = &graph;
  args.ops = op_index.data() + first_op;
  args.op_count = count;
  args.buffers = bindings.data();
  args.shape = {batch, seq};
  args.src_mask_per_sequence = src_mask_per_sequence;
  args.packed = packed ? &layout : nullptr;
  return args;
}

namespace {

Status build_on_backends(const ModelImpl& model, const SessionOptions& options, bool prepare, SessionImpl* s) {
  s->model = &model;
  s->options = options;
  plan::EncoderGraphOptions g;
  g.max_batch = options.max_batch;
  g.max_seq = options.max_seq;
  g.attention_layer = options.attention_layer;
  g.src_mask = options.src_mask;
  if (Status st = open_backends(options, s); !st) return st;
  const std::vector<bool> asking = asking_for_dequantized(model, options, *s);
  s->dequantized_int8 = !asking.empty();
  if (s->dequantized_int8) g.dequantized = &model.dequantized_linears();
  s->graph = plan::build_encoder_graph(model, g);
  place(s);
  if (s->dequantized_int8)
    if (Status st = materialize_dequantized(model, asking, *s); !st) return st;
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    BackendSlot& b = s->backends[static_cast<size_t>(s->placement.op_backend[i])];
    if (!b.table->supports(b.context, s->graph, s->graph.ops[i]))
      return internal_error("backend '" + std::string(b.table->name) + "' was given op '" + s->graph.ops[i].label +
                            "' it does not support");
    b.ops.push_back(static_cast<int>(i));
  }
  if (Status st = plan_packing(options, s); !st) return st;
  add_scratch(options, s);
  apply_storage_dtypes(s);
  if (Status st = plan_memories(s); !st) return st;
  s->op_index.resize(s->graph.ops.size());
  for (size_t i = 0; i < s->op_index.size(); ++i) s->op_index[i] = static_cast<int>(i);
  s->segments.clear();
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    const int b = s->placement.op_backend[i];
    if (s->segments.empty() || s->segments.back().backend != b) s->segments.push_back({b, static_cast<int>(i), 0});
    ++s->segments.back().count;
  }
  if (!prepare) return Status::ok();
  if (Status st = allocate_arenas(options, s); !st) return st;
  if (Status st = prepare_backends(options, s); !st) return st;
  describe_ops(s);
  return Status::ok();
}

}  // namespace

// Under auto, a device backend that is available but cannot take this session (a GPU whose
// architecture this build has no kernels for, too little device memory for the weights or the
// arena: its creation or preparation fails as unsupported or out of memory) leaves the session on
// the CPU: the whole build starts again without it, and the session says why
// (SessionImpl::auto_fallback, in Session::kernel_summary and `encrt inspect`). Not where the
// options name one of the device backend's own (the caller asked for that backend's way of
// running: its refusal is the answer), nor for any other error (a wrong argument, a bug), and a
// named backend's failure is always the caller's error.
Status build_session(const ModelImpl& model, const SessionOptions& options, bool prepare, SessionImpl* s) {
  const Status built = build_on_backends(model, options, prepare, s);
  if (built || options.backend != "auto" ||
      (built.code() != StatusCode::kUnsupported && built.code() != StatusCode::kOutOfMemory))
    return built;
  const backend::BackendInterface* device = nullptr;  // the one auto opened (or failed to open)
  for (const backend::BackendInterface* t : backend::auto_backends())
    if (t->memory != backend::MemoryKind::kHost) {
      device = t;
      break;
    }
  if (!device) return built;  // nothing but the CPU: its own error
  for (const auto& [key, value] : options.backend_options)
    if (declares(*device, key) && !declares(backend::cpu_backend(), key)) return built;
  s->~SessionImpl();  // the partial build's backends and arenas released
  new (s) SessionImpl();
  SessionOptions cpu_only = options;
  cpu_only.backend = "cpu";
  if (Status st = build_on_backends(model, cpu_only, prepare, s); !st) return st;
  s->options = options;
  s->auto_fallback = "auto left out backend '" + std::string(device->name) + "': " + built.to_string();
  return Status::ok();
}

}  // namespace encrt::detail
