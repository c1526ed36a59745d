// dequantize_weights.cu's kernel (dequantize_weights_kernel.cuh) on the host under
// warp_emulation.h: every fp16 weight is model/dequantized_weight.h's, bit for bit (the host's
// panels for the CPU backend are held to the same function by tests/runtime), over scales that put
// weights in half's subnormal range and near its largest value, with and without multipliers.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/cuda_common.cuh"
#include "backends/cuda/kernels/dequantize_weights_kernel.cuh"
#include "model/dequantized_weight.h"

TEST_CASE("dequantize weights (emulated): each fp16 weight is the host's, bit for bit", "[cuda_emulation]") {
  using namespace encrt::cuda;
  using dequantize_weights_kernels::kThreads;
  for (const auto& [N, K, multipliers] : {std::tuple{1, 1, false}, std::tuple{7, 13, true}, std::tuple{48, 40, false},
                                          std::tuple{33, 257, true}, std::tuple{96, 768, true}}) {
    INFO("N " << N << ", K " << K << (multipliers ? ", multipliers" : ""));
    std::mt19937 rng(static_cast<uint32_t>(N * 1000 + K));
    std::vector<int8_t> q(static_cast<size_t>(N) * K);
    for (int8_t& v : q) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    std::vector<float> scales(static_cast<size_t>(N)), m(static_cast<size_t>(K));
    // Scales from 1e-9 (weights in half's subnormal range and below it) to 400 (|q| · s up to 51200,
    // near half's 65504), multipliers 0.25 .. 1.25.
    std::uniform_real_distribution<float> exponent(-9.0f, 2.6f), mult(0.25f, 1.25f);
    for (float& s : scales) s = std::pow(10.0f, exponent(rng));
    for (float& v : m) v = mult(rng);
    std::vector<uint16_t> out(q.size(), 0xffffu);
    DequantizeWeightsArgs a;
    a.N = N;
    a.K = K;
    a.q = q.data();
    a.scales = scales.data();
    a.multipliers = multipliers ? m.data() : nullptr;
    a.out = out.data();
    encrt::emulation::launch_blocks({blocks_for(q.size(), kThreads), 1, 1}, kThreads,
                                    [&] { dequantize_weights_kernels::dequantize_weights_kernel(a); });
    int mismatches = 0, subnormal = 0;
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) {
        const size_t i = static_cast<size_t>(n) * K + k;
        const uint16_t want = encrt::detail::dequantized_weight(q[i], scales[static_cast<size_t>(n)], multipliers ? m[static_cast<size_t>(k)] : 1.0f);
        mismatches += out[i] != want;
        subnormal += (want & 0x7c00u) == 0 && (want & 0x3ffu) != 0;
      }
    CHECK(mismatches == 0);
    if (N * K > 1000) CHECK(subnormal > 0);  // the subnormal range was exercised
  }
}
