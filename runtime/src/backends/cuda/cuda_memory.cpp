#include "backends/cuda/cuda_memory.h"

#include <atomic>

namespace encrt::cuda {

namespace {
std::atomic<long> g_device_allocations{0}, g_device_frees{0}, g_pinned_allocations{0}, g_pinned_frees{0};
}  // namespace

AllocationCounts allocation_counts() {
  return {g_device_allocations.load(), g_device_frees.load(), g_pinned_allocations.load(), g_pinned_frees.load()};
}

cudaError_t device_alloc(void** p, size_t bytes) {
  g_device_allocations.fetch_add(1);
  return cudaMalloc(p, bytes);
}

void device_free(void* p) {
  if (!p) return;
  g_device_frees.fetch_add(1);
  cudaFree(p);
}

cudaError_t pinned_alloc(void** p, size_t bytes) {
  g_pinned_allocations.fetch_add(1);
  return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}

void pinned_free(void* p) {
  if (!p) return;
  g_pinned_frees.fetch_add(1);
  cudaFreeHost(p);
}

}  // namespace encrt::cuda
