#include "model/dequantized_linears.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/half.h"
#include "kernels/panel_unpack.h"

namespace encrt::detail {

void DequantizedLinears::Free::operator()(void* p) const { std::free(p); }

DequantizedLinears::DequantizedLinears(const ModelImpl& model) {
  // The views' addresses go into graphs (plan::LinearParams): no reallocation after the first add.
  entries_.reserve(model.layers.size() * 4 + 2);
  for (const LayerView& l : model.layers)
    for (const LinearView* w : {&l.qkv, &l.attn_out, &l.ffn_up, &l.ffn_down}) add(*w);
  add(model.pooler);
  add(model.head.classifier);
}

void DequantizedLinears::add(const LinearView& w) {
  if (w.dtype != DType::kI8 || !w.packed || !w.scales || w.N <= 0 || w.K <= 0) return;
  const size_t n_panels = kernels::panel_f32_size(w.N, w.K);  // PanelN16: whole panels, zeros past N
  const size_t bytes = (n_panels * sizeof(uint16_t) + 63) / 64 * 64;
  std::unique_ptr<uint16_t, Free> panels(static_cast<uint16_t*>(std::aligned_alloc(64, bytes)));
  if (!panels) return;  // no memory for it: the linear stays int8
  std::memset(panels.get(), 0, bytes);
  const auto* q = static_cast<const int8_t*>(w.packed);
  for (int n = 0; n < w.N; ++n) {
    for (int k = 0; k < w.K; ++k) {
      double v = static_cast<double>(q[kernels::panel_i8_index(n, k, w.K)]) * static_cast<double>(w.scales[n]);
      if (w.activation_multipliers) v *= static_cast<double>(w.activation_multipliers[k]);
      const uint16_t h = float_to_half(static_cast<float>(v));
      if ((h & 0x7c00u) == 0x7c00u) return;  // beyond half (or not finite): keep the int8 linear
      panels.get()[kernels::panel_f32_index(n, k, w.K)] = h;
    }
  }
  Entry e;
  e.source = &w;
  e.view.dtype = DType::kF16;
  e.view.packed = panels.get();
  e.view.packed_bytes = n_panels * sizeof(uint16_t);
  e.view.bias = w.bias;
  e.view.N = w.N;
  e.view.K = w.K;
  e.panels = std::move(panels);
  bytes_ += bytes;
  entries_.push_back(std::move(e));
}

const LinearView* DequantizedLinears::find(const LinearView& w) const {
  for (const Entry& e : entries_)
    if (e.source == &w) return &e.view;
  return nullptr;
}

const DequantizedLinears& ModelImpl::dequantized_linears() const {
  std::call_once(dequantized_once_, [this] { dequantized_ = std::make_shared<const DequantizedLinears>(*this); });
  return *dequantized_;
}

}  // namespace encrt::detail
