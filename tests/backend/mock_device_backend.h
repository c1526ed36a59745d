// A test double of a device backend, for the parts of the seam no real backend of this machine
// exercises: device memory (mapped PROT_NONE except while the backend itself works in it, so
// that the core or another backend touching it crashes the test), 256-byte arena alignment,
// copies in and out (kCopy ops and copy_to_host), capture/replay, and fallback: it runs only
// LayerNorm, fp32/fp16 linears and tanh (with encrt's reference kernels), so every encoder puts
// embeddings, attention and pooling on the CPU backend and buffers cross memories in both
// directions (with option pooling=on it runs mean and first-token pooling too, so that the
// hidden state, read by nothing on the CPU, stays in its memory as on a GPU). It runs packed
// batches (supports_packed, expand_packed) as a device backend must. Its results must equal the
// CPU backend's with isa=scalar bit for bit.
#pragma once

#include "backend/backend.h"

namespace encrt::conformance {

extern const backend::BackendInterface kMockDeviceBackend;

struct MockDeviceCounters {
  int runs = 0;
  int captures = 0;
  int replays = 0;
  int copies_in = 0;   // kCopy ops into its memory and copy_from_host calls
  int copies_out = 0;  // kCopy ops out of its memory and copy_to_host calls
  int expansions = 0;  // expand_packed calls (token-level outputs of packed runs in its memory)
};
// Totals over every context since the process started.
MockDeviceCounters mock_device_counters();

}  // namespace encrt::conformance
