#include "backends/cuda/cuda_graph_cache.h"

namespace encrt::cuda {

GraphCache::GraphCache(size_t capacity) : capacity_(capacity) { entries_.reserve(capacity); }

GraphCache::~GraphCache() {
  for (Entry& e : entries_) cudaGraphExecDestroy(e.exec);
}

cudaGraphExec_t GraphCache::find(const GraphKey& key) {
  for (Entry& e : entries_) {
    if (!(e.key == key)) continue;
    e.used = ++clock_;
    return e.exec;
  }
  return nullptr;
}

void GraphCache::insert(const GraphKey& key, cudaGraphExec_t exec) {
  if (entries_.size() < capacity_) {
    entries_.push_back({key, exec, ++clock_});
    return;
  }
  Entry* oldest = &entries_[0];
  for (Entry& e : entries_)
    if (e.used < oldest->used) oldest = &e;
  cudaGraphExecDestroy(oldest->exec);
  *oldest = {key, exec, ++clock_};
}

}  // namespace encrt::cuda
