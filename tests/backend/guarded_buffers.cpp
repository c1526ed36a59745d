#include "backend/guarded_buffers.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace encrt::conformance {

namespace {
size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }
}  // namespace

GuardedBuffers::GuardedBuffers(const plan::Graph& graph, std::vector<MemoryOwner> owners)
    : graph_(graph), owners_(std::move(owners)) {
  const size_t n = graph.buffers.size();
  bases_.assign(n, nullptr);
  bindings_.assign(n, nullptr);
  sizes_.assign(n, 0);
  for (size_t b = 0; b < n; ++b) {
    const plan::BufferSpec& spec = graph.buffers[b];
    sizes_[b] = spec.max_bytes + spec.pad_bytes;
    const size_t total = round_up(2 * kGuard + sizes_[b], kGuard);
    std::vector<unsigned char> pattern(total);
    for (size_t i = 0; i < total; ++i) pattern[i] = sentinel(i);
    const MemoryOwner& owner = owners_[static_cast<size_t>(spec.memory)];
    void* p = nullptr;
    if (owner.table) {
      status_ = owner.table->alloc_arena(owner.context, total, &p);
      if (status_.is_ok()) status_ = owner.table->copy_from_host(owner.context, p, pattern.data(), total);
      if (status_.is_ok() && owner.table->synchronize) status_ = owner.table->synchronize(owner.context);
    } else {
      p = std::aligned_alloc(kGuard, total);
      if (p) std::memcpy(p, pattern.data(), total);
      else status_ = out_of_memory("conformance: cannot allocate " + std::to_string(total) + " bytes");
    }
    if (!status_.is_ok()) return;
    bases_[b] = static_cast<unsigned char*>(p);
    bindings_[b] = bases_[b] + kGuard;
  }
}

GuardedBuffers::~GuardedBuffers() {
  for (size_t b = 0; b < bases_.size(); ++b) {
    if (!bases_[b]) continue;
    const MemoryOwner& owner = owners_[static_cast<size_t>(graph_.buffers[b].memory)];
    if (owner.table)
      owner.table->free_arena(owner.context, bases_[b]);
    else
      std::free(bases_[b]);
  }
}

Status GuardedBuffers::write(int b, const void* src, size_t bytes) {
  const MemoryOwner& owner = owners_[static_cast<size_t>(graph_.buffers[static_cast<size_t>(b)].memory)];
  void* dst = bases_[static_cast<size_t>(b)] + kGuard;
  if (!owner.table) {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  if (Status s = owner.table->copy_from_host(owner.context, dst, src, bytes); !s) return s;
  return owner.table->synchronize ? owner.table->synchronize(owner.context) : Status::ok();
}

Status GuardedBuffers::copy_out(int b, size_t offset, void* dst, size_t bytes) const {
  const MemoryOwner& owner = owners_[static_cast<size_t>(graph_.buffers[static_cast<size_t>(b)].memory)];
  const unsigned char* src = bases_[static_cast<size_t>(b)] + offset;
  if (!owner.table) {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  if (Status s = owner.table->copy_to_host(owner.context, dst, src, bytes); !s) return s;
  return owner.table->synchronize ? owner.table->synchronize(owner.context) : Status::ok();
}

Status GuardedBuffers::read(int b, void* dst, size_t bytes) const { return copy_out(b, kGuard, dst, bytes); }

std::string GuardedBuffers::check(int b, size_t untouched_from) const {
  const size_t size = sizes_[static_cast<size_t>(b)];
  const size_t total = round_up(2 * kGuard + size, kGuard);
  std::vector<unsigned char> all(total);
  if (Status s = copy_out(b, 0, all.data(), total); !s) return "cannot read back: " + s.to_string();
  size_t before = 0, data = 0, after = 0;
  for (size_t i = 0; i < total; ++i) {
    if (all[i] == sentinel(i)) continue;
    if (i < kGuard) ++before;
    else if (i < kGuard + size) data += i >= kGuard + untouched_from ? 1 : 0;
    else ++after;
  }
  if (!before && !data && !after) return "";
  std::ostringstream s;
  s << "buffer '" << graph_.buffers[static_cast<size_t>(b)].name << "': " << before << " guard bytes before, " << after
    << " guard bytes after, " << data << " bytes past the run's " << untouched_from << " changed";
  return s.str();
}

}  // namespace encrt::conformance
