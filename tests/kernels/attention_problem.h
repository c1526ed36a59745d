// Attention problems for the kernel tests (x86 and ARM): inputs, a run of one kernel over every
// (sequence, head), and the exact mask semantics every kernel must keep.
//
// Inputs: uniform in [-1, 1]; per batch four sequences: all real, a prefix real, no real token,
// and holes (every third key padded, key 0 included); padded tokens get K and V 50 times larger
// so that a leak into any output shows. Also a null mask. Two layouts: the runtime's fused one
// (ld_qkv = 3·heads·head_dim, ld_out = heads·head_dim, calls in reverse head order so that a
// write past a head's own columns is caught) and strided rows whose gap columns hold NaN (in
// qkv: must never be read) or a sentinel (in out: must never be written). Scratch is exactly
// scratch_fn(seq, head_dim) bytes, filled with NaN bit patterns before use and followed by a guard.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "attention_pair_masks.h"
#include "kernels/kernel_types.h"
#include "naive_math.h"

namespace encrt::kernels::test {

constexpr float kSentinel = -4321.5f;
constexpr size_t kGuard = 256;
constexpr unsigned char kGuardByte = 0xa5;

enum class Layout { kFused, kStrided };

struct Problem {
  int batch = 0, seq = 0, heads = 0, dim = 0;
  int ld_qkv = 0, ld_out = 0;
  Layout layout = Layout::kFused;
  std::vector<float> qkv;     // [batch*seq, ld_qkv]
  std::vector<int32_t> mask;  // [batch, seq]
  bool null_mask = false;
  float scale = 1.0f;
  const encrt::kernels::test::PairMasks* pairs = nullptr;  // src masks and window, or none

  bool real(int b, int j) const { return null_mask || mask[static_cast<size_t>(b) * seq + j] != 0; }
  bool any_real(int b) const {
    for (int j = 0; j < seq; ++j)
      if (real(b, j)) return true;
    return false;
  }
  // Query i may attend key j (real and allowed by the pair masks), with this bias on its score.
  bool allowed(int b, int i, int j) const { return real(b, j) && (!pairs || pairs->allowed(b, i, j)); }
  float bias(int b, int i, int j) const { return pairs ? static_cast<float>(pairs->bias_at(b, i, j)) : 0.0f; }
  bool any_allowed(int b, int i) const {
    for (int j = 0; j < seq; ++j)
      if (allowed(b, i, j)) return true;
    return false;
  }
  const float* q(int b, int i, int h) const {
    return &qkv[(static_cast<size_t>(b) * seq + i) * ld_qkv + static_cast<size_t>(h) * dim];
  }
  const float* k(int b, int j, int h) const { return q(b, j, h) + heads * dim; }
  const float* v(int b, int j, int h) const { return q(b, j, h) + 2 * heads * dim; }
  double vmax(int b, int h) const {  // max |V| over the real keys
    double m = 0.0;
    for (int j = 0; j < seq; ++j)
      if (real(b, j))
        for (int d = 0; d < dim; ++d) m = std::max(m, std::fabs(static_cast<double>(v(b, j, h)[d])));
    return m;
  }
};

// Masked batches hold the four sequences of the header; null-mask batches two sequences.
inline Problem make_problem(int S, int H, int D, bool null_mask, Layout layout, uint32_t seed) {
  Problem p;
  p.batch = null_mask ? 2 : 4;
  p.seq = S;
  p.heads = H;
  p.dim = D;
  p.layout = layout;
  p.ld_qkv = 3 * H * D + (layout == Layout::kStrided ? 7 : 0);
  p.ld_out = H * D + (layout == Layout::kStrided ? 3 : 0);
  p.null_mask = null_mask;
  p.scale = 1.0f / std::sqrt(static_cast<float>(D));
  p.mask.assign(static_cast<size_t>(p.batch) * S, 1);
  if (!null_mask)
    for (int j = 0; j < S; ++j) {
      p.mask[1 * S + j] = j < (S + 1) / 2 ? 1 : 0;
      p.mask[2 * S + j] = 0;
      p.mask[3 * S + j] = j % 3 == 0 ? 0 : 1;
    }
  const int cols = 3 * H * D;
  const std::vector<float> vals = encrt::test_naive::random_floats(static_cast<size_t>(p.batch) * S * cols, -1.0f, 1.0f, seed);
  p.qkv.assign(static_cast<size_t>(p.batch) * S * p.ld_qkv, std::numeric_limits<float>::quiet_NaN());
  for (int b = 0; b < p.batch; ++b)
    for (int t = 0; t < S; ++t)
      for (int c = 0; c < cols; ++c) {
        float x = vals[(static_cast<size_t>(b) * S + t) * cols + c];
        if (!p.real(b, t) && c >= H * D) x *= 50.0f;
        p.qkv[(static_cast<size_t>(b) * S + t) * p.ld_qkv + c] = x;
      }
  return p;
}

struct Result {
  std::vector<float> out;    // [batch*seq, ld_out]
  std::vector<float> probs;  // [batch, heads, seq, seq], empty when not requested
};

// Runs fn over every (b, h), checking that the scratch guard and out's gap columns stay intact.
inline Result run(const Problem& p, AttentionFn fn, AttentionScratchFn scratch_fn, bool with_probs) {
  Result r;
  r.out.assign(static_cast<size_t>(p.batch) * p.seq * p.ld_out, kSentinel);
  if (with_probs) r.probs.assign(static_cast<size_t>(p.batch) * p.heads * p.seq * p.seq, kSentinel);
  const size_t bytes = scratch_fn(p.seq, p.dim);
  std::vector<unsigned char> storage(bytes + 64 + kGuard, kGuardByte);
  unsigned char* scratch = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  std::memset(scratch, 0xff, bytes);  // NaN in every float the kernel might read before writing

  AttentionArgs a;
  a.seq = p.seq;
  a.heads = p.heads;
  a.head_dim = p.dim;
  a.qkv = p.qkv.data();
  a.ld_qkv = p.ld_qkv;
  a.mask = p.null_mask ? nullptr : p.mask.data();
  a.scale = p.scale;
  a.out = r.out.data();
  a.ld_out = p.ld_out;
  a.probs = with_probs ? r.probs.data() : nullptr;
  if (p.pairs) p.pairs->set_args(&a);
  const bool reverse = p.layout == Layout::kFused;
  for (int b = 0; b < p.batch; ++b)
    for (int hh = 0; hh < p.heads; ++hh) fn(a, b, reverse ? p.heads - 1 - hh : hh, scratch);

  int bad_guard = 0, bad_gap = 0;
  for (size_t i = 0; i < kGuard; ++i) bad_guard += scratch[bytes + i] != kGuardByte;
  for (int row = 0; row < p.batch * p.seq; ++row)
    for (int c = p.heads * p.dim; c < p.ld_out; ++c) bad_gap += r.out[static_cast<size_t>(row) * p.ld_out + c] != kSentinel;
  CHECK(bad_guard == 0);
  CHECK(bad_gap == 0);
  return r;
}

inline float out_at(const Problem& p, const Result& r, int b, int h, int i, int d) {
  return r.out[(static_cast<size_t>(b) * p.seq + i) * p.ld_out + static_cast<size_t>(h) * p.dim + d];
}
inline float prob_at(const Problem& p, const Result& r, int b, int h, int i, int j) {
  return r.probs[((static_cast<size_t>(b) * p.heads + h) * p.seq + i) * p.seq + j];
}

// Exact mask semantics: a query row without a key to attend (a sequence without a real token,
// or a row the pair masks leave empty) gives zero output and probabilities; padded and
// pair-masked keys have probability 0. Returns the number of violations.
inline int mask_violations(const Problem& p, const Result& r) {
  int bad = 0;
  for (int b = 0; b < p.batch; ++b) {
    for (int h = 0; h < p.heads; ++h)
      for (int i = 0; i < p.seq; ++i) {
        const bool any = p.any_allowed(b, i);
        if (!any)
          for (int d = 0; d < p.dim; ++d) bad += out_at(p, r, b, h, i, d) != 0.0f;
        if (!r.probs.empty())
          for (int j = 0; j < p.seq; ++j)
            if (!any || !p.allowed(b, i, j)) bad += prob_at(p, r, b, h, i, j) != 0.0f;
      }
  }
  return bad;
}

struct Shape {
  int seq, heads, dim;
};

// seq × head_dim over the required sets; heads cycle through 1..12, kept small for seq 512 where
// the scalar reference dominates the run time. Plus the MiniLM and BERT-base head shapes.
inline std::vector<Shape> shapes() {
  std::vector<Shape> s;
  int next_heads = 0;
  for (int S : {1, 3, 17, 64, 129, 512})
    for (int D : {1, 5, 16, 32, 64}) {
      const int H = S >= 512 ? 1 + (next_heads % 2) : 1 + next_heads % 12;
      ++next_heads;
      s.push_back({S, H, D});
    }
  s.push_back({128, 12, 32});
  s.push_back({65, 12, 64});
  s.push_back({200, 3, 48});
  s.push_back({9, 2, 600});  // head_dim far above the register tiles
  return s;
}

}  // namespace encrt::kernels::test
