// The model's bytes (its file's read-only mapping, or the caller's buffer) made readable by the
// GPU where they lie: for GPUs that share the host's memory (Jetson), so that tensors the GPU
// takes as they are stored need no second copy in device memory (the cuda backend's
// weights=mapped option). One registration per range for the whole process, counted, since
// CUDA refuses to register the same pages twice and several sessions share one model.
#pragma once

#include <cstddef>

#include "encrt/status.hpp"

namespace encrt::cuda {

class HostMapping {
 public:
  HostMapping() = default;
  HostMapping(const HostMapping&) = delete;
  HostMapping& operator=(const HostMapping&) = delete;
  ~HostMapping();  // releases the registration (the last holder unregisters the pages)

  // Registers [data, data + bytes) (widened to whole pages) read-only and mapped for `device`,
  // or shares the registration another holder made of the same range.
  Status map(int device, const void* data, size_t bytes);
  bool mapped() const { return base_ != nullptr; }
  // The device address of a host address inside the mapped range.
  const void* device_address(const void* host) const;

 private:
  const unsigned char* base_ = nullptr;  // page-aligned start of the registered range
  const unsigned char* device_base_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace encrt::cuda
