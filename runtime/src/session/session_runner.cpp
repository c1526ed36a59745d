// One run: bind the caller's arrays, then hand each segment to its backend (replaying a capture
// where the backend keeps one), then wait for the device backends. Nothing here allocates, but
// the observed path (calibration and debugging tools), which may copy device rows to the host.
#include <chrono>
#include <string>
#include <vector>

#include "session/session_impl.h"

namespace encrt::detail {

namespace {

using Clock = std::chrono::steady_clock;

void bind_inputs(SessionImpl* s, const Inputs& in) {
  for (const plan::NamedTensor& t : s->graph.inputs) {
    const void* data = t.name == "input_ids"        ? static_cast<const void*>(in.input_ids)
                       : t.name == "attention_mask" ? static_cast<const void*>(in.attention_mask)
                       : t.name == "src_mask_bool"  ? static_cast<const void*>(in.src_mask_bool)
                       : t.name == "src_mask_float" ? static_cast<const void*>(in.src_mask_float)
                                                    : static_cast<const void*>(in.token_type_ids);
    s->bindings[static_cast<size_t>(t.buffer)] = const_cast<void*>(data);
  }
  // A mirror of an absent optional input is absent too (its copy op then copies nothing).
  for (size_t i = 0; i < s->graph.buffers.size(); ++i) {
    const plan::BufferSpec& b = s->graph.buffers[i];
    if (b.mirror_of < 0 || s->graph.buffers[static_cast<size_t>(b.mirror_of)].storage != plan::Storage::kInput) continue;
    const MemorySpace& mem = s->memories[static_cast<size_t>(b.memory)];
    s->bindings[i] = s->bindings[static_cast<size_t>(b.mirror_of)] ? mem.base + mem.plan.offsets[i] : nullptr;
  }
}

Status run_segment(SessionImpl* s, const Segment& seg) {
  const BackendSlot& b = s->backends[static_cast<size_t>(seg.backend)];
  const backend::RunArgs args = s->run_args(seg.first, seg.count);
  if (s->options.profile) {
    if (b.table->run_profiled) {
      if (Status st = b.table->run_profiled(b.context, args, s->profile_ms.data() + seg.first); !st) return st;
    } else {
      for (int i = 0; i < seg.count; ++i) {
        const auto start = Clock::now();
        if (Status st = b.table->run(b.context, s->run_args(seg.first + i, 1)); !st) return st;
        s->profile_ms[static_cast<size_t>(seg.first + i)] =
            std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      }
    }
    for (int i = 0; i < seg.count; ++i) {
      OpProfile& p = s->profile[static_cast<size_t>(seg.first + i)];
      p.total_ms += s->profile_ms[static_cast<size_t>(seg.first + i)];
      ++p.calls;
    }
    return Status::ok();
  }
  if (b.table->replay) {
    bool replayed = false;
    if (Status st = b.table->replay(b.context, args, &replayed); !st) return st;
    if (replayed) return Status::ok();
    return b.table->capture(b.context, args);
  }
  return b.table->run(b.context, args);
}

// A buffer's rows as fp32 on the host, for the observer: null unless it holds fp32 rows.
const float* observable(SessionImpl* s, int buffer, int* width, std::vector<float>* staging) {
  if (buffer < 0) return nullptr;
  const plan::BufferSpec& spec = s->graph.buffers[static_cast<size_t>(buffer)];
  if (spec.dtype != DType::kF32 || spec.rows == plan::Rows::kFixed) return nullptr;
  *width = static_cast<int>(spec.row_bytes / sizeof(float));
  const void* data = s->bindings[static_cast<size_t>(buffer)];
  const MemorySpace& mem = s->memories[static_cast<size_t>(spec.memory)];
  if (mem.owner < 0) return static_cast<const float*>(data);
  const BackendSlot& b = s->backends[static_cast<size_t>(mem.owner)];
  const size_t bytes = plan::rows_in_run(s->graph, buffer, s->batch, s->seq, s->packed ? &s->layout : nullptr) * spec.row_bytes;
  staging->resize(bytes / sizeof(float));
  if (!b.table->copy_to_host(b.context, staging->data(), data, bytes) || (b.table->synchronize && !b.table->synchronize(b.context)))
    return nullptr;
  return staging->data();
}

Status run_observed(SessionImpl* s, const OpObserver& observer) {
  std::vector<float> in_rows, out_rows;
  for (size_t i = 0; i < s->graph.ops.size(); ++i) {
    const plan::Op& op = s->graph.ops[i];
    const BackendSlot& b = s->backends[static_cast<size_t>(s->placement.op_backend[i])];
    if (Status st = b.table->run(b.context, s->run_args(static_cast<int>(i), 1)); !st) return st;
    if (b.table->synchronize)
      if (Status st = b.table->synchronize(b.context); !st) return st;
    if (op.kind == plan::OpKind::kCopy) continue;
    // An int8 linear's fp32 input may already be overwritten (its lifetime ended at the
    // quantize op), and an in-place op's input is its output: neither is reported.
    const int x = op.in(plan::slot::kX), y = op.out(0);
    int in_width = 0, out_width = 0;
    const float* input =
        op.kind != plan::OpKind::kQuantize && x != y ? observable(s, x, &in_width, &in_rows) : nullptr;
    const float* output = observable(s, y, &out_width, &out_rows);
    const int rows =
        y >= 0 ? static_cast<int>(plan::rows_in_run(s->graph, y, s->batch, s->seq, s->packed ? &s->layout : nullptr)) : 0;
    observer(OpOutput{op.label, plan::op_kind_name(op.kind), op.layer, input, input ? in_width : 0, output,
                      output ? out_width : 0, rows});
  }
  return Status::ok();
}

// Packed or padded (SessionOptions::padding): the layout of this run, or an error when packed
// was asked for and this batch needs the padded layout.
Status choose_layout(SessionImpl* s, const Inputs& in, bool observed) {
  s->packed = false;
  const Padding mode = s->options.padding;
  if (mode == Padding::kPadded || !s->can_pack || (mode == Padding::kAuto && observed)) return Status::ok();
  // What needs the padded layout; the message is built only for an error (auto allocates nothing).
  const bool src_mask = in.src_mask_bool || in.src_mask_float;
  int starts_padded = -1;  // a sequence whose first token is padding, when the model pools first tokens
  if (!src_mask && s->reads_first_token && in.attention_mask)
    for (int b = 0; b < in.batch && starts_padded < 0; ++b)
      if (in.attention_mask[static_cast<size_t>(b) * in.seq] == 0) starts_padded = b;
  if (src_mask || starts_padded >= 0) {
    if (mode != Padding::kPacked) return Status::ok();
    if (src_mask) return invalid_argument("padding=packed: a src mask is given (it is indexed by padded positions)");
    return invalid_argument("padding=packed: sequence " + std::to_string(starts_padded) +
                            " starts with padding, and the model pools each sequence's first token (CLS or pooler)");
  }
  s->layout = plan::pack_tokens(in.attention_mask, in.batch, in.seq, s->pack_offsets.data(), s->pack_source.data());
  s->packed = mode == Padding::kPacked || s->layout.tokens < in.batch * in.seq;
  return Status::ok();
}

// After a packed run, token-level outputs go back to [batch, seq] rows with the padding zeroed:
// those in a device memory by their backend, enqueued after its work (before the backends are
// synchronized), then those in host memory here, once every backend has finished.
Status expand_device_token_outputs(SessionImpl* s) {
  if (!s->packed) return Status::ok();
  for (int buffer : s->token_outputs) {
    const MemorySpace& mem = s->memories[static_cast<size_t>(s->graph.buffers[static_cast<size_t>(buffer)].memory)];
    if (mem.owner < 0) continue;
    const BackendSlot& b = s->backends[static_cast<size_t>(mem.owner)];
    // (plan_packing packs only sessions whose device token outputs have an expand_packed.)
    if (Status st = b.table->expand_packed(b.context, s->run_args(0, 0), buffer); !st) return st;
  }
  return Status::ok();
}

void expand_host_token_outputs(SessionImpl* s) {
  if (!s->packed) return;
  for (int buffer : s->token_outputs) {
    const plan::BufferSpec& spec = s->graph.buffers[static_cast<size_t>(buffer)];
    if (s->memories[static_cast<size_t>(spec.memory)].owner >= 0) continue;
    plan::expand_rows(s->layout, s->batch, s->seq, spec.row_bytes, s->bindings[static_cast<size_t>(buffer)]);
  }
}

Status synchronize_backends(SessionImpl* s) {
  for (const BackendSlot& b : s->backends)
    if (b.table->synchronize)
      if (Status st = b.table->synchronize(b.context); !st) return st;
  return Status::ok();
}

}  // namespace

Status execute_session(SessionImpl* s, const Inputs& in, const OpObserver* observer) {
  s->batch = in.batch;
  s->seq = in.seq;
  s->src_mask_per_sequence = in.src_mask_shape == SrcMaskShape::kBatchSeqSeq;
  if (Status st = choose_layout(s, in, observer != nullptr); !st) return st;
  bind_inputs(s, in);
  if (observer) {
    if (Status st = run_observed(s, *observer); !st) return st;
  } else {
    for (const Segment& seg : s->segments)
      if (Status st = run_segment(s, seg); !st) return st;
  }
  if (Status st = expand_device_token_outputs(s); !st) return st;
  if (Status st = synchronize_backends(s); !st) return st;
  expand_host_token_outputs(s);
  return Status::ok();
}

}  // namespace encrt::detail
