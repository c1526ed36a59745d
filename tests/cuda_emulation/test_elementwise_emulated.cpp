// elementwise.cu's and packed_rows.cu's kernels (elementwise_kernel.cuh, packed_rows_kernel.cuh:
// activation + residual, tanh, mean and first-token pooling, the packed rows' expansion) run on
// the host under warp_emulation.h, with the launchers' grids, against the CPU backend's
// arithmetic (kernels::ref::apply_activation, std::tanh, cpu_executor.cpp's pooling as the fp32
// sum in token order times 1/count, plan::expand_rows's gather). On the host the kernels'
// erff and tanhf are the C library's, as the reference's, so every fp32 value is bit for bit;
// an fp16 value is the fp16 rounding of that (on the GPU erff and tanhf are within 2 ulp: the
// conformance suite's tolerance). The expansion copies words: bit for bit, zeros in padding.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/elementwise_kernel.cuh"
#include "backends/cuda/kernels/packed_rows_kernel.cuh"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::Elem;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Values in either type: as stored, and read back as floats.
struct Buffer {
  Elem type = Elem::kF32;
  std::vector<float> f32;
  std::vector<uint16_t> f16;
  Buffer(Elem t, const std::vector<float>& v) : type(t), f32(v) {
    for (float& x : f32) {
      f16.push_back(encrt::float_to_half(x));
      if (t == Elem::kF16) x = encrt::half_to_float(f16.back());
    }
  }
  void* data() { return type == Elem::kF16 ? static_cast<void*>(f16.data()) : f32.data(); }
  float at(size_t i) const { return type == Elem::kF16 ? encrt::half_to_float(f16[i]) : f32[i]; }
  // The stored value of the float v (rounded to fp16 for an fp16 buffer).
  float stored(float v) const { return type == Elem::kF16 ? encrt::half_to_float(encrt::float_to_half(v)) : v; }
};

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Same bits, or both NaN.
bool same(float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

}  // namespace

TEST_CASE("activation and tanh (emulated): ReLU, GELU, residual, fp32 and fp16, the reference's values", "[cuda_emulation]") {
  using namespace encrt::cuda::elementwise_kernels;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (Elem type : {Elem::kF32, Elem::kF16})
    for (int activation : {0, 1, 2})
      for (bool with_residual : {false, true})
      for (bool chunked : {false, true}) {
        // Two blocks, the second partial; the chunk kernels' n a multiple of their chunk.
        const size_t n = chunked ? 304 : 300;
        std::vector<float> x = random_floats(n, static_cast<uint32_t>(activation * 2 + (with_residual ? 1 : 0)), -4.0f, 4.0f);
        x[7] = nan, x[8] = inf, x[9] = -inf, x[10] = 0.0f, x[11] = -0.0f;
        Buffer y(type, x);
        const Buffer residual(type == Elem::kF16 ? Elem::kF32 : Elem::kF16, random_floats(n, 99, -1.0f, 1.0f));
        const Buffer before = y;
        encrt::cuda::ActivationArgs a;
        a.n = n;
        a.y = y.data();
        a.y_type = type;
        a.residual = with_residual ? const_cast<Buffer&>(residual).data() : nullptr;
        a.residual_type = residual.type;
        a.activation = activation;
        if (!chunked)
          encrt::emulation::launch_blocks({encrt::cuda::blocks_for(n, kThreads), 1, 1}, kThreads, [&] { activation_kernel(a); });
        else if (type == Elem::kF16)
          encrt::emulation::launch_blocks({encrt::cuda::blocks_for(n / 8, kThreads), 1, 1}, kThreads,
                                          [&] { activation_chunk_kernel<__half, 8>(a); });
        else
          encrt::emulation::launch_blocks({encrt::cuda::blocks_for(n / 4, kThreads), 1, 1}, kThreads,
                                          [&] { activation_chunk_kernel<float, 4>(a); });
        int bad = 0;
        for (size_t i = 0; i < n; ++i) {
          float v = encrt::kernels::ref::apply_activation(before.at(i), static_cast<encrt::kernels::Activation>(activation));
          if (with_residual) v += residual.at(i);
          bad += same(y.at(i), y.stored(v)) ? 0 : 1;
        }
        INFO((type == Elem::kF16 ? "f16" : "f32") << " activation " << activation << (with_residual ? " residual" : "")
                                                   << (chunked ? " chunked" : ""));
        CHECK(bad == 0);
      }
  for (Elem type : {Elem::kF32, Elem::kF16}) {
    std::vector<float> x = random_floats(257, 5, -6.0f, 6.0f);
    x[3] = nan, x[4] = inf, x[5] = -inf;
    Buffer y(type, x);
    const Buffer before = y;
    void* data = y.data();
    encrt::emulation::launch_blocks({encrt::cuda::blocks_for(x.size(), kThreads), 1, 1}, kThreads,
                                    [&] { tanh_kernel(x.size(), data, type); });
    int bad = 0;
    for (size_t i = 0; i < x.size(); ++i) bad += same(y.at(i), y.stored(std::tanh(before.at(i)))) ? 0 : 1;
    INFO((type == Elem::kF16 ? "f16" : "f32") << " tanh");
    CHECK(bad == 0);
  }
}

TEST_CASE("pool (emulated): mean and first token, padded with a mask and packed", "[cuda_emulation]") {
  using namespace encrt::cuda::elementwise_kernels;
  // Not a multiple of a block's 32 columns; more rows than the kernel's 16 warps, and not a multiple.
  constexpr int kBatch = 3, kSeq = 37, kWidth = 200;
  // Padded: sequence 0 all real, 1 with holes (one holding a NaN, which must stay out), 2 without a
  // real token. Packed: 37, 11 and 0 tokens.
  std::vector<int32_t> mask(kBatch * kSeq, 0);
  for (int t = 0; t < kSeq; ++t) {
    mask[static_cast<size_t>(t)] = 1;
    mask[static_cast<size_t>(kSeq + t)] = t % 3 == 1 || t == 0 ? 0 : 1;
  }
  const std::vector<int32_t> offsets = {0, 37, 48, 48};
  for (bool packed : {false, true})
    for (bool mean : {false, true})
      for (Elem type : {Elem::kF32, Elem::kF16}) {
        const int rows = packed ? offsets.back() : kBatch * kSeq;
        std::vector<float> values = random_floats(static_cast<size_t>(rows) * kWidth, 7, -2.0f, 2.0f);
        if (!packed) values[static_cast<size_t>(kSeq + 1) * kWidth + 5] = std::numeric_limits<float>::quiet_NaN();
        const Buffer x(type, values);
        Buffer out(type == Elem::kF16 ? Elem::kF32 : Elem::kF16, std::vector<float>(kBatch * kWidth, 12345.0f));
        encrt::cuda::PoolArgs a;
        a.batch = kBatch;
        a.seq = kSeq;
        a.width = kWidth;
        a.x = const_cast<Buffer&>(x).data();
        a.x_type = x.type;
        a.mask = mask.data();
        a.mean = mean;
        a.out = out.data();
        a.out_type = out.type;
        a.offsets = packed ? offsets.data() : nullptr;
        encrt::emulation::launch_blocks({pool_blocks(kBatch, kWidth), 1, 1}, kPoolThreads, [&] { pool_kernel(a); });
        int bad = 0;
        for (int b = 0; b < kBatch; ++b) {
          const int first = packed ? offsets[static_cast<size_t>(b)] : b * kSeq;
          const int count = packed ? offsets[static_cast<size_t>(b) + 1] - first : kSeq;
          for (int c = 0; c < kWidth; ++c) {
            float v = 0.0f;
            if (mean) {  // the kernel's order: kPoolWarps partial sums of every kPoolWarps-th row, then their sum
              int real = 0;
              for (int g = 0; g < kPoolWarps; ++g) {
                float part = 0.0f;
                for (int t = g; t < count; t += kPoolWarps) {
                  if (!packed && mask[static_cast<size_t>(first + t)] == 0) continue;
                  part += x.at(static_cast<size_t>(first + t) * kWidth + c);
                  ++real;
                }
                v += part;
              }
              if (real > 0) v *= 1.0f / static_cast<float>(real);
            } else if (count > 0) {
              v = x.at(static_cast<size_t>(first) * kWidth + c);
            }
            bad += same(out.at(static_cast<size_t>(b) * kWidth + c), out.stored(v)) ? 0 : 1;
          }
        }
        INFO((packed ? "packed" : "padded") << (mean ? " mean" : " first") << (type == Elem::kF16 ? " f16 in" : " f32 in"));
        CHECK(bad == 0);
      }
}

TEST_CASE("expand_packed_rows (emulated): each packed row to its position, zeros elsewhere", "[cuda_emulation]") {
  using namespace encrt::cuda::packed_rows_kernels;
  constexpr int kBatch = 3, kSeq = 5;
  // Sequences of 3 (positions 0, 1, 2), 5 (all) and 1 (position 0) tokens.
  const std::vector<int32_t> offsets = {0, 3, 8, 9};
  const std::vector<int32_t> source = {0, 1, 2, 5, 6, 7, 8, 9, 10};
  for (size_t row_words : {size_t{1}, size_t{37}, size_t{130}}) {
    std::vector<uint32_t> packed(source.size() * row_words);
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint32_t>(0x9e3779b9u * (i + 1));
    std::vector<uint32_t> out(static_cast<size_t>(kBatch) * kSeq * row_words, 0xdeadbeefu);
    encrt::cuda::ExpandRowsArgs a;
    a.batch = kBatch;
    a.seq = kSeq;
    a.row_words = row_words;
    a.offsets = offsets.data();
    a.source = source.data();
    a.packed = packed.data();
    a.out = out.data();
    encrt::emulation::launch_blocks({kBatch * kSeq, 1, 1}, kThreads, [&] { expand_packed_rows_kernel(a); });
    std::vector<uint32_t> want(out.size(), 0u);
    for (size_t r = 0; r < source.size(); ++r)
      std::memcpy(&want[static_cast<size_t>(source[r]) * row_words], &packed[r * row_words], row_words * sizeof(uint32_t));
    INFO("row_words " << row_words);
    CHECK(out == want);
  }
}
