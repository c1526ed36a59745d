// A session: the model's graph placed on backends, one planned arena per memory, the backends'
// prepared state, and the bindings (every buffer's address) that run() hands to them.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "encrt/encrt.hpp"
#include "model/model_impl.h"
#include "plan/arena_planner.h"
#include "plan/graph.h"
#include "plan/placement.h"
#include "plan/token_layout.h"

namespace encrt::detail {

// One backend of the session. Slot 0 is always the CPU backend (the fallback).
struct BackendSlot {
  const backend::BackendInterface* table = nullptr;
  void* context = nullptr;
  int memory = plan::kHostMemory;
  std::vector<int> ops;  // the ops placed on it
  backend::HeldBytes held;
};

// One memory space and its arena. Memory 0 is the host's, shared by every host backend.
struct MemorySpace {
  std::string name;  // "host", or the device backend's name
  int owner = -1;    // the backend slot that allocates it; -1: the host, allocated by the session
  plan::ArenaPlan plan;
  unsigned char* base = nullptr;
  bool owned = false;  // allocated by the session (freed with it)
};

// Consecutive ops of one backend: one run() call.
struct Segment {
  int backend = 0;
  int first = 0;
  int count = 0;
};

struct SessionImpl {
  const ModelImpl* model = nullptr;
  SessionOptions options;
  plan::Graph graph;
  plan::Placement placement;
  std::vector<BackendSlot> backends;
  std::vector<MemorySpace> memories;
  std::vector<int> op_index;  // 0, 1, 2, ...: RunArgs::ops points into it
  std::vector<Segment> segments;
  std::vector<void*> bindings;  // by buffer id; inputs are bound at each run
  std::vector<PlannedBuffer> planned;
  size_t intermediates_total = 0;
  std::vector<OpProfile> profile;   // one per op, names fixed at creation
  std::vector<double> profile_ms;   // per op, filled by a profiled run
  // The model's int8 linears run as fp16 ones (a backend asked: dequantizes_int8_linears).
  bool dequantized_int8 = false;
  // Under auto, why the device backend was left out and the session built on the CPU alone
  // (build_session); empty otherwise.
  std::string auto_fallback;

  // Packed runs (SessionOptions::padding): whether this session can run them (else why not),
  // whether the model reads each sequence's first token, the token-level outputs the core
  // expands to [batch, seq] after a packed run, and the layout's arrays, sized at creation.
  bool can_pack = false;
  std::string cannot_pack;
  bool reads_first_token = false;
  std::vector<int> token_outputs;
  std::vector<int32_t> pack_offsets;  // [max_batch + 1]
  std::vector<int32_t> pack_source;   // [max_batch * max_seq]
  plan::TokenLayout layout;

  // State of the current / last run.
  int batch = 0;
  int seq = 0;
  bool src_mask_per_sequence = false;  // this run's src mask is [batch, seq, seq]
  bool packed = false;                 // this run computes the real tokens only (`layout`)
  bool has_output = false;

  SessionImpl() = default;
  SessionImpl(const SessionImpl&) = delete;
  SessionImpl& operator=(const SessionImpl&) = delete;
  ~SessionImpl();

  backend::RunArgs run_args(int first_op, int count) const;
};

// Places the graph for `options` (already checked) on its backends and plans every memory's
// arena. With `prepare`, also allocates the arenas and prepares the backends.
Status build_session(const ModelImpl& model, const SessionOptions& options, bool prepare, SessionImpl* session);

// Binds the caller's arrays and runs every segment; `observer` (may be null) sees each op.
Status execute_session(SessionImpl* session, const Inputs& inputs, const OpObserver* observer);

}  // namespace encrt::detail

namespace encrt {
struct Session::Impl : detail::SessionImpl {};
}  // namespace encrt
