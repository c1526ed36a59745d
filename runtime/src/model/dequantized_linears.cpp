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
  // In the fp16 panels' order (PanelN16: panel, k, column of the panel), reading the int8 panels
  // (PanelN16K4: panel, k / 4, column, k % 4) that hold the same 16 columns.
  const auto* q = static_cast<const int8_t*>(w.packed);
  const int K4 = (w.K + kernels::kPanelK - 1) / kernels::kPanelK;
  uint16_t* out = panels.get();
  bool beyond = false;
  for (int n0 = 0; n0 < w.N; n0 += kernels::kPanelN) {
    const int columns = w.N - n0 < kernels::kPanelN ? w.N - n0 : kernels::kPanelN;
    const int8_t* panel = q + static_cast<size_t>(n0 / kernels::kPanelN) * K4 * kernels::kPanelN * kernels::kPanelK;
    double scale[kernels::kPanelN];
    for (int j = 0; j < columns; ++j) scale[j] = static_cast<double>(w.scales[n0 + j]);
    for (int k = 0; k < w.K; ++k, out += kernels::kPanelN) {
      const double m = w.activation_multipliers ? static_cast<double>(w.activation_multipliers[k]) : 1.0;
      const int8_t* group = panel + static_cast<size_t>(k / kernels::kPanelK) * kernels::kPanelN * kernels::kPanelK + k % kernels::kPanelK;
      for (int j = 0; j < columns; ++j) {
        const uint16_t h = float_to_half(static_cast<float>(group[j * kernels::kPanelK] * scale[j] * m));
        beyond |= (h & 0x7c00u) == 0x7c00u;
        out[j] = h;
      }
    }
  }
  if (beyond) return;  // a weight beyond half (or not finite): keep the int8 linear
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
