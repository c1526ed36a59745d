// Captured CUDA graphs, one per (segment, batch, seq, which optional inputs are absent, the row
// bucket of a packed run): the
// first run of a shape captures its ops into a graph, later runs of that shape replay it. A small
// cache, least recently used out first; its slots are reserved at creation, so a replay or an
// insertion allocates nothing on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace encrt::cuda {

struct GraphKey {
  int first_op = 0;
  int op_count = 0;
  int batch = 0;
  int seq = 0;
  uint32_t absent_inputs = 0;  // bit i: the segment's i-th input copy has no source (a null mask...)
  int packed_rows = -1;        // a packed run: the rows its row-wise ops run on (the bucket); -1: padded
  bool operator==(const GraphKey& o) const {
    return first_op == o.first_op && op_count == o.op_count && batch == o.batch && seq == o.seq &&
           absent_inputs == o.absent_inputs && packed_rows == o.packed_rows;
  }
};

class GraphCache {
 public:
  explicit GraphCache(size_t capacity);
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // The graph for `key`, or null.
  cudaGraphExec_t find(const GraphKey& key);
  // Takes ownership of `exec`; evicts (destroys) the least recently used graph when full.
  void insert(const GraphKey& key, cudaGraphExec_t exec);
  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    GraphKey key;
    cudaGraphExec_t exec;
    uint64_t used;
  };
  std::vector<Entry> entries_;
  size_t capacity_;
  uint64_t clock_ = 0;
};

}  // namespace encrt::cuda
