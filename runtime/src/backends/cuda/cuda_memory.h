// Every device and pinned-host allocation of the cuda backend goes through here and is counted,
// so that a test can show that run() allocates nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace encrt::cuda {

struct AllocationCounts {
  long device_allocations = 0;
  long device_frees = 0;
  long pinned_allocations = 0;
  long pinned_frees = 0;
};
// Totals over the process's life.
AllocationCounts allocation_counts();

cudaError_t device_alloc(void** p, size_t bytes);
void device_free(void* p);  // null is a no-op
cudaError_t pinned_alloc(void** p, size_t bytes);
void pinned_free(void* p);  // null is a no-op

}  // namespace encrt::cuda
