// The arithmetic the CUDA backend's int8 kernels rely on (backends/cuda/kernels/int8_math.h, the
// same inline functions nvcc compiles into quantize.cu and int8_epilogue.cu), checked here against
// the reference kernels without a GPU: the quantization rule bit for bit (with the block-wise range
// reduction the kernels use), the −128 shift, the (128 − zp)·Σw fold modulo 2^32, the epilogue's
// rounding, and the PanelN16K4 unpacking the backend uploads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backends/cuda/kernels/int8_math.h"
#include "kernels/kernel_types.h"
#include "kernels/panel_unpack.h"
#include "kernels/ref/ref_kernels.h"

namespace {

using namespace encrt;
namespace int8 = encrt::cuda::int8;

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

// What quantize.cu computes for one row, on the host: per-thread strided ranges (threads = 128),
// combined as block_range does (a butterfly inside each warp, then the warps in order), then the
// bytes as int8 q − 128.
struct DeviceRow {
  std::vector<int8_t> q;
  float scale;
  int32_t zero_point;
};
DeviceRow quantize_like_the_kernel(const float* x, const float* multipliers, int K) {
  constexpr int kThreads = 128;
  float lo[kThreads], hi[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    lo[t] = hi[t] = 0.0f;
    for (int k = t; k < K; k += kThreads) {
      const float v = multipliers ? int8::mul_rn(x[k], multipliers[k]) : x[k];
      lo[t] = int8::range_min(lo[t], v);
      hi[t] = int8::range_max(hi[t], v);
    }
  }
  for (int o = 16; o > 0; o >>= 1) {  // __shfl_xor_sync butterfly: every lane of a warp ends equal
    float nlo[kThreads], nhi[kThreads];
    for (int t = 0; t < kThreads; ++t) {
      nlo[t] = int8::range_min(lo[t], lo[t ^ o]);
      nhi[t] = int8::range_max(hi[t], hi[t ^ o]);
    }
    std::memcpy(lo, nlo, sizeof lo);
    std::memcpy(hi, nhi, sizeof hi);
  }
  float l = 0.0f, h = 0.0f;
  for (int w = 0; w < kThreads / 32; ++w) {
    l = int8::range_min(l, lo[32 * w]);
    h = int8::range_max(h, hi[32 * w]);
  }
  const int8::RowQuantization r = int8::row_quantization(l, h);
  DeviceRow out;
  const int Kp = kernels::round_up(K, kernels::kPanelK);
  out.q.resize(static_cast<size_t>(Kp));
  for (int k = 0; k < Kp; ++k) {
    const float v = k < K ? (multipliers ? int8::mul_rn(x[k], multipliers[k]) : x[k]) : 0.0f;
    const uint8_t q = r.refused ? 0 : k < K ? int8::quantize_value(v, r) : static_cast<uint8_t>(r.zero_point);
    out.q[static_cast<size_t>(k)] = int8::to_signed(q);
  }
  out.scale = r.scale;
  out.zero_point = r.zero_point;
  return out;
}

// Rows of every kind: random ranges, one-sided rows, ties at .5 steps, NaN and ±Inf values, all
// zero, a range too small for 1 / s, a range wider than the largest float.
std::vector<std::vector<float>> test_rows(int K, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> rows;
  for (float span : {1e-3f, 1.0f, 7.5f, 3e4f}) {
    std::uniform_real_distribution<float> d(-span, span * 0.6f);
    std::vector<float> r(static_cast<size_t>(K));
    for (float& x : r) x = d(rng);
    rows.push_back(r);
    for (float& x : r) x = std::fabs(x);  // lo = 0
    rows.push_back(r);
    for (float& x : r) x = -x;  // hi = 0
    rows.push_back(r);
  }
  std::vector<float> ties(static_cast<size_t>(K));
  for (int k = 0; k < K; ++k) ties[static_cast<size_t>(k)] = (static_cast<float>(k % 11) - 5.0f) * 0.5f;
  rows.push_back(ties);  // s = 5/255: x · inv lands near .5 steps
  std::vector<float> special = rows[1];
  special[static_cast<size_t>(K / 2)] = std::numeric_limits<float>::quiet_NaN();
  rows.push_back(special);
  special[0] = std::numeric_limits<float>::infinity();
  rows.push_back(special);
  special[0] = -std::numeric_limits<float>::infinity();
  rows.push_back(special);
  rows.emplace_back(static_cast<size_t>(K), 0.0f);
  rows.emplace_back(static_cast<size_t>(K), 1e-38f);                           // 1 / s overflows
  std::vector<float> wide(static_cast<size_t>(K), 0.0f);
  wide[0] = 3e38f, wide[static_cast<size_t>(K - 1)] = -3e38f;                  // hi − lo overflows
  rows.push_back(wide);
  return rows;
}

}  // namespace

TEST_CASE("cuda int8 math: the quantize kernel's arithmetic is the reference's, bit for bit", "[cuda_int8]") {
  for (int K : {1, 3, 4, 37, 64, 130, 384, 1536}) {
    for (bool with_multipliers : {false, true}) {
      std::mt19937 rng(static_cast<uint32_t>(K));
      std::uniform_real_distribution<float> m(0.25f, 4.0f);
      std::vector<float> multipliers(static_cast<size_t>(K));
      for (float& v : multipliers) v = m(rng);
      const float* mult = with_multipliers ? multipliers.data() : nullptr;
      for (const std::vector<float>& row : test_rows(K, static_cast<uint32_t>(K) * 7 + 1)) {
        const int Kp = kernels::round_up(K, kernels::kPanelK);
        std::vector<uint8_t> q(static_cast<size_t>(Kp));
        float scale = 0.0f;
        int32_t zp = -1;
        kernels::ref::quantize_rows_u8(1, K, row.data(), K, mult, q.data(), Kp, &scale, &zp);
        const DeviceRow got = quantize_like_the_kernel(row.data(), mult, K);
        INFO("K " << K << (with_multipliers ? " with multipliers" : "") << ", reference scale " << scale << " zp " << zp);
        CHECK(got.zero_point == zp);
        if (std::isnan(scale))
          CHECK(std::isnan(got.scale));
        else
          CHECK(bits(got.scale) == bits(scale));
        bool same = true;
        for (int k = 0; k < Kp; ++k) same = same && int8::to_unsigned(got.q[static_cast<size_t>(k)]) == q[static_cast<size_t>(k)];
        CHECK(same);
      }
    }
  }
}

TEST_CASE("cuda int8 math: the -128 shift is q ^ 0x80 read as int8, both ways", "[cuda_int8]") {
  for (int q = 0; q < 256; ++q) {
    const int8_t s = int8::to_signed(static_cast<uint8_t>(q));
    CHECK(static_cast<int>(s) == q - 128);
    CHECK(int8::to_unsigned(s) == q);
  }
}

TEST_CASE("cuda int8 math: D + (128 - zp)·Σw is the reference's accumulator modulo 2^32", "[cuda_int8]") {
  std::mt19937 rng(5);
  // Any 32-bit Σq·w and Σw (wrapped or not) and every zero point: with D = Σq·w − 128·Σw (mod 2^32),
  // what cuBLASLt's Σ (q − 128)·w is, the fold gives Σq·w − zp·Σw (mod 2^32).
  for (int trial = 0; trial < 20000; ++trial) {
    const uint32_t p = static_cast<uint32_t>(rng());
    uint32_t w_sum = static_cast<uint32_t>(rng());
    if (trial % 4 == 0) w_sum = trial % 8 == 0 ? 0x7fffffffu : 0x80000000u;
    const int32_t zp = static_cast<int32_t>(trial % 256);
    const uint32_t d = p - 128u * w_sum;
    const uint32_t want = p - static_cast<uint32_t>(zp) * w_sum;
    CHECK(static_cast<uint32_t>(int8::fold_zero_point(static_cast<int32_t>(d), zp, static_cast<int32_t>(w_sum))) == want);
  }
  // And on real rows: extreme bytes and weights, K large enough to wrap int32 (2 · 255 · 127 · K > 2^31
  // from K = 33,000 on).
  for (int K : {1, 5, 64, 40000}) {
    std::vector<uint8_t> q(static_cast<size_t>(K));
    std::vector<int8_t> w(static_cast<size_t>(K));
    for (int k = 0; k < K; ++k) {
      q[static_cast<size_t>(k)] = k % 3 == 0 ? 255 : k % 3 == 1 ? 0 : static_cast<uint8_t>(rng());
      w[static_cast<size_t>(k)] = k % 5 == 0 ? int8_t{127} : k % 5 == 1 ? int8_t{-127} : static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    }
    uint32_t sum_w = 0;
    for (int8_t x : w) sum_w += static_cast<uint32_t>(static_cast<int32_t>(x));
    for (int32_t zp : {0, 1, 127, 128, 200, 255}) {
      uint32_t ref = 0, dev = 0;
      for (int k = 0; k < K; ++k) {
        ref += static_cast<uint32_t>(static_cast<int32_t>(q[static_cast<size_t>(k)]) * w[static_cast<size_t>(k)]);
        dev += static_cast<uint32_t>(static_cast<int32_t>(int8::to_signed(q[static_cast<size_t>(k)])) * w[static_cast<size_t>(k)]);
      }
      ref -= static_cast<uint32_t>(zp) * sum_w;
      INFO("K " << K << " zp " << zp);
      CHECK(int8::fold_zero_point(static_cast<int32_t>(dev), zp, static_cast<int32_t>(sum_w)) == static_cast<int32_t>(ref));
    }
  }
}

TEST_CASE("cuda int8 math: unpacked weights and the epilogue give gemm_u8s8's outputs bit for bit", "[cuda_int8]") {
  for (auto [M, N, K] : {std::tuple{3, 37, 53}, std::tuple{5, 64, 64}, std::tuple{2, 16, 3}}) {
    std::mt19937 rng(static_cast<uint32_t>(N * K));
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    std::vector<float> W(static_cast<size_t>(N) * K), bias(static_cast<size_t>(N)), residual(static_cast<size_t>(M) * N);
    for (float& x : W) x = u(rng);
    for (float& x : bias) x = u(rng);
    for (float& x : residual) x = 4.0f * u(rng);
    std::vector<int8_t> packed(kernels::panel_i8_size(N, K));
    std::vector<float> w_scale(static_cast<size_t>(N));
    std::vector<int32_t> w_sum(static_cast<size_t>(N));
    kernels::ref::quantize_pack_weights_i8(N, K, W.data(), packed.data(), w_scale.data(), w_sum.data());
    // The backend's upload: [round_up(N, 4), round_up(K, 4)], zero past N and K.
    const int Np = kernels::round_up(N, 4), Kp = kernels::round_up(K, kernels::kPanelK);
    std::vector<int8_t> rows(static_cast<size_t>(Np) * Kp, int8_t{99});
    kernels::unpack_panel_n16k4(N, K, packed.data(), Np, Kp, rows.data());
    for (int n = 0; n < Np; ++n)
      for (int k = 0; k < Kp; ++k) {
        const int8_t want = n < N && k < K ? packed[kernels::panel_i8_index(n, k, K)] : int8_t{0};
        REQUIRE(rows[static_cast<size_t>(n) * Kp + k] == want);
      }
    std::vector<uint8_t> q(static_cast<size_t>(M) * Kp);
    for (uint8_t& b : q) b = static_cast<uint8_t>(rng());
    std::vector<float> x_scale(static_cast<size_t>(M));
    std::vector<int32_t> x_zp(static_cast<size_t>(M));
    for (int m = 0; m < M; ++m) x_scale[static_cast<size_t>(m)] = 0.001f + 0.01f * static_cast<float>(m), x_zp[static_cast<size_t>(m)] = static_cast<int32_t>(rng() % 256);
    for (kernels::Activation act : {kernels::Activation::kNone, kernels::Activation::kRelu, kernels::Activation::kGelu})
      for (bool with_residual : {false, true}) {
        kernels::QuantizedRows A;
        A.data = q.data();
        A.ld = Kp;
        A.scale = x_scale.data();
        A.zero_point = x_zp.data();
        kernels::GemmEpilogue ep;
        ep.bias = bias.data();
        ep.activation = act;
        ep.residual = with_residual ? residual.data() : nullptr;
        ep.ldr = N;
        std::vector<float> want(static_cast<size_t>(M) * N);
        kernels::ref::gemm_u8s8(M, N, K, A, packed.data(), w_sum.data(), w_scale.data(), want.data(), N, ep);
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            // cuBLASLt's D over the padded K (the padding bytes are whatever the rows hold: the
            // weights there are 0), in int32 with wrapping.
            uint32_t d = 0;
            for (int k = 0; k < Kp; ++k)
              d += static_cast<uint32_t>(static_cast<int32_t>(int8::to_signed(q[static_cast<size_t>(m) * Kp + k])) *
                                         rows[static_cast<size_t>(n) * Kp + k]);
            const int32_t acc = int8::fold_zero_point(static_cast<int32_t>(d), x_zp[static_cast<size_t>(m)], w_sum[static_cast<size_t>(n)]);
            float v = int8::dequantize(acc, x_scale[static_cast<size_t>(m)], w_scale[static_cast<size_t>(n)]);
            v = int8::add_rn(v, bias[static_cast<size_t>(n)]);
            v = kernels::ref::apply_activation(v, act);  // the kernel's GELU is erff: the device's own
            if (with_residual) v = int8::add_rn(v, residual[static_cast<size_t>(m) * N + n]);
            INFO("M " << M << " N " << N << " K " << K << " m " << m << " n " << n);
            REQUIRE(bits(v) == bits(want[static_cast<size_t>(m) * N + n]));
          }
      }
  }
}
