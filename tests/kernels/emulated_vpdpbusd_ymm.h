// vpdpbusd on ymm computed lane by lane in C++ (acc += Σ_4 u8(a) · s8(b) per int32 lane, wrapping
// modulo 2^32 as the instruction does), for the kernel templates that take it as a policy
// (x86::qu8s8_vnni_ymm_gemm's Dot, x86::VnniProducts' Dot). Include only from the emulated_*_avx2.cpp
// files (AVX2 flags); internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace encrt::kernels::test {
namespace {

struct EmulatedDot {
  static void dpbusd(__m256i& acc, __m256i a_u8, __m256i w_s8) {
    alignas(32) uint8_t a[32];
    alignas(32) int8_t w[32];
    alignas(32) int32_t c[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(a), a_u8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(w), w_s8);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c), acc);
    for (int lane = 0; lane < 8; ++lane) {
      uint32_t sum = static_cast<uint32_t>(c[lane]);  // vpdpbusd wraps modulo 2^32
      for (int j = 0; j < 4; ++j) sum += static_cast<uint32_t>(a[4 * lane + j] * w[4 * lane + j]);
      c[lane] = static_cast<int32_t>(sum);
    }
    acc = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
  }
};

}  // namespace
}  // namespace encrt::kernels::test
