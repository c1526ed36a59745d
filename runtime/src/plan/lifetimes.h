// Each buffer's lifetime, derived from the ops' input, output and scratch lists: [the first op
// that touches it, the last op that does]; named outputs stay alive to the end.
#pragma once

#include <vector>

#include "plan/graph.h"

namespace encrt::plan {

struct Lifetime {
  int first_op = -1;  // -1: no op touches the buffer
  int last_op = -1;
};

std::vector<Lifetime> buffer_lifetimes(const Graph& graph);

}  // namespace encrt::plan
