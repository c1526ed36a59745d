// Where an encoder graph's shape lets the CUDA backend run several ops as one kernel, from the graph
// alone (ops, buffers, who reads what): the backend (cuda_backend.cpp) adds what depends on the
// GPU, the options and the run (dtypes, which GEMM, the architecture, the row count), and
// tests/runtime/test_cuda_layer_fusions.cpp checks these on real encoder graphs without a GPU.
#pragma once

#include <cstddef>

#include "plan/graph.h"

namespace encrt::cuda {

// Whether buffer `buffer` is read or written outside the backend's kernels: a named output, or a
// copy's.
bool leaves_device(const plan::Graph& g, int buffer);

// Whether buffer b is read by an op other than `reader`, or leaves the device.
bool read_elsewhere(const plan::Graph& g, int b, int reader);

// Post-norm's "linear with a residual, then LayerNorm in place on its output" at op i: the
// LayerNorm can add the linear's bias and residual (residual + bias + LayerNorm in one kernel),
// since it writes nothing but that output, so the residual's memory is still intact there; or one
// kernel can do the linear and the LayerNorm (gemm_f16_layer_norm).
bool fuses_into_norm(const plan::Graph& g, int i);

// A feed-forward block at op u that one kernel can run (ffn_layer_norm): u a linear without a
// residual (any activation), its output read by the down projection u + 1 alone, which fuses
// into its LayerNorm u + 2 (fuses_into_norm).
bool ffn_block_at(const plan::Graph& g, int u);

// The tail of a post-norm layer at op o that one kernel can run (ffn_layer_norm with its
// projection): the attention's output projection o, square ([H, H]), fusing into its LayerNorm
// o + 1 (fuses_into_norm), whose output is the input and the residual of the feed-forward block
// at o + 2 (ffn_block_at), and not the projection's own residual.
bool layer_tail_at(const plan::Graph& g, int o);

// Whether that kernel may run on these buffers of a run: its output y (`bytes` at y) either apart
// from the projection's input `in` and its residual (as many bytes each; null: none) or at the
// same address. The arena lets buffers whose lifetimes do not overlap share memory
// (plan/arena_planner.h), and in and the residual are last read at op o while y is first written
// at o + 3: one kernel does both, and a partial overlap (rows of y over other rows of in or the
// residual) would let one cluster's rows of y overwrite rows that another cluster has still to
// read. At the same address a cluster reads its own rows before it writes them.
bool layer_tail_memory_fits(const void* y, const void* in, const void* residual, size_t bytes);

// A QKV projection at op q that one kernel can run with its attention q + 1 (qkv_attention): q a
// linear without activation or residual, of 3 · heads · head_dim outputs, read by the attention
// alone, the attention float (not int8), without probabilities, a src mask or a window.
bool qkv_attention_at(const plan::Graph& g, int q);

}  // namespace encrt::cuda
