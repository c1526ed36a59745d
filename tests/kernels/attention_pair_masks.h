// Masks over (query, key) pairs for the attention kernel tests, as AttentionArgs takes them
// (kernel_types.h): causal, block and random graph-adjacency bool masks, an additive float mask
// (finite values, -inf, huge negatives), one mask per sequence or one for the batch, and a
// sliding window. Their meaning is written out here on its own (not through attention_pairs.h),
// so the tests hold the kernels to the documented semantics. Every kind leaves some query rows
// with no key to attend (zero output and probabilities).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_types.h"

namespace encrt::kernels::test {

struct PairMasks {
  enum Kind { kWindowOnly, kCausal, kBlock, kGraph, kAdditive };
  Kind kind = kWindowOnly;
  bool per_sequence = false;
  int window = 0;
  int batch = 0, seq = 0;
  std::vector<uint8_t> blocked;  // [batch or 1][seq][seq], bool kinds
  std::vector<float> bias;       // [batch or 1][seq][seq], kAdditive

  size_t at(int b, int i, int j) const {
    return ((per_sequence ? static_cast<size_t>(b) : 0) * seq + i) * static_cast<size_t>(seq) + j;
  }
  // Whether query i of sequence b may attend key j as far as these masks go (padding aside).
  bool allowed(int b, int i, int j) const {
    if (window > 0 && std::abs(i - j) > window) return false;
    if (!blocked.empty()) return blocked[at(b, i, j)] == 0;
    if (!bias.empty()) return bias[at(b, i, j)] != -std::numeric_limits<float>::infinity();
    return true;
  }
  double bias_at(int b, int i, int j) const { return bias.empty() ? 0.0 : bias[at(b, i, j)]; }

  void set_args(AttentionArgs* a) const {
    a->pair_blocked = blocked.empty() ? nullptr : blocked.data();
    a->pair_bias = bias.empty() ? nullptr : bias.data();
    a->pair_batch_stride = per_sequence ? static_cast<size_t>(seq) * seq : 0;
    a->window = window;
  }

  std::string name() const {
    static const char* const kNames[] = {"window only", "causal", "block", "graph", "additive"};
    return std::string(kNames[kind]) + (per_sequence ? " [batch, seq, seq]" : " [seq, seq]") +
           (window > 0 ? " window " + std::to_string(window) : "");
  }
};

inline PairMasks make_pair_masks(PairMasks::Kind kind, int batch, int seq, bool per_sequence, int window, uint32_t seed) {
  PairMasks m;
  m.kind = kind;
  m.batch = batch;
  m.seq = seq;
  m.per_sequence = per_sequence;
  m.window = window;
  const int copies = per_sequence ? batch : 1;
  const size_t n = static_cast<size_t>(copies) * seq * seq;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  if (kind == PairMasks::kCausal || kind == PairMasks::kBlock || kind == PairMasks::kGraph) {
    m.blocked.assign(n, 0);
    for (int c = 0; c < copies; ++c)
      for (int i = 0; i < seq; ++i)
        for (int j = 0; j < seq; ++j) {
          uint8_t& x = m.blocked[(static_cast<size_t>(c) * seq + i) * seq + j];
          if (kind == PairMasks::kCausal) x = j > i;
          // Blocks of 5 tokens, shifted per sequence: a block diagonal mask.
          if (kind == PairMasks::kBlock) x = (i + c) / 5 != (j + c) / 5;
          // Adjacency of a random graph (density 0.3, self loops kept) with one isolated node.
          if (kind == PairMasks::kGraph) x = i == (2 + c) % seq ? 1 : (i == j ? 0 : unit(rng) > 0.3f);
        }
  } else if (kind == PairMasks::kAdditive) {
    m.bias.assign(n, 0.0f);
    for (int c = 0; c < copies; ++c)
      for (int i = 0; i < seq; ++i)
        for (int j = 0; j < seq; ++j) {
          float& x = m.bias[(static_cast<size_t>(c) * seq + i) * seq + j];
          const float u = unit(rng);
          x = u < 0.15f ? -std::numeric_limits<float>::infinity() : u < 0.2f ? -1.0e4f : 6.0f * unit(rng) - 3.0f;
          if (i == (1 + c) % seq) x = -std::numeric_limits<float>::infinity();  // a row with no key
        }
  }
  return m;
}

// The mask sets the kernel tests sweep for a sequence length.
inline std::vector<PairMasks> pair_mask_sweep(int batch, int seq, uint32_t seed) {
  std::vector<PairMasks> out;
  const int windows[] = {1, 4, 40};
  for (int w : windows)
    if (w < seq) out.push_back(make_pair_masks(PairMasks::kWindowOnly, batch, seq, false, w, seed++));
  out.push_back(make_pair_masks(PairMasks::kCausal, batch, seq, false, 0, seed++));
  out.push_back(make_pair_masks(PairMasks::kBlock, batch, seq, true, 0, seed++));
  out.push_back(make_pair_masks(PairMasks::kGraph, batch, seq, true, 0, seed++));
  out.push_back(make_pair_masks(PairMasks::kAdditive, batch, seq, false, 0, seed++));
  out.push_back(make_pair_masks(PairMasks::kAdditive, batch, seq, true, seq > 6 ? 3 : 0, seed++));
  out.push_back(make_pair_masks(PairMasks::kGraph, batch, seq, false, seq > 20 ? 9 : 0, seed++));
  return out;
}

}  // namespace encrt::kernels::test
