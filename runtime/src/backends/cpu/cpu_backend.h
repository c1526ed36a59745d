// The CPU backend: encrt's own kernels (chosen once for the CPU, or for the `isa` option), its
// thread pool, weights read in place from the mapped model file. It runs every op kind but
// kCopy, so it is where the ops of other backends fall back to; with isa=scalar it is the
// reference backend of the conformance suite.
#pragma once

#include "backend/backend.h"

namespace encrt::cpu {

extern const backend::BackendInterface kCpuBackend;

}  // namespace encrt::cpu
