#include "backends/cuda/cuda_host_mapping.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "backends/cuda/cuda_status.h"

namespace encrt::cuda {

namespace {

struct Registration {
  size_t bytes = 0;
  const unsigned char* device_base = nullptr;
  int holders = 0;
};

std::mutex g_mutex;
std::map<const unsigned char*, Registration>& registrations() {
  static std::map<const unsigned char*, Registration> r;
  return r;
}

}  // namespace

Status HostMapping::map(int device, const void* data, size_t bytes) {
  if (base_) return internal_error("cuda: the model's bytes are already mapped by this session");
  if (!data || bytes == 0) return invalid_argument("cuda: weights=mapped: the model has no bytes to map");
  // Only where the GPU shares DRAM with the CPU (Jetson): on a discrete GPU every read of a mapped
  // table crosses the bus. (On the one discrete GPU it was tried on, an H200 VM, registering the
  // model's file mapping never returned, its time all in the kernel: the probe of 2026-12-04,
  // scripts/host_register_probe.py, found that so for a private file mapping only, 0.1 s for a
  // shared one, and model/mapped_file.cpp now maps files shared; a caller's own buffer may still
  // be a private file mapping.)
  int integrated = 0;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, device), "cudaDeviceGetAttribute");
      !s)
    return s;
  if (!integrated)
    return unsupported("cuda: weights=mapped is for GPUs that share memory with the CPU (cudaDevAttrIntegrated, as on "
                       "Jetson); this GPU is discrete (its reads of the mapped file would cross the bus): use weights=device");
  int can_map = 0, read_only = 0;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device), "cudaDeviceGetAttribute");
      !s)
    return s;
  if (Status s = cuda_status(cudaDeviceGetAttribute(&read_only, cudaDevAttrHostRegisterReadOnlySupported, device),
                             "cudaDeviceGetAttribute");
      !s)
    return s;
  // The file is mapped read-only, so the pages can only be registered as read-only.
  if (!can_map || !read_only)
    return unsupported("cuda: weights=mapped needs a device that maps host memory read-only "
                       "(cudaDevAttrCanMapHostMemory, cudaDevAttrHostRegisterReadOnlySupported); this one does not: use weights=device");
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(data) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes + page - 1) / page * page;
  const auto* base = reinterpret_cast<const unsigned char*>(first);
  const size_t span = static_cast<size_t>(end - first);

  std::lock_guard<std::mutex> lock(g_mutex);
  auto& all = registrations();
  auto it = all.find(base);
  if (it != all.end() && it->second.bytes != span)
    return unsupported("cuda: weights=mapped: another session mapped an overlapping range of a different size");
  if (it == all.end()) {
    void* host = const_cast<unsigned char*>(base);
    if (Status s = cuda_status(cudaHostRegister(host, span, cudaHostRegisterMapped | cudaHostRegisterReadOnly),
                               "cudaHostRegister (weights=mapped)");
        !s)
      return s;
    void* dev = nullptr;
    if (Status s = cuda_status(cudaHostGetDevicePointer(&dev, host, 0), "cudaHostGetDevicePointer"); !s) {
      cudaHostUnregister(host);
      return s;
    }
    it = all.emplace(base, Registration{span, static_cast<const unsigned char*>(dev), 0}).first;
  }
  ++it->second.holders;
  base_ = base;
  device_base_ = it->second.device_base;
  bytes_ = span;
  return Status::ok();
}

const void* HostMapping::device_address(const void* host) const {
  const auto* p = static_cast<const unsigned char*>(host);
  if (!base_ || p < base_ || p >= base_ + bytes_) return nullptr;
  return device_base_ + (p - base_);
}

HostMapping::~HostMapping() {
  if (!base_) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& all = registrations();
  auto it = all.find(base_);
  if (it == all.end()) return;
  if (--it->second.holders == 0) {
    cudaHostUnregister(const_cast<unsigned char*>(base_));
    all.erase(it);
  }
}

}  // namespace encrt::cuda
