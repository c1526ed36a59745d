#include "plan/arena_planner.h"

#include <algorithm>
#include <numeric>

namespace encrt::plan {

namespace {
size_t round_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }
bool lifetimes_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first_op <= b.last_op && b.first_op <= a.last_op;
}
}  // namespace

ArenaPlan plan_arena(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  auto aligned = [alignment](size_t n) { return round_up(n, alignment); };
  ArenaPlan plan;
  plan.alignment = alignment;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (aligned(buffers[a].size) != aligned(buffers[b].size)) return aligned(buffers[a].size) > aligned(buffers[b].size);
    return buffers[a].first_op < buffers[b].first_op;
  });

  std::vector<size_t> placed;  // indices already placed
  std::vector<std::pair<size_t, size_t>> conflicts;  // [begin, end) in memory of live-overlapping buffers
  for (size_t idx : order) {
    const size_t size = aligned(buffers[idx].size);
    conflicts.clear();
    for (size_t p : placed)
      if (lifetimes_overlap(buffers[idx], buffers[p]))
        conflicts.emplace_back(plan.offsets[p], plan.offsets[p] + aligned(buffers[p].size));
    std::sort(conflicts.begin(), conflicts.end());
    size_t candidate = 0;
    for (const auto& [begin, end] : conflicts) {
      if (candidate + size <= begin) break;   // fits in the gap before this one
      candidate = std::max(candidate, end);
    }
    plan.offsets[idx] = candidate;
    plan.arena_size = std::max(plan.arena_size, candidate + size);
    placed.push_back(idx);
  }
  return plan;
}

size_t arena_lower_bound(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  auto aligned = [alignment](size_t n) { return round_up(n, alignment); };
  int last = 0;
  for (const auto& b : buffers) last = std::max(last, b.last_op);
  size_t best = 0;
  for (int op = 0; op <= last; ++op) {
    size_t alive = 0;
    for (const auto& b : buffers)
      if (b.first_op <= op && op <= b.last_op) alive += aligned(b.size);
    best = std::max(best, alive);
  }
  return best;
}

}  // namespace encrt::plan
