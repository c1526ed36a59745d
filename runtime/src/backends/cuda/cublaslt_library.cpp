#include "backends/cuda/cublaslt_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace encrt::cuda {

namespace {

struct Loaded {
  CublasLt lib;
  bool ok = false;
  std::string why;
};

template <typename F>
bool bind(void* handle, const char* name, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (!*out) *why = std::string("cuBLASLt has no ") + name;
  return *out != nullptr;
}

Loaded load() {
  Loaded l;
  void* handle = nullptr;
  if (const char* path = std::getenv("ENCRT_CUBLASLT"); path && *path) {
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    l.lib.path = path;
    if (!handle) l.why = std::string("ENCRT_CUBLASLT=") + path + " could not be loaded: " + dlerror();
  } else {
    for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        l.lib.path = name;
        break;
      }
    }
    if (!handle) l.why = "cuBLASLt (libcublasLt.so.13 or .12) was not found (set ENCRT_CUBLASLT=PATH)";
  }
  if (!handle) return l;
  CublasLt& c = l.lib;
  l.ok = bind(handle, "cublasLtCreate", &c.create, &l.why) && bind(handle, "cublasLtDestroy", &c.destroy, &l.why) &&
         bind(handle, "cublasLtGetVersion", &c.get_version, &l.why) &&
         bind(handle, "cublasLtMatmulDescCreate", &c.desc_create, &l.why) &&
         bind(handle, "cublasLtMatmulDescDestroy", &c.desc_destroy, &l.why) &&
         bind(handle, "cublasLtMatmulDescSetAttribute", &c.desc_set, &l.why) &&
         bind(handle, "cublasLtMatrixLayoutCreate", &c.layout_create, &l.why) &&
         bind(handle, "cublasLtMatrixLayoutDestroy", &c.layout_destroy, &l.why) &&
         bind(handle, "cublasLtMatrixLayoutSetAttribute", &c.layout_set, &l.why) &&
         bind(handle, "cublasLtMatmulPreferenceCreate", &c.preference_create, &l.why) &&
         bind(handle, "cublasLtMatmulPreferenceDestroy", &c.preference_destroy, &l.why) &&
         bind(handle, "cublasLtMatmulPreferenceSetAttribute", &c.preference_set, &l.why) &&
         bind(handle, "cublasLtMatmulAlgoGetHeuristic", &c.heuristic, &l.why) &&
         bind(handle, "cublasLtMatmul", &c.matmul, &l.why);
  return l;  // the handle stays open for the process's life
}

}  // namespace

const CublasLt* cublaslt(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.lib : nullptr;
}

}  // namespace encrt::cuda
