// The CUDA runtime functions the cuda backend calls, implemented for the emulated GPU
// (emulated_device.h: what it is and which of CUDA's rules it keeps). A program linked with this
// file instead of libcudart runs the backend's kernels on warp_emulation.h's fibers.
#include "cuda_emulation/device/emulated_device.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENCRT_EMULATED_GPU_ASAN 1
#endif
#endif
#if !defined(ENCRT_EMULATED_GPU_ASAN) && defined(__SANITIZE_ADDRESS__)
#define ENCRT_EMULATED_GPU_ASAN 1
#endif
#if ENCRT_EMULATED_GPU_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "cuda_emulation/warp_emulation.h"
#undef blockDim  // the kernels' (warp_emulation.h), not cudaLaunchConfig_t's member, which this file reads

// The runtime's opaque handles are this file's objects.
struct CUstream_st {
  bool capturing = false;
  long invalidations_at_begin = 0;  // Device::invalidations when the capture began
  std::vector<std::function<void()>> captured;
};
struct CUevent_st {
  bool recorded = false;
  double seconds = 0;
};
struct CUgraph_st {
  std::vector<std::function<void()>> work;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

namespace encrt::emulation::device {

namespace {

constexpr int kMultiprocessors = 132;
constexpr int kSharedPerBlockDefault = 48 * 1024;
constexpr int kSharedPerBlockOptin = 227 * 1024;
constexpr int kSharedPerMultiprocessor = 228 * 1024;
constexpr size_t kDeviceMemory = size_t{16} << 30;
constexpr size_t kAlignment = 256;

enum class Memory { kDevice, kPinnedHost, kRegisteredHost };

struct Allocation {
  size_t bytes;
  Memory kind;
};

struct KernelAttributes {
  int max_dynamic_shared = kSharedPerBlockDefault;
  bool non_portable_clusters = false;
};

struct Device {
  std::recursive_mutex mutex;  // one piece of work at a time: one GPU
  std::map<const unsigned char*, Allocation> allocations;
  std::map<const void*, KernelAttributes> kernels;
  int capturing_streams = 0;
  size_t device_bytes = 0;  // allocated with cudaMalloc
  long invalidations = 0;  // calls a capture forbids, made while one was under way
  CUstream_st default_stream;
  Counters counters;
};

Device& device() {
  static Device d;
  return d;
}

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t fail(cudaError_t e) {
  last_error = e;
  return e;
}

bool integrated() {
  const char* v = std::getenv("ENCRT_EMULATED_GPU_INTEGRATED");
  return v && std::strcmp(v, "1") == 0;
}

// The device's compute capability as major * 10 + minor: 90, or ENCRT_EMULATED_GPU_ARCH (72 for a
// Xavier, say). The kernels here are "built" for 90 only: on any other, none loads.
int arch() {
  const char* v = std::getenv("ENCRT_EMULATED_GPU_ARCH");
  return v && *v ? std::atoi(v) : 90;
}
bool kernels_load() { return arch() == 90; }

// Device memory: kDeviceMemory, or ENCRT_EMULATED_GPU_MEMORY bytes.
size_t memory_bytes() {
  const char* v = std::getenv("ENCRT_EMULATED_GPU_MEMORY");
  return v && *v ? static_cast<size_t>(std::strtoull(v, nullptr, 10)) : kDeviceMemory;
}

CUstream_st* stream_of(cudaStream_t s) { return s ? s : &device().default_stream; }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `work` now, or records it while the stream is captured.
cudaError_t submit(cudaStream_t stream, std::function<void()> work) {
  Device& d = device();
  std::lock_guard<std::recursive_mutex> lock(d.mutex);
  CUstream_st* s = stream_of(stream);
  if (s->capturing) {
    s->captured.push_back(std::move(work));
    return cudaSuccess;
  }
  work();
  return cudaSuccess;
}

// An allocation, freeing or synchronization while a capture is under way (global mode): the error,
// and every capture under way is invalidated.
bool refused_during_capture() {
  Device& d = device();
  if (d.capturing_streams == 0) return false;
  ++d.invalidations;  // every capture under way ends invalidated
  std::fprintf(stderr, "emulated GPU: a call that a stream capture forbids was made while one is under way\n");
  return true;
}

// The allocation [p, p + bytes) lies in, or null.
const Allocation* allocation_of(const void* p, size_t bytes) {
  Device& d = device();
  const auto* q = static_cast<const unsigned char*>(p);
  auto it = d.allocations.upper_bound(q);
  if (it == d.allocations.begin()) return nullptr;
  --it;
  if (q < it->first || q + bytes > it->first + it->second.bytes) return nullptr;
  return &it->second;
}

// The heap block behind an allocation of `bytes`: rounded up to kAlignment, as cudaMalloc rounds.
size_t block_bytes(size_t bytes) {
  return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

void* allocate(size_t bytes, Memory kind) {
  const size_t block = block_bytes(bytes);
  void* p = std::aligned_alloc(kAlignment, block);
  if (!p) return nullptr;
  std::memset(p, 0xff, block);  // NaN in fp16 and fp32: nothing is promised
#if ENCRT_EMULATED_GPU_ASAN
  // Under AddressSanitizer the bytes past the requested size (the rounding to kAlignment) are
  // poisoned, so a kernel or copy that reads or writes past a buffer's end is reported even inside
  // the rounding a real cudaMalloc would hide.
  ASAN_POISON_MEMORY_REGION(static_cast<unsigned char*>(p) + bytes, block - bytes);
#endif
  device().allocations[static_cast<const unsigned char*>(p)] = Allocation{bytes, kind};
  return p;
}

cudaError_t release(void* p, Memory kind) {
  if (!p) return cudaSuccess;
  Device& d = device();
  auto it = d.allocations.find(static_cast<const unsigned char*>(p));
  if (it == d.allocations.end() || it->second.kind != kind) return fail(cudaErrorInvalidValue);
  if (kind == Memory::kDevice) d.device_bytes -= it->second.bytes;
#if ENCRT_EMULATED_GPU_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, block_bytes(it->second.bytes));
#endif
  d.allocations.erase(it);
  std::free(p);
  return cudaSuccess;
}

// Blocks of `threads` threads with `shared` bytes of dynamic shared memory that fit on one
// multiprocessor by threads and shared memory (registers are not known here).
int resident_blocks(int threads, size_t shared) {
  if (threads <= 0 || threads > 1024) return 0;
  int blocks = std::min(32, 2048 / threads);
  const size_t per_block = shared + 1024;  // the 1 KB a block's shared memory reserves
  blocks = std::min<int>(blocks, static_cast<int>(kSharedPerMultiprocessor / per_block));
  return blocks;
}

unsigned cluster_of(const cudaLaunchConfig_t* c) {
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id == cudaLaunchAttributeClusterDimension) return c->attrs[i].val.clusterDim.x;
  return 0;
}

}  // namespace

cudaError_t launch(const void* kernel, dim3 grid, dim3 block, size_t shared_bytes, unsigned cluster_x,
                   cudaStream_t stream, bool dependent_launch, std::function<void()> body) {
  Device& d = device();
  std::lock_guard<std::recursive_mutex> lock(d.mutex);
  if (!kernels_load()) return fail(cudaErrorNoKernelImageForDevice);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
    return fail(cudaErrorInvalidConfiguration);
  if (block.x * block.y * block.z > 1024 || grid.y > 65535 || grid.z > 65535) return fail(cudaErrorInvalidConfiguration);
  if (block.y != 1 || block.z != 1 || block.x % 32 != 0) {
    std::fprintf(stderr, "emulated GPU: a block of %u x %u x %u threads (the emulator runs 1-D blocks of whole warps)\n",
                 block.x, block.y, block.z);
    return fail(cudaErrorInvalidConfiguration);
  }
  const KernelAttributes attributes = d.kernels.count(kernel) ? d.kernels[kernel] : KernelAttributes{};
  if (shared_bytes > static_cast<size_t>(attributes.max_dynamic_shared)) {
    std::fprintf(stderr, "emulated GPU: a launch with %zu bytes of dynamic shared memory, the kernel allows %d\n",
                 shared_bytes, attributes.max_dynamic_shared);
    return fail(cudaErrorInvalidValue);
  }
  if (cluster_x > 0 && (cluster_x > 16 || (cluster_x > 8 && !attributes.non_portable_clusters) ||
                        grid.x % cluster_x != 0))
    return fail(cluster_x > 8 ? cudaErrorInvalidClusterSize : cudaErrorInvalidValue);
  (void)dependent_launch;  // kernels run one after another here: every kernel's wait is already met
  const int threads = static_cast<int>(block.x);
  CUstream_st* s = stream_of(stream);
  if (s->capturing) ++d.counters.captured_launches;
  return submit(stream, [grid, threads, shared_bytes, cluster_x, body = std::move(body)] {
    ++device().counters.launches;
    const Index g{grid.x, grid.y, grid.z};
    if (cluster_x > 0) {
      launch_clusters(g, static_cast<int>(cluster_x), threads, shared_bytes, body);
    } else {
      set_dynamic_shared_bytes(shared_bytes);
      launch_blocks(g, threads, body);
    }
  });
}

namespace {
// At the end of the program, one line of what the emulated GPU ran: a suite that passed without
// running a kernel here would show it.
struct ReportAtExit {
  ReportAtExit() { device(); }  // constructed first, so destroyed after this
  ~ReportAtExit() {
    const Counters c = device().counters;
    std::fflush(stdout);  // what the program printed comes first, not cut by this line
    std::fprintf(stderr,
                 "emulated GPU: %ld kernels run (%ld recorded into CUDA graphs, %ld graph replays), %ld device "
                 "allocations\n",
                 c.launches, c.captured_launches, c.graph_launches, c.device_allocations);
  }
} report_at_exit;
}  // namespace

Counters counters() {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  return device().counters;
}

}  // namespace encrt::emulation::device

using encrt::emulation::device::Allocation;
using encrt::emulation::device::device;
using encrt::emulation::device::fail;
using encrt::emulation::device::Memory;

extern "C" {

cudaError_t cudaGetLastError() {
  const cudaError_t e = encrt::emulation::device::last_error;
  encrt::emulation::device::last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return encrt::emulation::device::last_error; }

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorInvalidClusterSize: return "cudaErrorInvalidClusterSize";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorMisalignedAddress: return "cudaErrorMisalignedAddress";
    case cudaErrorNoKernelImageForDevice: return "cudaErrorNoKernelImageForDevice";
    default: return "cudaError (emulated GPU)";
  }
}
const char* cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return fail(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int* d) {
  if (!d) return fail(cudaErrorInvalidValue);
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  if (!v) return fail(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  if (!v) return fail(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (!p) return fail(cudaErrorInvalidValue);
  if (d != 0) return fail(cudaErrorInvalidDevice);
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "emulated GPU (sm_%d, on the host)", encrt::emulation::device::arch());
  p->major = encrt::emulation::device::arch() / 10;
  p->minor = encrt::emulation::device::arch() % 10;
  p->multiProcessorCount = encrt::emulation::device::kMultiprocessors;
  p->totalGlobalMem = encrt::emulation::device::memory_bytes();
  p->sharedMemPerBlock = encrt::emulation::device::kSharedPerBlockDefault;
  p->sharedMemPerBlockOptin = encrt::emulation::device::kSharedPerBlockOptin;
  p->sharedMemPerMultiprocessor = encrt::emulation::device::kSharedPerMultiprocessor;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->regsPerBlock = 65536;
  p->integrated = encrt::emulation::device::integrated() ? 1 : 0;
  p->canMapHostMemory = 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int d) {
  if (!value) return fail(cudaErrorInvalidValue);
  if (d != 0) return fail(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = encrt::emulation::device::kSharedPerBlockOptin; break;
    case cudaDevAttrIntegrated: *value = encrt::emulation::device::integrated() ? 1 : 0; break;
    case cudaDevAttrCanMapHostMemory: *value = 1; break;
    case cudaDevAttrHostRegisterReadOnlySupported: *value = 1; break;
    case cudaDevAttrMultiProcessorCount: *value = encrt::emulation::device::kMultiprocessors; break;
    case cudaDevAttrComputeCapabilityMajor: *value = encrt::emulation::device::arch() / 10; break;
    case cudaDevAttrComputeCapabilityMinor: *value = encrt::emulation::device::arch() % 10; break;
    default:
      std::fprintf(stderr, "emulated GPU: device attribute %d is not emulated\n", static_cast<int>(attr));
      return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  if (!p) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::refused_during_capture()) return fail(cudaErrorStreamCaptureUnsupported);
  if (bytes > encrt::emulation::device::memory_bytes() - device().device_bytes) return fail(cudaErrorMemoryAllocation);
  *p = encrt::emulation::device::allocate(bytes, Memory::kDevice);
  if (!*p) return fail(cudaErrorMemoryAllocation);
  device().device_bytes += bytes;
  ++device().counters.device_allocations;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::refused_during_capture()) return fail(cudaErrorStreamCaptureUnsupported);
  if (p) ++device().counters.device_frees;
  return encrt::emulation::device::release(p, Memory::kDevice);
}
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) {
  if (!p) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::refused_during_capture()) return fail(cudaErrorStreamCaptureUnsupported);
  *p = encrt::emulation::device::allocate(bytes, Memory::kPinnedHost);
  if (!*p) return fail(cudaErrorMemoryAllocation);
  ++device().counters.host_allocations;
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::refused_during_capture()) return fail(cudaErrorStreamCaptureUnsupported);
  return encrt::emulation::device::release(p, Memory::kPinnedHost);
}

// Host memory mapped for the device: only where the device is integrated here (a discrete GPU
// maps host memory over PCIe too, but the backend asks for it on integrated ones only).
cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int) {
  if (!p || bytes == 0) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::allocation_of(p, 1)) return fail(cudaErrorHostMemoryAlreadyRegistered);
  device().allocations[static_cast<const unsigned char*>(p)] = Allocation{bytes, Memory::kRegisteredHost};
  return cudaSuccess;
}
cudaError_t cudaHostUnregister(void* p) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  auto& all = device().allocations;
  auto it = all.find(static_cast<const unsigned char*>(p));
  if (it == all.end() || it->second.kind != Memory::kRegisteredHost) return fail(cudaErrorHostMemoryNotRegistered);
  all.erase(it);
  return cudaSuccess;
}
cudaError_t cudaHostGetDevicePointer(void** device_pointer, void* host, unsigned int flags) {
  if (!device_pointer || flags != 0) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  const Allocation* a = encrt::emulation::device::allocation_of(host, 1);
  if (!a || a->kind == Memory::kDevice) return fail(cudaErrorInvalidValue);
  *device_pointer = host;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  auto on_device = [](const void* p, size_t n) {
    const Allocation* a = encrt::emulation::device::allocation_of(p, n);
    return a && (a->kind == Memory::kDevice || a->kind == Memory::kRegisteredHost);
  };
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToDevice: ok = on_device(dst, bytes); break;
    case cudaMemcpyDeviceToHost: ok = on_device(src, bytes); break;
    case cudaMemcpyDeviceToDevice: ok = on_device(dst, bytes) && on_device(src, bytes); break;
    case cudaMemcpyHostToHost: break;
    case cudaMemcpyDefault: ok = on_device(dst, bytes) || on_device(src, bytes); break;
    default: ok = false;
  }
  if (!ok) {
    std::fprintf(stderr, "emulated GPU: cudaMemcpyAsync of %zu bytes (kind %d) from %p to %p outside the device's memory\n",
                 bytes, static_cast<int>(kind), src, dst);
    return fail(cudaErrorInvalidValue);
  }
  return encrt::emulation::device::submit(stream, [dst, src, bytes] { std::memmove(dst, src, bytes); });
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
  if (!s) return fail(cudaErrorInvalidValue);
  *s = new CUstream_st;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!s) return fail(cudaErrorInvalidResourceHandle);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (s->capturing) --device().capturing_streams;
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (encrt::emulation::device::refused_during_capture()) return fail(cudaErrorStreamCaptureUnsupported);
  return cudaSuccess;  // its work has run
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  if (!status) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  *status = encrt::emulation::device::stream_of(s)->capturing ? cudaStreamCaptureStatusActive
                                                              : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
// A host function in stream order (the fake cuBLASLt's multiplications: fake_cublaslt.cpp).
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  if (!fn) return fail(cudaErrorInvalidValue);
  return encrt::emulation::device::submit(stream, [fn, data] { fn(data); });
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  if (!s) return fail(cudaErrorStreamCaptureUnsupported);  // the legacy stream cannot be captured
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (s->capturing) return fail(cudaErrorIllegalState);
  s->capturing = true;
  s->invalidations_at_begin = device().invalidations;
  s->captured.clear();
  ++device().capturing_streams;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  if (!s || !graph) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  if (!s->capturing) return fail(cudaErrorIllegalState);
  s->capturing = false;
  --device().capturing_streams;
  const bool invalidated = device().invalidations != s->invalidations_at_begin;
  std::vector<std::function<void()>> work;
  work.swap(s->captured);
  if (invalidated) {
    *graph = nullptr;
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *graph = new CUgraph_st{std::move(work)};
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (!exec || !graph) return fail(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->work};
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return fail(cudaErrorInvalidResourceHandle);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  ++device().counters.graph_launches;
  for (const auto& w : exec->work) encrt::emulation::device::submit(stream, w);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (!e) return fail(cudaErrorInvalidValue);
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
  if (!e) return fail(cudaErrorInvalidResourceHandle);
  return encrt::emulation::device::submit(stream, [e] {
    e->recorded = true;
    e->seconds = encrt::emulation::device::now_seconds();
  });
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return fail(cudaErrorInvalidValue);
  if (!start->recorded || !end->recorded) return fail(cudaErrorInvalidResourceHandle);
  *ms = static_cast<float>((end->seconds - start->seconds) * 1e3);
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value) {
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  auto& a = device().kernels[kernel];
  switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
      if (value < 0 || value > encrt::emulation::device::kSharedPerBlockOptin) return fail(cudaErrorInvalidValue);
      a.max_dynamic_shared = value;
      return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
      a.non_portable_clusters = value != 0;
      return cudaSuccess;
    default:
      return fail(cudaErrorInvalidValue);
  }
}
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* out, const void* kernel) {
  if (!out || !kernel) return fail(cudaErrorInvalidDeviceFunction);
  if (!encrt::emulation::device::kernels_load()) return fail(cudaErrorNoKernelImageForDevice);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  std::memset(out, 0, sizeof *out);
  const auto& kernels = device().kernels;
  const auto it = kernels.find(kernel);
  out->maxDynamicSharedSizeBytes =
      it != kernels.end() ? it->second.max_dynamic_shared : encrt::emulation::device::kSharedPerBlockDefault;
  out->maxThreadsPerBlock = 1024;
  out->binaryVersion = out->ptxVersion = 90;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* kernel, int threads, size_t shared) {
  if (!blocks || !kernel) return fail(cudaErrorInvalidValue);
  *blocks = encrt::emulation::device::resident_blocks(threads, shared);
  return cudaSuccess;
}

// Clusters of the config's size that run at once: as many as the multiprocessors hold, each block on
// its own (a GPU's processor clusters limit it further; not emulated).
cudaError_t cudaOccupancyMaxActiveClusters(int* clusters, const void* kernel, const cudaLaunchConfig_t* config) {
  if (!clusters || !kernel || !config) return fail(cudaErrorInvalidValue);
  std::lock_guard<std::recursive_mutex> lock(device().mutex);
  const unsigned cluster = encrt::emulation::device::cluster_of(config);
  const auto& kernels = device().kernels;
  const auto it = kernels.find(kernel);
  const encrt::emulation::device::KernelAttributes a =
      it != kernels.end() ? it->second : encrt::emulation::device::KernelAttributes{};
  if (cluster == 0 || cluster > 16 || (cluster > 8 && !a.non_portable_clusters)) return fail(cudaErrorInvalidClusterSize);
  if (config->dynamicSmemBytes > static_cast<size_t>(a.max_dynamic_shared)) return fail(cudaErrorInvalidValue);
  const int per_processor =
      encrt::emulation::device::resident_blocks(static_cast<int>(config->blockDim.x), config->dynamicSmemBytes);
  *clusters = per_processor * encrt::emulation::device::kMultiprocessors / static_cast<int>(cluster);
  return cudaSuccess;
}

}  // extern "C"
