// Placement: every op runs on one backend, and every buffer an op touches must live in that
// backend's memory. Given each op's backend and each backend's memory space, insert_copies()
// rewrites the graph so that this holds: a buffer read in a memory where its latest value is not
// gets a mirror there and a kCopy op just before the read; a write makes the other memories'
// copies stale. Copies between two device memories go through the host.
#pragma once

#include <vector>

#include "plan/graph.h"

namespace encrt::plan {

struct Placement {
  std::vector<int> op_backend;      // per op of the (rewritten) graph: an index into the backends
  std::vector<int> backend_memory;  // per backend: its memory space (kHostMemory, or a device's)
};

// `placement.op_backend` has one entry per op of `graph` on entry; on return both are rewritten
// (copies inserted, each placed on the backend of its device side). Named outputs then refer
// to the buffer holding their final value (on the host when it is valid there).
void insert_copies(Graph* graph, Placement* placement);

}  // namespace encrt::plan
