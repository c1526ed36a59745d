#include "backends/cuda/layer_fusions.h"

#include <cstdint>

namespace encrt::cuda {

using plan::Op;
using plan::OpKind;

bool leaves_device(const plan::Graph& g, int buffer) {
  for (const plan::NamedTensor& t : g.outputs)
    if (t.buffer == buffer) return true;
  for (const Op& op : g.ops)
    if (op.kind == OpKind::kCopy && (op.in(0) == buffer || op.out(0) == buffer)) return true;
  return false;
}

bool read_elsewhere(const plan::Graph& g, int b, int reader) {
  if (leaves_device(g, b)) return true;
  for (size_t j = 0; j < g.ops.size(); ++j)
    if (static_cast<int>(j) != reader)
      for (int in : g.ops[j].inputs)
        if (in == b) return true;
  return false;
}

bool fuses_into_norm(const plan::Graph& g, int i) {
  if (i < 0 || i + 1 >= static_cast<int>(g.ops.size())) return false;
  const Op& lin = g.ops[static_cast<size_t>(i)];
  const Op& ln = g.ops[static_cast<size_t>(i) + 1];
  if (lin.kind != OpKind::kLinear || ln.kind != OpKind::kLayerNorm) return false;
  if (lin.in(plan::slot::kLinearResidual) < 0 || lin.p<plan::LinearParams>().activation != kernels::Activation::kNone)
    return false;
  return ln.in(0) == lin.out(0) && ln.out(0) == lin.out(0);
}

bool ffn_block_at(const plan::Graph& g, int u) {
  if (u < 0 || u + 2 >= static_cast<int>(g.ops.size())) return false;
  const Op& up = g.ops[static_cast<size_t>(u)];
  const Op& down = g.ops[static_cast<size_t>(u) + 1];
  if (up.kind != OpKind::kLinear || up.in(plan::slot::kLinearResidual) >= 0 || !fuses_into_norm(g, u + 1)) return false;
  return down.in(0) == up.out(0) && !read_elsewhere(g, up.out(0), u + 1) &&
         up.p<plan::LinearParams>().weights->N == down.p<plan::LinearParams>().weights->K;
}

bool layer_tail_at(const plan::Graph& g, int o) {
  if (!fuses_into_norm(g, o) || !ffn_block_at(g, o + 2)) return false;
  const Op& projection = g.ops[static_cast<size_t>(o)];
  const Op& up = g.ops[static_cast<size_t>(o) + 2];
  const Op& down = g.ops[static_cast<size_t>(o) + 3];
  const int x = projection.out(0);  // the LayerNorm's, in place
  const detail::LinearView& w = *projection.p<plan::LinearParams>().weights;
  return up.in(0) == x && down.in(plan::slot::kLinearResidual) == x && projection.in(plan::slot::kLinearResidual) != x &&
         w.N == w.K && up.p<plan::LinearParams>().weights->K == w.N;
}

bool layer_tail_memory_fits(const void* y, const void* in, const void* residual, size_t bytes) {
  const auto fits = [&](const void* b) {
    if (!b || b == y) return true;
    const uintptr_t p = reinterpret_cast<uintptr_t>(y), q = reinterpret_cast<uintptr_t>(b);
    return p + bytes <= q || q + bytes <= p;
  };
  return fits(in) && fits(residual);
}

bool qkv_attention_at(const plan::Graph& g, int q) {
  if (q < 0 || q + 1 >= static_cast<int>(g.ops.size())) return false;
  const Op& lin = g.ops[static_cast<size_t>(q)];
  const Op& att = g.ops[static_cast<size_t>(q) + 1];
  if (lin.kind != OpKind::kLinear || att.kind != OpKind::kAttention) return false;
  const plan::LinearParams& l = lin.p<plan::LinearParams>();
  const plan::AttentionParams& a = att.p<plan::AttentionParams>();
  if (l.activation != kernels::Activation::kNone || lin.in(plan::slot::kLinearResidual) >= 0) return false;
  if (a.int8 || a.window > 0 || att.out(plan::slot::kAttentionProbs) >= 0 ||
      att.in(plan::slot::kAttentionSrcMaskBool) >= 0 || att.in(plan::slot::kAttentionSrcMaskFloat) >= 0)
    return false;
  return att.in(plan::slot::kX) == lin.out(0) && !read_elsewhere(g, lin.out(0), q + 1) &&
         l.weights->N == 3 * a.heads * a.head_dim;
}

}  // namespace encrt::cuda
