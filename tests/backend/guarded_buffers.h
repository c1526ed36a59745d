// Every buffer of a graph in its own allocation, in the memory of the backend that owns it (the
// host's, or a device backend's through its alloc_arena / copies), with kGuard sentinel bytes
// before and after. A kernel that writes outside its buffer, or past the rows of the run, changes
// sentinel bytes, which check() reports.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"

namespace encrt::conformance {

// Who allocates and copies a memory: null table = the host (std::aligned_alloc, memcpy).
struct MemoryOwner {
  const backend::BackendInterface* table = nullptr;
  void* context = nullptr;
};

class GuardedBuffers {
 public:
  static constexpr size_t kGuard = 256;

  // Allocates every buffer of `graph` (arena and input buffers alike) in the memory
  // owners[buffer.memory], max_bytes + pad_bytes each, all filled with the sentinel pattern.
  GuardedBuffers(const plan::Graph& graph, std::vector<MemoryOwner> owners);
  ~GuardedBuffers();
  GuardedBuffers(const GuardedBuffers&) = delete;
  GuardedBuffers& operator=(const GuardedBuffers&) = delete;

  const Status& status() const { return status_; }  // allocation or copy failures
  void* const* bindings() const { return bindings_.data(); }
  size_t size(int b) const { return sizes_[static_cast<size_t>(b)]; }
  // Binds buffer b to null (an absent optional input); its memory keeps its sentinels.
  void unbind(int b) { bindings_[static_cast<size_t>(b)] = nullptr; }

  Status write(int b, const void* src, size_t bytes);
  Status read(int b, void* dst, size_t bytes) const;
  // Problems of buffer b, "" when none: sentinel bytes changed in its guards, or in its data
  // from byte `untouched_from` on (size(b) for none).
  std::string check(int b, size_t untouched_from) const;

 private:
  Status copy_out(int b, size_t offset, void* dst, size_t bytes) const;

  const plan::Graph& graph_;
  std::vector<MemoryOwner> owners_;
  std::vector<unsigned char*> bases_;  // allocation starts (kGuard before the binding)
  std::vector<void*> bindings_;
  std::vector<size_t> sizes_;
  Status status_;
};

// The sentinel byte at position i of an allocation (a pattern, so that no constant fill hides).
inline unsigned char sentinel(size_t i) { return static_cast<unsigned char>(0xa5 ^ (i * 37)); }

}  // namespace encrt::conformance
