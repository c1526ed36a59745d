// How fast one core reads memory: the other half of a roofline. At short sequences a model's
// linears do a few products per weight byte, and streaming the weights, not multiplying them,
// bounds the run (MiniLM int8 at seq 16 on one core: ~10 MiB of weights per run).
#pragma once

#include <cstddef>

namespace encrt::bench {

// Bytes per second one core reads streaming through a buffer of `bytes` bytes (at least 64 KiB),
// so the level of the memory hierarchy that holds a working set of that size: best of enough
// passes to read ~256 MiB in all (at least 4), after one warm-up pass, with the widest vector
// loads the CPU has (zmm, ymm, or four q registers per ld1 on aarch64).
double measure_read_bandwidth(size_t bytes);

}  // namespace encrt::bench
