#include "model/dequantized_linears.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "model/dequantized_weight.h"
#include "kernels/kernel_types.h"

namespace encrt::detail {

namespace {

// Whether every dequantized weight of w is finite in half: |w| · s_w(n) · |m(k)| < 65504 for the
// largest of each (the loader's max_abs_weight bounds |w|), every scale and multiplier finite.
bool fits_half(const LinearView& w) {
  double s = 0.0, m = 1.0;
  for (int n = 0; n < w.N; ++n) {
    if (!std::isfinite(w.scales[n])) return false;
    s = std::fmax(s, std::fabs(static_cast<double>(w.scales[n])));
  }
  if (w.activation_multipliers) {
    m = 0.0;
    for (int k = 0; k < w.K; ++k) {
      if (!std::isfinite(w.activation_multipliers[k])) return false;
      m = std::fmax(m, std::fabs(static_cast<double>(w.activation_multipliers[k])));
    }
  }
  return static_cast<double>(w.max_abs_weight) * s * m < 65504.0;
}

}  // namespace

void dequantize_panels(const LinearView& w, uint16_t* out) {
  // In the fp16 panels' order (PanelN16: panel, k, column of the panel), reading the int8 panels
  // (PanelN16K4: panel, k / 4, column, k % 4) that hold the same 16 columns.
  const auto* q = static_cast<const int8_t*>(w.packed);
  const int K4 = (w.K + kernels::kPanelK - 1) / kernels::kPanelK;
  for (int n0 = 0; n0 < w.N; n0 += kernels::kPanelN) {
    const int columns = w.N - n0 < kernels::kPanelN ? w.N - n0 : kernels::kPanelN;
    const int8_t* panel = q + static_cast<size_t>(n0 / kernels::kPanelN) * K4 * kernels::kPanelN * kernels::kPanelK;
    for (int k = 0; k < w.K; ++k, out += kernels::kPanelN) {
      const float m = w.activation_multipliers ? w.activation_multipliers[k] : 1.0f;
      const int8_t* group = panel + static_cast<size_t>(k / kernels::kPanelK) * kernels::kPanelN * kernels::kPanelK + k % kernels::kPanelK;
      for (int j = 0; j < columns; ++j) out[j] = dequantized_weight(group[j * kernels::kPanelK], w.scales[n0 + j], m);
      for (int j = columns; j < kernels::kPanelN; ++j) out[j] = 0;
    }
  }
}

void DequantizedLinears::Free::operator()(void* p) const { std::free(p); }

DequantizedLinears::DequantizedLinears(const ModelImpl& model) {
  for (const LayerView& l : model.layers)
    for (const LinearView* w : {&l.qkv, &l.attn_out, &l.ffn_up, &l.ffn_down}) add(*w);
  add(model.pooler);
  add(model.head.classifier);
}

void DequantizedLinears::add(const LinearView& w) {
  if (w.dtype != DType::kI8 || !w.packed || !w.scales || w.N <= 0 || w.K <= 0 || !fits_half(w)) return;
  Entry& e = entries_.emplace_back();
  e.source = &w;
  e.view.dtype = DType::kF16;
  e.view.packed_bytes = kernels::panel_f32_size(w.N, w.K) * sizeof(uint16_t);
  e.view.bias = w.bias;
  e.view.N = w.N;
  e.view.K = w.K;
  e.view.dequantized_from = &w;
}

const LinearView* DequantizedLinears::find(const LinearView& w) const {
  for (const Entry& e : entries_)
    if (e.source == &w) return &e.view;
  return nullptr;
}

bool DequantizedLinears::materialize(const LinearView& view) const {
  for (const Entry& e : entries_) {
    if (&e.view != &view) continue;
    std::call_once(e.once, [&e] {
      const size_t bytes = (e.view.packed_bytes + 63) / 64 * 64;
      std::unique_ptr<uint16_t, Free> panels(static_cast<uint16_t*>(std::aligned_alloc(64, bytes)));
      if (!panels) return;
      dequantize_panels(*e.source, panels.get());
      e.panels = std::move(panels);
      const_cast<LinearView&>(e.view).packed = e.panels.get();  // made once, before any reader (call_once)
      e.made.store(true, std::memory_order_release);
    });
    return e.made.load(std::memory_order_acquire);
  }
  return false;
}

size_t DequantizedLinears::bytes() const {
  size_t total = 0;
  for (const Entry& e : entries_)
    if (e.made.load(std::memory_order_acquire)) total += e.view.packed_bytes;
  return total;
}

const DequantizedLinears& ModelImpl::dequantized_linears() const {
  std::call_once(dequantized_once_, [this] { dequantized_ = std::make_shared<const DequantizedLinears>(*this); });
  return *dequantized_;
}

}  // namespace encrt::detail
