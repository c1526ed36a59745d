// A session: the model's graph bound to a planned arena, a kernel table and a thread pool.
#pragma once

#include <cstdlib>
#include <memory>
#include <vector>

#include "encrt/encrt.hpp"
#include "kernels/kernel_table.h"
#include "model/model_impl.h"
#include "plan/arena_planner.h"
#include "plan/graph.h"
#include "session/thread_pool.h"

namespace encrt::detail {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct SessionImpl {
  const ModelImpl* model = nullptr;
  SessionOptions options;
  const kernels::KernelTable* kernels = nullptr;
  plan::Graph graph;
  plan::ArenaPlan arena_plan;
  std::vector<PlannedBuffer> planned;
  size_t intermediates_total = 0;
  std::unique_ptr<unsigned char, FreeDeleter> owned_arena;
  unsigned char* arena = nullptr;
  std::unique_ptr<ThreadPool> pool;
  std::vector<OpProfile> profile;  // one per op, names fixed at creation

  // State of the current / last run.
  int batch = 0;
  int seq = 0;
  bool has_output = false;
  const int32_t* ids = nullptr;
  const int32_t* mask = nullptr;
  const int32_t* token_types = nullptr;
  const OpObserver* observer = nullptr;  // set only for the duration of an observed run

  template <typename T>
  T* buffer(int id) const {
    return reinterpret_cast<T*>(arena + arena_plan.offsets[static_cast<size_t>(id)]);
  }
  int rows(plan::RowsOf r) const { return r == plan::RowsOf::kSequences ? batch : batch * seq; }
};

// Builds the graph and arena plan for `options` (validated by the caller).
Status plan_session(const ModelImpl& model, const SessionOptions& options, const kernels::KernelTable& kernels,
                    SessionImpl* impl);
// Executes every op of the graph for the inputs already stored in `impl`.
void execute_graph(SessionImpl* impl);

}  // namespace encrt::detail
