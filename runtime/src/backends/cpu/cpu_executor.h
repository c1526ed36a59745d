// The CPU backend's executor: each op of a segment split over the thread pool, calling kernels
// through the kernel table. Nothing here allocates; every pointer is a bound buffer or a model
// view.
#pragma once

#include "backend/backend.h"
#include "backends/cpu/thread_pool.h"
#include "kernels/kernel_table.h"

namespace encrt::cpu {

// Runs one op of args.graph (index `op`) with the buffers and shape of `args`.
void execute_op(const kernels::KernelTable& kernels, ThreadPool& pool, const backend::RunArgs& args, int op);

// Whether op `quantize` of g is the kQuantize of op `norm`'s output, `norm` a LayerNorm or an
// embedding with its LayerNorm: then the two run as one pass (execute_norm_then_quantize).
bool quantizes_norm_output(const plan::Graph& g, int norm, int quantize);
// Runs ops `norm` and `quantize` (quantizes_norm_output) as one pass over each thread's rows:
// the rows normalized, then quantized while they are in cache; the outputs are the two ops'.
void execute_norm_then_quantize(const kernels::KernelTable& kernels, ThreadPool& pool, const backend::RunArgs& args,
                                int norm, int quantize);

// Per-thread scratch of an attention op, the kernel table's size rounded to 64 bytes.
size_t attention_scratch_per_thread(const kernels::KernelTable& kernels, const plan::AttentionParams& p, int max_seq);

// Whether an int8 linear runs the table's kernel for 7-bit weights (gemm_u8s7): the table has
// one and every weight of the layer lies in [-63, 63] (LinearView::max_abs_weight, the loader's).
inline bool runs_narrow(const kernels::KernelTable& kernels, const detail::LinearView& w) {
  return kernels.gemm_u8s7 && w.dtype == DType::kI8 && w.max_abs_weight <= kernels::kNarrowInt8Weight;
}

// Per-thread scratch of a linear op: the int8 GEMM's workspace (the larger of the table's kernel
// and its kernel for any weights, either may run), rounded to 64 bytes; 0 for float layers.
size_t linear_scratch_per_thread(const kernels::KernelTable& kernels, const plan::LinearParams& p);

}  // namespace encrt::cpu
