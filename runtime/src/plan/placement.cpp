#include "plan/placement.h"

#include <algorithm>

namespace encrt::plan {

namespace {

class CopyInserter {
 public:
  CopyInserter(Graph* g, Placement* p) : g_(*g), p_(*p) {
    memories_ = 1;
    for (int m : p_.backend_memory) memories_ = std::max(memories_, m + 1);
    logical_ = static_cast<int>(g_.buffers.size());
    instance_.assign(static_cast<size_t>(logical_) * memories_, -1);
    valid_.assign(instance_.size(), false);
    for (int b = 0; b < logical_; ++b) {
      if (g_.buffers[static_cast<size_t>(b)].storage == Storage::kInput) {
        at(instance_, b, kHostMemory) = b;
        at(valid_, b, kHostMemory) = true;
      }
    }
    // The backend that performs copies into and out of each device memory: its first user.
    owner_.assign(static_cast<size_t>(memories_), -1);
    for (size_t b = 0; b < p_.backend_memory.size(); ++b)
      if (owner_[static_cast<size_t>(p_.backend_memory[b])] < 0) owner_[static_cast<size_t>(p_.backend_memory[b])] = static_cast<int>(b);
  }

  void run() {
    std::vector<Op> ops = std::move(g_.ops);
    std::vector<int> backends = std::move(p_.op_backend);
    g_.ops.clear();
    p_.op_backend.clear();
    for (size_t i = 0; i < ops.size(); ++i) {
      Op op = std::move(ops[i]);
      const int backend = backends[i];
      const int m = p_.backend_memory[static_cast<size_t>(backend)];
      for (int& b : op.inputs)
        if (b >= 0) b = readable(logical(b), m);
      for (int& b : op.outputs)
        if (b >= 0) b = written(logical(b), m);
      emit(std::move(op), backend);
    }
    for (NamedTensor& t : g_.outputs) {
      const int b = logical(t.buffer);
      if (at(valid_, b, kHostMemory)) {
        t.buffer = at(instance_, b, kHostMemory);
        continue;
      }
      for (int m = 0; m < memories_; ++m)
        if (at(valid_, b, m)) t.buffer = at(instance_, b, m);
    }
  }

 private:
  template <typename T>
  typename std::vector<T>::reference at(std::vector<T>& v, int b, int m) {
    return v[static_cast<size_t>(b) * memories_ + m];
  }
  int logical(int b) const {
    const BufferSpec& s = g_.buffers[static_cast<size_t>(b)];
    return s.mirror_of >= 0 ? s.mirror_of : b;
  }

  // The buffer holding b in memory m, created on first use: the buffer itself when m is the
  // first memory it is used in (its home), else a mirror.
  int instance(int b, int m) {
    int& id = at(instance_, b, m);
    if (id >= 0) return id;
    bool used = false;
    for (int k = 0; k < memories_; ++k) used = used || at(instance_, b, k) >= 0;
    if (!used) {
      g_.buffers[static_cast<size_t>(b)].memory = m;
      return id = b;
    }
    BufferSpec mirror = g_.buffers[static_cast<size_t>(b)];
    mirror.name += "@memory" + std::to_string(m);
    mirror.storage = Storage::kArena;
    mirror.memory = m;
    mirror.mirror_of = b;
    const int mid = g_.add_buffer(std::move(mirror));
    at(instance_, b, m) = mid;  // (g_.buffers grew; instance_ did not move)
    return mid;
  }

  // Makes b's latest value readable in memory m, copying it there if needed.
  int readable(int b, int m) {
    if (at(valid_, b, m)) return at(instance_, b, m);
    int from = -1;
    for (int k = 0; k < memories_ && from < 0; ++k)
      if (at(valid_, b, k)) from = k;
    if (from < 0) return instance(b, m);  // never written: nothing to copy (the graph reads it first)
    if (from != kHostMemory && m != kHostMemory) {
      copy(b, from, kHostMemory);  // device to device goes through the host
      from = kHostMemory;
    }
    copy(b, from, m);
    return at(instance_, b, m);
  }

  int written(int b, int m) {
    const int id = instance(b, m);
    for (int k = 0; k < memories_; ++k) at(valid_, b, k) = false;
    at(valid_, b, m) = true;
    return id;
  }

  void copy(int b, int from, int to) {
    const int src = at(instance_, b, from);
    const int dst = instance(b, to);
    Op op;
    op.kind = OpKind::kCopy;
    op.label = "copy." + g_.buffers[static_cast<size_t>(b)].name + ".to_memory" + std::to_string(to);
    op.inputs = {src};
    op.outputs = {dst};
    op.params = CopyParams{from, to};
    emit(std::move(op), owner_[static_cast<size_t>(to != kHostMemory ? to : from)]);
    at(valid_, b, to) = true;
  }

  void emit(Op op, int backend) {
    g_.ops.push_back(std::move(op));
    p_.op_backend.push_back(backend);
  }

  Graph& g_;
  Placement& p_;
  int memories_ = 1;
  int logical_ = 0;
  std::vector<int> instance_;  // [logical buffer][memory] -> buffer id, or -1
  std::vector<bool> valid_;    // [logical buffer][memory] -> holds the latest value
  std::vector<int> owner_;     // memory -> the backend that copies into and out of it
};

}  // namespace

void insert_copies(Graph* graph, Placement* placement) { CopyInserter(graph, placement).run(); }

}  // namespace encrt::plan
