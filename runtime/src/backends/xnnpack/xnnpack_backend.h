// The XNNPACK backend: linear layers through Google XNNPACK's fully connected operators (the
// Debian 2022-02 snapshot), with weights packed by XNNPACK at prepare, and XNNPACK's
// pthreadpool for threads. fp32 runs xnn_fully_connected_nc_f32. fp16 weights (option fp16):
// "widen" (default) widens them to fp32 once at prepare and runs the fp32 operator: encrt's fp16
// semantics (fp32 activations and sums), twice the weight memory; "half" converts the
// activations to half, runs xnn_fully_connected_nc_f16 and converts back: XNNPACK's own fp16
// (half activations and outputs), fast only on CPUs with fp16 arithmetic, and less accurate
// (MiniLM's sentence cosine falls below encrt's fp16 bar, README). The snapshot has no GELU and no
// residual add fused into a GEMM: those run on encrt's kernels right after, inside this
// backend's linear op. Ops XNNPACK lacks (LayerNorm, attention, embeddings, pooling, int8 with
// per-row activation scales) stay on the CPU backend.
#pragma once

#include <cstddef>

#include "backend/backend.h"

namespace encrt::xnnpack {

extern const backend::BackendInterface kXnnpackBackend;

// Allocations XNNPACK made through encrt's allocator since the process started (for the test
// that run() allocates nothing).
size_t allocations_so_far();

}  // namespace encrt::xnnpack
