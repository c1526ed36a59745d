// The CUDA backend: the whole encoder of an fp16 or fp32 model on an NVIDIA GPU (Jetson Orin's
// sm_87 and Hopper's sm_90 first). At prepare the weights are repacked into row-major [N, K] and
// uploaded once (one device allocation), the arena is one device allocation from the planner
// (256-byte alignment), inputs are staged through pinned host memory. Linear layers run on
// cuBLASLt (TN form, fp32 accumulation, bias in its epilogue); embeddings + LayerNorm, residual +
// bias + LayerNorm, attention (online softmax, key padding mask, probabilities when asked),
// activations and pooling run on encrt's kernels (kernels/). Activations of an fp16 model are
// stored in fp16 on the device (the named outputs in fp32); statistics and sums are fp32. Each
// (batch, seq) is captured into a CUDA graph on first use and replayed after (option graphs=off
// runs eagerly). One stream per session. Options: device=N, graphs=on|off, tf32=off|on (fp32
// models: TF32 tensor cores only when asked). Models with int8 layers stay on the CPU backend.
#pragma once

#include "backend/backend.h"
#include "backends/cuda/cuda_memory.h"

namespace encrt::cuda {

extern const backend::BackendInterface kCudaBackend;

}  // namespace encrt::cuda
