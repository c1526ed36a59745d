// An int8 model's linears as fp16 linears: W(n, k) = w(n, k) · s_w(n) · m(k) (the int8 weight, its
// column's scale and, where the file has SmoothQuant multipliers, the multiplier its input column
// takes before quantizing), computed in double, rounded to float and then to IEEE half, packed
// PanelN16 as an fp16 model's.
//
// Where int8 arithmetic is slower than fp16 (a GPU: encrt_cuda's option int8_linears), a session
// builds its graph from these views (plan::EncoderGraphOptions::dequantized): fp16 linears on the
// unquantized activations, no quantize ops, float attention. The result is the int8 file's weights
// with activations left unquantized: closer to the fp32 model than int8 arithmetic.
//
// The views are made once per model (ModelImpl::dequantized_linears) and cost nothing until a
// backend reads their panels: the session materializes a view's panels for the ops that run on a
// backend that reads them (host backends; see BackendInterface::dequantizes_int8_linears), and a
// device backend that asked for the views dequantizes on its device from `dequantized_from` (the
// cuda backend: no host copy, kernels/dequantize_weights.cu, the same bits).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "model/dequantized_weight.h"
#include "model/model_impl.h"

namespace encrt::detail {

class DequantizedLinears {
 public:
  // A view of every int8 linear of `model` (its layers, pooler and task head) whose dequantized
  // weights certainly fit half: |w| · max s_w · max |m| below 65504 with every scale and multiplier
  // finite (always so for the converter's files: SmoothQuant's multipliers undo the weights'
  // scaling); any other keeps no view and stays int8.
  explicit DequantizedLinears(const ModelImpl& model);

  // The fp16 view of `w`, when w is one of the model's int8 linears and it has one; else null.
  const LinearView* find(const LinearView& w) const;
  // `w`'s fp16 view where it has one, else w itself.
  const LinearView& effective(const LinearView& w) const {
    const LinearView* v = find(w);
    return v ? *v : w;
  }
  // Makes `view`'s panels (once; thread-safe) and sets its `packed`: false when view is not one of
  // these views, or there is no memory for them (the caller reports it).
  bool materialize(const LinearView& view) const;
  // How many linears have an fp16 view, and the host bytes of the panels made so far.
  size_t count() const { return entries_.size(); }
  size_t bytes() const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  struct Entry {
    const LinearView* source = nullptr;
    LinearView view;
    mutable std::once_flag once;
    mutable std::unique_ptr<uint16_t, Free> panels;
    mutable std::atomic<bool> made{false};  // panels made and view.packed set
  };
  void add(const LinearView& w);

  std::deque<Entry> entries_;  // a deque: the views' addresses go into graphs and stay
};

// The panels of an fp16 view of an int8 linear, in PanelN16 order ([⌈N/16⌉][K][16], zeros past N),
// as DequantizedLinears::materialize makes them, each weight dequantized_weight()'s.
void dequantize_panels(const LinearView& int8, uint16_t* panels);

}  // namespace encrt::detail
