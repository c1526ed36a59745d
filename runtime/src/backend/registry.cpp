#include "backend/registry.h"

#include "backends/cpu/cpu_backend.h"
#if defined(ENCRT_WITH_XNNPACK)
#include "backends/xnnpack/xnnpack_backend.h"
#endif
#if defined(ENCRT_WITH_CUDA)
#include "backends/cuda/cuda_backend.h"
#endif

namespace encrt::backend {

namespace {

struct Entry {
  const char* name;
  const BackendInterface* table;
  const char* detail;
};

// Built-in backends, and the known ones this build lacks (with the reason).
const Entry kBuiltIn[] = {
    {"cpu", &cpu::kCpuBackend, "encrt's own kernels (x86 AVX2/AVX-512, ARM NEON, portable reference)"},
#if defined(ENCRT_WITH_XNNPACK)
    {"xnnpack", &xnnpack::kXnnpackBackend, "Google's XNNPACK operators for linear layers; the rest on the CPU backend"},
#else
    {"xnnpack", nullptr, "not built into this library (configure with XNNPACK installed: libxnnpack-dev)"},
#endif
#if defined(ENCRT_WITH_CUDA)
    {"cuda", &cuda::kCudaBackend, "NVIDIA GPUs through CUDA and cuBLASLt: fp32, fp16 and int8 models"},
#else
    {"cuda", nullptr, "not built into this library (configure with the CUDA toolkit: -DENCRT_WITH_CUDA=ON)"},
#endif
};

std::vector<const BackendInterface*>& registered() {
  static std::vector<const BackendInterface*> tables;
  return tables;
}

std::string known_names() {
  std::string names;
  for (const Entry& e : kBuiltIn) names += (names.empty() ? "" : ", ") + std::string(e.name);
  for (const BackendInterface* t : registered()) names += ", " + std::string(t->name);
  return names;
}

}  // namespace

bool is_complete(const BackendInterface& b) {
  return b.name && b.option_keys && b.create && b.destroy && b.supports && b.scratch_bytes && b.prepare && b.run &&
         b.implementation && b.summary && b.arena_alignment >= 64 && (b.arena_alignment & (b.arena_alignment - 1)) == 0 &&
         (b.memory == MemoryKind::kHost || (b.alloc_arena && b.free_arena && b.copy_to_host && b.copy_from_host)) &&
         (!b.replay) == (!b.capture);
}

const BackendInterface& cpu_backend() { return cpu::kCpuBackend; }

// Measured (README "Backends"): encrt's own kernels beat XNNPACK's operators on every op and
// dtype XNNPACK has, so `auto` never picks xnnpack; a GPU, where there is one, runs a whole fp16
// or fp32 encoder faster than a CPU, so `auto` takes cuda first when it is available.
std::vector<const BackendInterface*> auto_backends() {
  std::vector<const BackendInterface*> out;
#if defined(ENCRT_WITH_CUDA)
  if (std::string why; cuda::kCudaBackend.available(&why)) out.push_back(&cuda::kCudaBackend);
#endif
  out.push_back(&cpu::kCpuBackend);
  return out;
}

Status find_backend(const std::string& name, const BackendInterface** out) {
  for (const Entry& e : kBuiltIn) {
    if (name != e.name) continue;
    if (!e.table) return unsupported("backend '" + name + "' is " + e.detail);
    std::string why;
    if (e.table->available && !e.table->available(&why))
      return unsupported("backend '" + name + "' is not available on this machine: " + why);
    *out = e.table;
    return Status::ok();
  }
  for (const BackendInterface* t : registered()) {
    if (name != t->name) continue;
    std::string why;
    if (t->available && !t->available(&why))
      return unsupported("backend '" + name + "' is not available on this machine: " + why);
    *out = t;
    return Status::ok();
  }
  return invalid_argument("unknown backend '" + name + "' (known: " + known_names() + ", or auto)");
}

std::vector<KnownBackend> known_backends() {
  std::vector<KnownBackend> out;
  for (const Entry& e : kBuiltIn) out.push_back({e.name, e.table, e.detail});
  for (const BackendInterface* t : registered()) out.push_back({t->name, t, "registered at run time"});
  return out;
}

Status register_backend(const BackendInterface* table) {
  if (!table || !is_complete(*table)) return invalid_argument("register_backend: the table is null or incomplete");
  const std::string name = table->name;
  if (name == "auto") return invalid_argument("register_backend: 'auto' is not a backend name");
  for (const Entry& e : kBuiltIn)
    if (name == e.name) return invalid_argument("register_backend: '" + name + "' is a built-in backend name");
  for (const BackendInterface* t : registered())
    if (name == t->name) return invalid_argument("register_backend: '" + name + "' is already registered");
  registered().push_back(table);
  return Status::ok();
}

}  // namespace encrt::backend
