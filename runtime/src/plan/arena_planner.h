// Static arena planning: every intermediate buffer gets a fixed offset in one arena, chosen once
// per session from the buffers' sizes and lifetimes (the index of the first and last op that
// touches them). Two buffers may share memory only if their lifetimes do not overlap.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace encrt::plan {

// The host arena's alignment (a cache line, and every SIMD load's). Device memories set their own.
constexpr size_t kArenaAlignment = 64;

struct BufferLifetime {
  size_t size = 0;     // bytes (rounded up to the alignment by the planner)
  int first_op = 0;    // inclusive
  int last_op = 0;     // inclusive
};

struct ArenaPlan {
  std::vector<size_t> offsets;  // one per buffer, in the order given
  size_t arena_size = 0;        // bytes, a multiple of the alignment
  size_t alignment = kArenaAlignment;
};

// Greedy by size, as in TFLite Micro's greedy planner:
//   1. Sort buffers by size, largest first (ties: earlier first_op first, then index).
//   2. Place each buffer at the lowest offset where it overlaps in memory no already-placed
//      buffer whose lifetime overlaps its own. Candidate offsets are 0 and the end of every
//      such conflicting buffer, tried in increasing order.
// Large buffers placed first leave gaps that the many small ones fill. The result is not
// optimal in general (the problem is NP-hard) but is deterministic and within a few percent of
// the lower bound (the largest sum of sizes alive at one op) on encoder graphs.
// Every offset and size is a multiple of `alignment` (a power of two).
ArenaPlan plan_arena(const std::vector<BufferLifetime>& buffers, size_t alignment = kArenaAlignment);

// The lower bound on any plan: the largest total size of buffers alive at the same op.
size_t arena_lower_bound(const std::vector<BufferLifetime>& buffers, size_t alignment = kArenaAlignment);

}  // namespace encrt::plan
