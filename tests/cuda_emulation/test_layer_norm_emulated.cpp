// layer_norm.cu's kernels (layer_norm_kernel.cuh: the embedding gather with its LayerNorm, and
// LayerNorm after a bias and residual) run on the host under warp_emulation.h, with the
// launchers' grid (a warp per row up to kWarpRowWidth, a block beyond: row_layout.cuh), against the CPU backend's arithmetic: the
// embedding sum as cpu_executor.cpp's embed (fp32, word · scale, then + position, + token type)
// and kernels::ref::layer_norm.
//
// Exact where the arithmetic is the same: the rows before the LayerNorm (the same fp32
// operations in the same order), the zeros of a packed run's bucket rows; the normalized rows
// within layer_norm_bound.h's bound (fp32 block sums against the reference's double).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "cuda_emulation/warp_emulation.h"
#include "cuda_emulation/layer_norm_bound.h"
#include "backends/cuda/kernels/layer_norm_kernel.cuh"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::Elem;
using encrt::cuda::EmbedArgs;
using encrt::cuda::LayerNormArgs;
using encrt::cuda::RowKernels;
using encrt::emulation::layer_norm_outside_bound;
using encrt::emulation::Values;

Values random_values(Elem type, size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  Values v;
  v.type = type;
  for (size_t i = 0; i < n; ++i) {
    if (type == Elem::kF16)
      v.f16.push_back(encrt::float_to_half(u(rng)));
    else
      v.f32.push_back(u(rng));
  }
  return v;
}

Values zeros(Elem type, size_t n, float fill) {
  Values v;
  v.type = type;
  if (type == Elem::kF16)
    v.f16.assign(n, encrt::float_to_half(fill));
  else
    v.f32.assign(n, fill);
  return v;
}

const char* name(Elem e) { return e == Elem::kF16 ? "f16" : "f32"; }

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// As layer_norm.cu launches them for a.layout (row_layout.cuh's with_row_layout picks the layout).
template <class Args>
bool warp_rows(const Args& a) {
  bool warp = false;
  encrt::cuda::with_row_layout(a.layout, a.rows, a.width, encrt::cuda::kWarpRowsFrom,
                               [&](auto layout) { warp = decltype(layout)::kWarp; });
  return warp;
}

void run_layer_norm(const LayerNormArgs& a) {
  using namespace encrt::cuda::layer_norm_kernels;
  encrt::cuda::with_row_layout(a.layout, a.rows, a.width, encrt::cuda::kWarpRowsFrom, [&](auto layout) {
    using L = decltype(layout);
    encrt::emulation::launch_blocks({encrt::cuda::row_blocks<L>(a.rows), 1, 1}, L::kBlockThreads, [&] { layer_norm_kernel<L>(a); });
  });
}

void run_embed(const EmbedArgs& a) {
  using namespace encrt::cuda::layer_norm_kernels;
  encrt::cuda::with_row_layout(a.layout, a.rows, a.width, encrt::cuda::kWarpRowsFrom, [&](auto layout) {
    using L = decltype(layout);
    encrt::emulation::launch_blocks({encrt::cuda::row_blocks<L>(a.rows), 1, 1}, L::kBlockThreads, [&] { embed_kernel<L>(a); });
  });
}

}  // namespace

TEST_CASE("layer_norm (emulated): bias and residual, fp32 and fp16 rows, widths 1 to 4096", "[cuda_emulation]") {
  // 1024: the widest row a warp holds; 1025: the narrowest a block does.
  // 512 and 1024: the widest rows a warp holds in 16 and 32 values per lane; 1025: a block's.
  for (int width : {1, 37, 384, 512, 1024, 1025, 4096})
    for (Elem type : {Elem::kF32, Elem::kF16})
      for (bool with_bias_residual : {false, true})
        for (RowKernels layout : {RowKernels::kWarp, RowKernels::kBlock}) {
        const int rows = width > 1024 ? 2 : 11;  // 11: a block of 8 warp rows and a part of one
        const size_t n = static_cast<size_t>(rows) * width;
        std::mt19937 rng(static_cast<uint32_t>(width * 4 + (type == Elem::kF16 ? 2 : 0) + (with_bias_residual ? 1 : 0)));
        const Values x = random_values(type, n, rng, -1.0f, 2.0f);  // a mean away from 0
        // The residual in the other type (the kernel takes each in either).
        const Values residual = random_values(type == Elem::kF16 ? Elem::kF32 : Elem::kF16, n, rng, -1.0f, 1.0f);
        std::uniform_real_distribution<float> u(-0.5f, 0.5f);
        std::vector<float> bias(static_cast<size_t>(width)), gamma(static_cast<size_t>(width)), beta(static_cast<size_t>(width));
        for (int c = 0; c < width; ++c)
          bias[static_cast<size_t>(c)] = u(rng), gamma[static_cast<size_t>(c)] = 1.0f + u(rng), beta[static_cast<size_t>(c)] = u(rng);
        Values y = zeros(type, n, 12345.0f);
        LayerNormArgs a;
        a.rows = rows;
        a.width = width;
        a.x = x.data();
        a.x_type = x.type;
        a.bias = with_bias_residual ? bias.data() : nullptr;
        a.residual = with_bias_residual ? residual.data() : nullptr;
        a.residual_type = residual.type;
        a.gamma = gamma.data();
        a.beta = beta.data();
        a.eps = 1e-5f;
        a.y = y.data();
        a.y_type = y.type;
        a.layout = layout;
        run_layer_norm(a);
        // The reference's input: x + bias + residual in fp32, in the kernel's order.
        std::vector<float> in(n);
        for (size_t i = 0; i < n; ++i) {
          float v = x.at(i);
          if (with_bias_residual) v += bias[i % static_cast<size_t>(width)], v += residual.at(i);
          in[i] = v;
        }
        INFO("width " << width << " " << name(type) << (with_bias_residual ? " with bias and residual" : "")
                      << (warp_rows(a) ? ", a warp per row" : ", a block per row"));
        CHECK(layer_norm_outside_bound(in, rows, width, gamma, beta, a.eps, y) == 0);
      }
}

namespace {

struct EmbedCase {
  Elem word = Elem::kF32;  // kI8 is word_i8
  bool word_i8 = false, token_types = false, packed = false, norm = false;
  Elem out = Elem::kF32;
  int width = 37;
  RowKernels layout = RowKernels::kBlock;
  std::string describe() const {
    std::ostringstream s;
    s << "word " << (word_i8 ? "i8" : name(word)) << (token_types ? " token types" : " no token types")
      << (packed ? " packed" : " padded") << (norm ? " + LayerNorm" : "") << " out " << name(out) << " width " << width
      << (layout == RowKernels::kWarp ? ", rows=warp" : ", rows=block");
    return s.str();
  }
};

void check_embed(const EmbedCase& c) {
  INFO(c.describe());
  constexpr int kBatch = 3, kSeq = 4, kVocab = 11, kTypes = 2;
  const int W = c.width;
  std::mt19937 rng(static_cast<uint32_t>(W * 131 + (c.word_i8 ? 7 : 0) + (c.packed ? 3 : 0)));
  const Elem table_type = c.word == Elem::kF16 ? Elem::kF16 : Elem::kF32;
  const Values word = random_values(table_type, static_cast<size_t>(kVocab) * W, rng, -1.0f, 1.0f);
  std::vector<int8_t> word_q(static_cast<size_t>(kVocab) * W);
  std::vector<float> row_scales(kVocab);
  for (int8_t& q : word_q) q = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  for (float& s : row_scales) s = 0.001f + 0.01f * static_cast<float>(rng() % 100) / 100.0f;
  // Position and token-type tables in the other type than the word table's (the kernel loads each by its own).
  const Elem other = table_type == Elem::kF16 ? Elem::kF32 : Elem::kF16;
  const Values position = random_values(other, static_cast<size_t>(kSeq) * W, rng, -0.5f, 0.5f);
  const Values type_table = random_values(other, static_cast<size_t>(kTypes) * W, rng, -0.5f, 0.5f);
  std::vector<int32_t> ids(kBatch * kSeq), types(kBatch * kSeq);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % kVocab);
  for (int32_t& t : types) t = static_cast<int32_t>(rng() % kTypes);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> gamma(static_cast<size_t>(W)), beta(static_cast<size_t>(W));
  for (int i = 0; i < W; ++i) gamma[static_cast<size_t>(i)] = 1.0f + u(rng), beta[static_cast<size_t>(i)] = u(rng);
  // Packed: sequences of 4, 2 and 3 real tokens (their first ones), in a bucket of 2 more rows.
  const std::vector<int32_t> offsets = {0, 4, 6, 9};
  std::vector<int32_t> source;
  for (int b = 0; b < kBatch; ++b)
    for (int t = 0; t < offsets[static_cast<size_t>(b) + 1] - offsets[static_cast<size_t>(b)]; ++t) source.push_back(b * kSeq + t);
  const int real_rows = c.packed ? offsets.back() : kBatch * kSeq, rows = c.packed ? real_rows + 2 : real_rows;
  source.resize(static_cast<size_t>(rows), 0);  // the bucket rows' entries are never read
  const float scale = 1.5f;

  Values out = zeros(c.out, static_cast<size_t>(rows) * W, 12345.0f);
  EmbedArgs a;
  a.rows = rows;
  a.seq = kSeq;
  a.width = W;
  a.ids = ids.data();
  a.token_types = c.token_types ? types.data() : nullptr;
  a.word = c.word_i8 ? static_cast<const void*>(word_q.data()) : word.data();
  a.word_type = word.type;
  a.word_row_scales = c.word_i8 ? row_scales.data() : nullptr;
  a.position = position.data();
  a.position_type = position.type;
  a.token_type_table = c.token_types ? type_table.data() : nullptr;
  a.token_type_type = type_table.type;
  a.scale = scale;
  a.gamma = c.norm ? gamma.data() : nullptr;
  a.beta = c.norm ? beta.data() : nullptr;
  a.eps = 1e-12f;
  a.out = out.data();
  a.out_type = out.type;
  a.offsets = c.packed ? offsets.data() : nullptr;
  a.source = c.packed ? source.data() : nullptr;
  a.batch = kBatch;
  a.layout = c.layout;
  run_embed(a);

  // cpu_executor.cpp's embed: zeros, + word · scale (an int8 row: q · (row scale · scale)),
  // + position, + token type (its type or 0).
  std::vector<float> want(static_cast<size_t>(real_rows) * W, 0.0f);
  for (int r = 0; r < real_rows; ++r) {
    const int at = c.packed ? source[static_cast<size_t>(r)] : r;
    const int id = ids[static_cast<size_t>(at)];
    for (int i = 0; i < W; ++i) {
      float& v = want[static_cast<size_t>(r) * W + i];
      const size_t w = static_cast<size_t>(id) * W + i;
      v += c.word_i8 ? static_cast<float>(word_q[w]) * (row_scales[static_cast<size_t>(id)] * scale) : word.at(w) * scale;
      v += position.at(static_cast<size_t>(at % kSeq) * W + i);
      if (c.token_types) v += type_table.at(static_cast<size_t>(types[static_cast<size_t>(at)]) * W + i);
    }
  }
  if (c.norm) {
    CHECK(layer_norm_outside_bound(want, real_rows, W, gamma, beta, a.eps, out) == 0);
  } else {
    int mismatches = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const float expected = c.out == Elem::kF16 ? encrt::half_to_float(encrt::float_to_half(want[i])) : want[i];
      mismatches += bits(out.at(i)) == bits(expected) ? 0 : 1;
    }
    CHECK(mismatches == 0);
  }
  // The bucket rows past the real tokens: zeros.
  int nonzero = 0;
  for (size_t i = static_cast<size_t>(real_rows) * W; i < out.size(); ++i) nonzero += bits(out.at(i)) == 0 ? 0 : 1;
  CHECK(nonzero == 0);
}

}  // namespace

TEST_CASE("embed (emulated): fp32, fp16 and int8 word tables, token types or none, padded and packed", "[cuda_emulation]") {
  // Each table type with each of token types, packed and LayerNorm both ways (a half fraction
  // of the 2^3 combinations: each pair of them also meets both ways), the output type alternating.
  const bool combinations[4][3] = {{false, false, false}, {false, true, true}, {true, false, true}, {true, true, false}};
  for (int word : {0, 1, 2})  // f32, f16, i8 with row scales
    for (const auto& [token_types, packed, norm] : combinations) {
      EmbedCase c;
      c.word = word == 1 ? Elem::kF16 : Elem::kF32;
      c.word_i8 = word == 2;
      c.token_types = token_types;
      c.packed = packed;
      c.norm = norm;
      c.out = (word + (packed ? 1 : 0)) % 2 ? Elem::kF16 : Elem::kF32;
      for (RowKernels layout : {RowKernels::kWarp, RowKernels::kBlock}) {
        c.layout = layout;
        check_embed(c);
      }
    }
  // Rows wider than a block (each thread holds two columns), and than a warp's 16 values per lane.
  for (int width : {300, 700})
    for (RowKernels layout : {RowKernels::kWarp, RowKernels::kBlock}) {
      EmbedCase wide;
      wide.word = Elem::kF16, wide.token_types = true, wide.packed = true, wide.norm = true, wide.width = width;
      wide.layout = layout;
      check_embed(wide);
    }
}
