// An int8 model's linears as fp16 linears: W(n, k) = w(n, k) · s_w(n) · m(k) (the int8 weight, its
// column's scale and, where the file has SmoothQuant multipliers, the multiplier its input column
// takes before quantizing), rounded once to IEEE half and packed PanelN16 as an fp16 model's.
//
// Where int8 arithmetic is slower than fp16 (a GPU at small batches: encrt_cuda's option
// int8_linears), a session builds its graph from these (plan::EncoderGraphOptions::dequantized):
// fp16 linears on the unquantized activations, no quantize ops, float attention. The result is
// the int8 file's weights with activations left unquantized: closer to the fp32 model than int8
// arithmetic, never further. Built once per model, on first use (ModelImpl::dequantized_linears).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/model_impl.h"

namespace encrt::detail {

class DequantizedLinears {
 public:
  // Every int8 linear of `model` (its layers, pooler and task head). A linear whose dequantized
  // weights would overflow half (never seen: SmoothQuant's multipliers undo the weights' scaling)
  // keeps no fp16 view and stays int8.
  explicit DequantizedLinears(const ModelImpl& model);

  // The fp16 view of `w`, when w is one of the model's int8 linears and it has one; else null.
  const LinearView* find(const LinearView& w) const;
  // `w`'s fp16 view where it has one, else w itself.
  const LinearView& effective(const LinearView& w) const {
    const LinearView* v = find(w);
    return v ? *v : w;
  }
  // How many linears have an fp16 view, and the host bytes of their weights.
  size_t count() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  struct Entry {
    const LinearView* source = nullptr;
    LinearView view;
    std::unique_ptr<uint16_t, Free> panels;
  };
  void add(const LinearView& w);

  std::vector<Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace encrt::detail
