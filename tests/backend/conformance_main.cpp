// The conformance suite's main: `encrt_conformance --backend NAME [Catch2 options]` runs every
// op kind and every fixture model through backend NAME against the reference. NAME is a
// registered backend ("cpu", "xnnpack", "cuda", "mock_device"), "cpu:LEVEL" (the CPU backend
// at a named ISA level) or "NAME:OPTION=VALUE,..." (a backend with options). A backend that is not built or not available here exits with code 4,
// which ctest reports as skipped, never as passed.

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend_under_test.h"
#include "backend/mock_device_backend.h"
#include "backend/registry.h"
#include "kernels/isa.h"
#include "support/catch_session.h"

namespace {
constexpr int kSkipped = 4;

int skip(const std::string& why) {
  std::printf("SKIPPED: %s\n", why.c_str());
  return kSkipped;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace encrt;
  std::vector<char*> rest;
  std::string name;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      name = argv[++i];
      continue;
    }
    rest.push_back(argv[i]);
  }
  if (name.empty()) {
    std::fprintf(stderr, "usage: %s --backend NAME [Catch2 options]\n", argv[0]);
    return 2;
  }
  if (Status s = backend::register_backend(&conformance::kMockDeviceBackend); !s) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 2;
  }
  conformance::BackendUnderTest b;
  b.label = name;
  b.backend = name.substr(0, name.find(':'));
  const std::string rest_of_name = name.find(':') == std::string::npos ? "" : name.substr(name.find(':') + 1);
  if (rest_of_name.find('=') != std::string::npos) {
    size_t begin = 0;
    while (begin < rest_of_name.size()) {
      size_t end = rest_of_name.find(',', begin);
      if (end == std::string::npos) end = rest_of_name.size();
      const std::string item = rest_of_name.substr(begin, end - begin);
      b.options[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
      begin = end + 1;
    }
  } else if (!rest_of_name.empty()) {
    const std::string level = rest_of_name;
    const kernels::IsaLevel* l = kernels::find_isa_level(level);
    if (!l) return skip("unknown ISA level '" + level + "'");
    if (!kernels::isa_supported(l->features))
      return skip("this CPU does not support ISA level " + level + " (best: " + kernels::best_isa_level().name + ")");
    b.options["isa"] = level;
  }
  if (Status s = backend::find_backend(b.backend, &b.table); !s) return skip(s.message());
  // The mock device's fallback ops run on the reference kernels too: its results are the
  // reference's bit for bit.
  if (b.backend == "mock_device") b.options["isa"] = "scalar";
  std::printf("conformance: backend %s against the reference (cpu, isa=scalar)\n", name.c_str());
  conformance::set_backend_under_test(b);
  return test::run_catch_session(static_cast<int>(rest.size()), rest.data());
}
