// The device code of gemm_f16_mma.cu (which launches it): an fp16 linear layer on tensor cores
// for small row counts, with its epilogue in registers,
//   y[m, n] = fp16(act(Σ_k x[m, k]·w[n, k] + bias[n]) + residual[m, n]),
// fp16 operands, fp32 products and sums (mma.sync m16n8k16 .f32.f16.f16.f32), the bias, the
// activation (exact-erf GELU or NaN-keeping ReLU, elementwise_kernel.cuh's formulas) and the
// residual in fp32, one rounding to fp16 at the store. cuBLASLt's path rounds D to fp16 and, for a
// GELU with gelu=kernel or a residual after an activation, rounds again after encrt's activation
// kernel; here the value is rounded once.
//
// Why a GEMM of our own beside cuBLASLt: at MiniLM's batch 1 (M = 128) each of the 24 cuBLASLt
// GEMMs took 3.3-3.7 µs on the H200 (build D's trace), mostly waiting for memory at the start, and
// none of them can start before the kernel ahead of it has ended. This kernel is launched with
// programmatic dependent launch like encrt's other kernels (dependent_launch.cuh): it loads its
// first stages of weights, which no kernel writes, before waiting for the kernel ahead, so that
// those loads overlap that kernel's end. The backend takes it for linears up to a row count
// (option fp16_gemm, cuda_backend.cpp) and cuBLASLt above.
//
// Tiling as gemm_i8_mma_kernel.cuh's (that file gives the reasoning): a block of 4 warps (2 × 2)
// on a BM × BN tile of y (64 × 64, or 32 × 32 where 64 × 64 would leave multiprocessors without a
// block), each warp a (BM/2) × (BN/2) sub-tile of m16n8 fp32 accumulators; K through shared memory
// 32 values (64 bytes) a row at a time in a ring of cp.async stages (stage_ring.cuh; 8 at 32 × 32,
// 4 at 64 × 64: 32 KB either way), zeros past M, N and K (K a multiple of 8, so a 16-byte chunk is wholly in or
// out of a row).
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"), for lane
// 4g + t, two fp16 values per .b32 register, the lower column in the low half:
//   A (16 × 16, row-major): a0 = row g, columns 2t, 2t + 1; a1 = row g + 8, the same; a2 = row g,
//     columns 2t + 8, 2t + 9; a3 = row g + 8, the same.
//   B (16 × 8, column n = weight row n, contiguous in k): b0 = rows (k) 2t, 2t + 1 of column g;
//     b1 = rows 2t + 8, 2t + 9.
//   C, D (16 × 8 fp32): c0, c1 = row g, columns 2t, 2t + 1; c2, c3 = row g + 8, the same.
// The k order inside a stage is permuted alike for A and B, as in the int8 GEMM: lane t reads the
// 16 bytes at 16t of its row (values 8t .. 8t + 7, words w0 .. w3) and takes w0, w1 as the columns
// (2t, 2t + 1), (2t + 8, 2t + 9) of the stage's first k16 step and w2, w3 as those of the second.
// Every value of the stage meets its partner once, so the products are those of the plain order;
// only the order in which fp32 sums them differs (as it does between any two GEMMs: the tensor
// core's own order inside an mma is unspecified). One 16-byte shared load per row and stage; the
// 8 lanes of a quarter warp read 128 contiguous bytes (no bank conflict).
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: mma.sync from
// the PTX table, cp.async landing at its wait), so the indexing is checked on every build.
#pragma once

#include <cstdint>

#ifndef ENCRT_CUDA_HOST_EMULATION
#include <cuda_fp16.h>
#endif

#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/mma_f16.cuh"
#include "backends/cuda/kernels/stage_ring.cuh"

namespace encrt::cuda::mma_gemm_f16 {

constexpr int kWarps = 4;  // 2 × 2 over the block tile
constexpr int kThreads = kWarps * 32;
constexpr int kBlockK = 32;  // fp16 values of K per shared-memory stage (two k16 steps)
constexpr int kLd = kBlockK;  // a shared row: 64 bytes (the permuted k order: no bank conflict)
// Stages of the ring: 32 KB of shared memory at either tile.
template <int BM, int BN>
constexpr int kStagesOf = BM + BN <= 64 ? 8 : 4;

template <int BM, int BN>
struct __align__(16) Stages {
  static constexpr int kStages = kStagesOf<BM, BN>;
  __half a[kStages][BM][kLd];  // x rows m0 .. m0 + BM − 1
  __half b[kStages][BN][kLd];  // weight rows n0 .. n0 + BN − 1
};
static_assert(sizeof(Stages<32, 32>) <= 48 * 1024 && sizeof(Stages<64, 64>) <= 48 * 1024,
              "static shared memory per block");

// Rows r0 .. r0 + ROWS − 1, values k0 .. k0 + kValues − 1 of a [rows, K] fp16 matrix into `tile`
// (rows kLdT values apart), 16 bytes a copy by kThreadsT threads; rows at or past `rows` and values
// at or past K (a multiple of 8) are zeros, stored directly (not read). Also the fused linear +
// LayerNorm kernel's (gemm_f16_layer_norm_kernel.cuh).
template <int ROWS, int kValues, int kLdT, int kThreadsT>
__device__ __forceinline__ void load_rows_async(__half* tile, const __half* src, int rows, int K, int r0, int k0) {
  constexpr int kChunks = kValues / 8;  // 16-byte chunks per row
  for (int e = threadIdx.x; e < ROWS * kChunks; e += kThreadsT) {
    const int r = e / kChunks, c = (e % kChunks) * 8;
    __half* dst = tile + r * kLdT + c;
    if (r0 + r < rows && k0 + c < K)
      copy_async<16>(dst, src + static_cast<size_t>(r0 + r) * static_cast<size_t>(K) + static_cast<size_t>(k0 + c));
    else
      *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
  }
}
template <int ROWS>
__device__ __forceinline__ void load_tile(__half (*tile)[kLd], const __half* src, int rows, int K, int r0, int k0) {
  load_rows_async<ROWS, kBlockK, kLd, kThreads>(&tile[0][0], src, rows, K, r0, k0);
}

// A lane's 16 bytes of a shared row (values 8t .. 8t + 7): its fragment registers of that row for
// both k16 steps of the stage.
__device__ __forceinline__ uint4 words_at(const __half* p) { return *reinterpret_cast<const uint4*>(p); }

// Column n's value before the residual: + bias (when there is one), then the activation.
__device__ __forceinline__ float epilogue_value(float v, const GemmF16MmaArgs& a, int n) {
  if (a.bias) v += __half2float(static_cast<const __half*>(a.bias)[n]);
  if (a.activation == 1) return v != v ? v : v > 0.0f ? v : 0.0f;
  if (a.activation == 2) return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  return v;
}

// pairs: column pairs (2t, 2t + 1) are stored (and the residual read) as one 4-byte access (N
// even, y and residual 4-aligned).
template <int BM, int BN>
__global__ void __launch_bounds__(kThreads) gemm_f16_mma_kernel(GemmF16MmaArgs a, bool pairs) {
  constexpr int WM = BM / 2, WN = BN / 2;  // the warp's sub-tile
  constexpr int MT = WM / 16, NT = WN / 8;  // its m16 and n8 tiles
  constexpr int kStages = kStagesOf<BM, BN>;
  static_assert(MT >= 1 && NT >= 1 && WM % 16 == 0 && WN % 8 == 0, "warp tile");
  __shared__ Stages<BM, BN> s;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;  // the fragment layout's groupID and threadID_in_group
  const int wm = (warp >> 1) * WM, wn = (warp & 1) * WN;
  const __half* x = static_cast<const __half*>(a.x);
  const __half* w = static_cast<const __half*>(a.w);
  const int steps = (a.K + kBlockK - 1) / kBlockK;

  float acc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) acc[mt][nt][0] = acc[mt][nt][1] = acc[mt][nt][2] = acc[mt][nt][3] = 0.0f;

  run_stage_ring<kStages>(
      steps, [&](int slot, int step) { load_tile<BN>(s.b[slot], w, a.N, a.K, n0, step * kBlockK); },
      [&](int slot, int step) { load_tile<BM>(s.a[slot], x, a.M, a.K, m0, step * kBlockK); },
      [&](int stage) {
        // B's registers for both k16 steps (bf[nt]: .x, .y the first step's b0, b1; .z, .w the
        // second's), then A's row by row: lo row g, hi row g + 8, the same words.
        const int c = 8 * t;
        uint4 bf[NT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) bf[nt] = words_at(&s.b[stage][wn + nt * 8 + g][c]);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const int r = wm + mt * 16 + g;
          const uint4 lo = words_at(&s.a[stage][r][c]), hi = words_at(&s.a[stage][r + 8][c]);
          const uint32_t a0[4] = {lo.x, hi.x, lo.y, hi.y}, a1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            mma_m16n8k16<__half>(acc[mt][nt], a0, bf[nt].x, bf[nt].y);
            mma_m16n8k16<__half>(acc[mt][nt], a1, bf[nt].z, bf[nt].w);
          }
        }
      });

  // The epilogue, from the accumulators: acc[mt][nt][2h + e] is row wm + mt·16 + g + 8h, column
  // wn + nt·8 + 2t + e of the tile.
  const __half* residual = static_cast<const __half*>(a.residual);
  __half* y = static_cast<__half*>(a.y);
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm + mt * 16 + g + 8 * h;
      if (m >= a.M) continue;
      const size_t row = static_cast<size_t>(m) * static_cast<size_t>(a.N);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int n = n0 + wn + nt * 8 + 2 * t;
        if (n >= a.N) continue;
        const bool second = n + 1 < a.N;
        float v0 = epilogue_value(acc[mt][nt][2 * h], a, n);
        float v1 = second ? epilogue_value(acc[mt][nt][2 * h + 1], a, n + 1) : 0.0f;
        if (pairs) {  // n + 1 < N: N is even and n is
          if (residual) {
            const __half2 r = *reinterpret_cast<const __half2*>(residual + row + n);
            v0 += __half2float(r.x);
            v1 += __half2float(r.y);
          }
          *reinterpret_cast<__half2*>(y + row + n) = __floats2half2_rn(v0, v1);
        } else {
          if (residual) v0 += __half2float(residual[row + n]);
          y[row + n] = __float2half_rn(v0);
          if (second) {
            if (residual) v1 += __half2float(residual[row + n + 1]);
            y[row + n + 1] = __float2half_rn(v1);
          }
        }
      }
    }
}

}  // namespace encrt::cuda::mma_gemm_f16
