// The backends this build knows: built-in tables (cpu always; xnnpack when built with it), the
// names of known backends this build lacks, and tables registered at run time (tests).
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"

namespace encrt::backend {

// The table named `name`; an error that names it when it is unknown, not built into this
// library, or not available on this machine.
Status find_backend(const std::string& name, const BackendInterface** out);

// The CPU backend: always built, always available, the fallback of every other backend.
const BackendInterface& cpu_backend();

// What `auto` tries, most preferred first, among the backends built and available here: an op
// goes to the first of them that supports it (the CPU backend, last, supports every op).
std::vector<const BackendInterface*> auto_backends();

struct KnownBackend {
  std::string name;
  const BackendInterface* table = nullptr;  // null: not built into this library
  std::string detail;                       // what it is, or why it is not built
};
std::vector<KnownBackend> known_backends();

// Adds a backend table (for tests: a mock device backend exercising copies and capture). It
// must be complete (is_complete) and stay alive for the process. Not thread-safe with sessions
// being created.
Status register_backend(const BackendInterface* table);

}  // namespace encrt::backend
