// int8_epilogue.cu's kernels (int8_epilogue_kernel.cuh: the elementwise epilogue, vector and
// scalar, and the row kernel fused with the next layer's quantization) run on the host under
// warp_emulation.h, with the launchers' grids, against kernels::ref::gemm_u8s8 bit for bit: D is
// what cuBLASLt computes, Σ (q − 128)·w over the padded K in wrapping int32, from the reference's
// own packed weights, and the kernel's fp32 outputs must be gemm_u8s8's (every operation rounded
// once, int8_math.h; the host's erff is the reference's std::erf, so GELU is exact here too; on
// the GPU erff is within 2 ulp and the conformance suite's tolerance covers it). The fused bytes,
// scales and zero points must be kernels::ref::quantize_rows_u8's of those fp32 rows.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <tuple>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/int8_epilogue_kernel.cuh"
#include "kernels/panel_unpack.h"
#include "kernels/ref/ref_kernels.h"

namespace {

using encrt::cuda::Int8EpilogueArgs;
namespace int8 = encrt::cuda::int8;
namespace kernels = encrt::kernels;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// One int8 linear layer's operands: quantized rows, the reference's weights and cuBLASLt's D.
struct Layer {
  int M = 0, N = 0, K = 0, ld_d = 0;
  std::vector<uint8_t> q;  // [M, Kp], the reference's unsigned bytes
  std::vector<float> x_scale;
  std::vector<int32_t> x_zp;
  std::vector<int8_t> packed;
  std::vector<float> w_scale, bias, residual;  // w_scale and bias padded to ld_d with zeros
  std::vector<int32_t> w_sum, d;               // w_sum padded to ld_d; d [M, ld_d]
};

Layer make_layer(int M, int N, int K, uint32_t seed) {
  Layer l;
  l.M = M, l.N = N, l.K = K, l.ld_d = (N + 3) / 4 * 4;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> W(static_cast<size_t>(N) * K);
  for (float& x : W) x = u(rng);
  l.packed.resize(kernels::panel_i8_size(N, K));
  l.w_scale.assign(static_cast<size_t>(l.ld_d), 0.0f);
  l.w_sum.assign(static_cast<size_t>(l.ld_d), 0);
  l.bias.assign(static_cast<size_t>(l.ld_d), 0.0f);
  kernels::ref::quantize_pack_weights_i8(N, K, W.data(), l.packed.data(), l.w_scale.data(), l.w_sum.data());
  for (int n = 0; n < N; ++n) l.bias[static_cast<size_t>(n)] = u(rng);
  l.residual.resize(static_cast<size_t>(M) * N);
  for (float& x : l.residual) x = 4.0f * u(rng);
  const int Kp = (K + 3) / 4 * 4;
  l.q.resize(static_cast<size_t>(M) * Kp);
  for (uint8_t& b : l.q) b = static_cast<uint8_t>(rng());
  for (int m = 0; m < M; ++m) {
    l.x_scale.push_back(0.002f + 0.01f * static_cast<float>(m));
    l.x_zp.push_back(static_cast<int32_t>(rng() % 256));
  }
  // The backend's weight upload ([ld_d, Kp], zero past N and K) and cuBLASLt's D.
  std::vector<int8_t> rows(static_cast<size_t>(l.ld_d) * Kp);
  kernels::unpack_panel_n16k4(N, K, l.packed.data(), l.ld_d, Kp, rows.data());
  l.d.assign(static_cast<size_t>(M) * l.ld_d, 0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < l.ld_d; ++n) {
      uint32_t d = 0;
      for (int k = 0; k < Kp; ++k)
        d += static_cast<uint32_t>(static_cast<int32_t>(int8::to_signed(l.q[static_cast<size_t>(m) * Kp + k])) *
                                   rows[static_cast<size_t>(n) * Kp + k]);
      l.d[static_cast<size_t>(m) * l.ld_d + n] = static_cast<int32_t>(d);
    }
  return l;
}

std::vector<float> reference(const Layer& l, int activation, bool with_residual) {
  kernels::QuantizedRows A;
  A.data = l.q.data();
  A.ld = (l.K + 3) / 4 * 4;
  A.scale = l.x_scale.data();
  A.zero_point = l.x_zp.data();
  kernels::GemmEpilogue ep;
  ep.bias = l.bias.data();
  ep.activation = static_cast<kernels::Activation>(activation);
  ep.residual = with_residual ? l.residual.data() : nullptr;
  ep.ldr = l.N;
  std::vector<float> want(static_cast<size_t>(l.M) * l.N);
  kernels::ref::gemm_u8s8(l.M, l.N, l.K, A, l.packed.data(), l.w_sum.data(), l.w_scale.data(), want.data(), l.N, ep);
  return want;
}

Int8EpilogueArgs args_of(const Layer& l, int activation, bool with_residual, float* y) {
  Int8EpilogueArgs a;
  a.rows = l.M;
  a.N = l.N;
  a.ld_d = l.ld_d;
  a.d = l.d.data();
  a.x_scale = l.x_scale.data();
  a.x_zero_point = l.x_zp.data();
  a.w_scale = l.w_scale.data();
  a.w_sum = l.w_sum.data();
  a.bias = l.bias.data();
  a.activation = activation;
  a.residual = with_residual ? l.residual.data() : nullptr;
  a.y = y;
  return a;
}

int mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) bad += bits(got[i]) == bits(want[i]) ? 0 : 1;
  return bad;
}

}  // namespace

static_assert(static_cast<int>(kernels::Activation::kNone) == 0 && static_cast<int>(kernels::Activation::kRelu) == 1 &&
                  static_cast<int>(kernels::Activation::kGelu) == 2,
              "Int8EpilogueArgs::activation numbers kernels::Activation");

TEST_CASE("int8 epilogue (emulated): elementwise, vector and scalar, bit for bit with gemm_u8s8", "[cuda_emulation]") {
  using namespace encrt::cuda::int8_epilogue_kernels;
  for (auto [M, N, K] : {std::tuple{3, 37, 53}, std::tuple{2, 64, 20}, std::tuple{1, 3, 5}}) {
    const Layer l = make_layer(M, N, K, static_cast<uint32_t>(N * K));
    for (int activation : {0, 1, 2})
      for (bool with_residual : {false, true})
        for (bool vector : {false, true}) {
          if (vector && N % 4 != 0) continue;  // the launcher's condition (with 16-byte pointers: std::vector's)
          INFO("M " << M << " N " << N << " K " << K << " activation " << activation << (with_residual ? " residual" : "")
                    << (vector ? " vector" : " scalar"));
          std::vector<float> y(static_cast<size_t>(M) * N, 12345.0f);
          const Int8EpilogueArgs a = args_of(l, activation, with_residual, y.data());
          const size_t threads = static_cast<size_t>(a.rows) * static_cast<size_t>(a.ld_d / 4);
          const encrt::emulation::Index grid{encrt::cuda::blocks_for(threads, kElementwiseThreads), 1, 1};
          if (vector)
            encrt::emulation::launch_blocks(grid, kElementwiseThreads, [&] { int8_epilogue_kernel<true>(a); });
          else
            encrt::emulation::launch_blocks(grid, kElementwiseThreads, [&] { int8_epilogue_kernel<false>(a); });
          CHECK(mismatches(y, reference(l, activation, with_residual)) == 0);
        }
  }
}

TEST_CASE("int8 epilogue (emulated): fused with the next quantization, the reference's rows and bytes", "[cuda_emulation]") {
  using namespace encrt::cuda::int8_epilogue_kernels;
  for (auto [M, N, K] : {std::tuple{3, 37, 20}, std::tuple{2, 300, 8}}) {
    const Layer l = make_layer(M, N, K, static_cast<uint32_t>(N + K));
    std::vector<float> next_multipliers(static_cast<size_t>(N));
    for (int n = 0; n < N; ++n) next_multipliers[static_cast<size_t>(n)] = 0.5f + 0.01f * static_cast<float>(n % 97);
    for (int variant = 0; variant < 6; ++variant) {
      const int activation = variant % 3;
      const bool with_residual = variant % 2, with_multipliers = variant < 3, shifted = variant % 4 != 1, write_y = variant != 5;
      INFO("M " << M << " N " << N << " activation " << activation << (with_residual ? " residual" : "")
                << (with_multipliers ? " multipliers" : "") << (shifted ? " shifted" : " unshifted") << (write_y ? " with y" : ""));
      const int Kp = (N + 3) / 4 * 4;
      std::vector<float> y(static_cast<size_t>(M) * N, 12345.0f), scale(static_cast<size_t>(M), -1.0f);
      std::vector<uint8_t> q(static_cast<size_t>(M) * Kp, 0xee);
      std::vector<int32_t> zp(static_cast<size_t>(M), -1);
      Int8EpilogueArgs a = args_of(l, activation, with_residual, write_y ? y.data() : nullptr);
      a.next_multipliers = with_multipliers ? next_multipliers.data() : nullptr;
      a.next_q = q.data();
      a.next_shifted = shifted;
      a.next_scale = scale.data();
      a.next_zero_point = zp.data();
      encrt::emulation::launch_blocks({static_cast<unsigned>(M), 1, 1}, kRowThreads, [&] { int8_epilogue_quantize_kernel(a); });
      const std::vector<float> want = reference(l, activation, with_residual);
      if (write_y)
        CHECK(mismatches(y, want) == 0);
      else
        CHECK(y == std::vector<float>(y.size(), 12345.0f));
      std::vector<uint8_t> want_q(q.size());
      std::vector<float> want_scale(static_cast<size_t>(M));
      std::vector<int32_t> want_zp(static_cast<size_t>(M));
      kernels::ref::quantize_rows_u8(M, N, want.data(), N, a.next_multipliers, want_q.data(), Kp, want_scale.data(),
                                     want_zp.data());
      if (shifted)
        for (uint8_t& b : want_q) b = static_cast<uint8_t>(b ^ 0x80u);
      CHECK(q == want_q);
      CHECK(mismatches(scale, want_scale) == 0);
      CHECK(zp == want_zp);
    }
  }
}
