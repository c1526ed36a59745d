#include "plan/lifetimes.h"

#include <algorithm>

namespace encrt::plan {

std::vector<Lifetime> buffer_lifetimes(const Graph& graph) {
  std::vector<Lifetime> life(graph.buffers.size());
  auto touch = [&](int buffer, int op) {
    if (buffer < 0) return;
    Lifetime& t = life[static_cast<size_t>(buffer)];
    if (t.first_op < 0) t.first_op = op;
    t.last_op = std::max(t.last_op, op);
  };
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    const Op& op = graph.ops[static_cast<size_t>(i)];
    for (int b : op.inputs) touch(b, i);
    for (int b : op.outputs) touch(b, i);
    touch(op.scratch, i);
  }
  const int end = static_cast<int>(graph.ops.size()) - 1;
  for (const NamedTensor& t : graph.outputs)
    if (t.buffer >= 0 && life[static_cast<size_t>(t.buffer)].first_op >= 0) life[static_cast<size_t>(t.buffer)].last_op = end;
  return life;
}

}  // namespace encrt::plan
