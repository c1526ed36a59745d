// The device code of gemm_i8_mma.cu (which launches it): an int8 linear layer on tensor cores with
// its epilogue in registers,
//   y[m, n] = act(float(D + (128 − zp[m])·w_sum[n]) · s_x[m] · s_w[n] + bias[n]) + residual[m, n],
//   D[m, n] = Σ_k x'[m, k]·w[n, k] (x' = q − 128, the GPU's storage of quantized rows),
// stored once as fp32: the int32 D that cuBLASLt's path writes and the epilogue kernel reads back
// (8 bytes per output, about 60% of that path's traffic at MiniLM's shapes) never reaches memory.
//
// Tiling: a block of 4 warps (2 × 2) owns a BM × BN tile of y (128 × 128, 128 × 64, 64 × 64 or
// 32 × 32: gemm_i8_mma_tile chooses by the grid it gives); each warp a (BM/2) × (BN/2) sub-tile of
// m16n8 accumulators (int32, in registers for the whole K loop: 128 of them a thread at 128 × 128).
// K goes through shared memory 64 bytes at a time in a ring of kStagesOf<BM, BN> stages
// (stage_ring.cuh; 4, or 3 at 128 × 128: 48 KB of static shared memory at most): cp.async (sm_80)
// fills the stages of the next steps while the warps multiply this one, so a block waits for global memory (L2 for the
// weights, at ~0.3 to 0.6 µs a trip) once per few steps at worst, not once per step: what bounds
// batch 1, where each block's work per step is tiny.
// Rows past M and past ld_w, and K past Kp, are zeros in shared memory (never read from global
// memory); only m < M, n < N are stored.
//
// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (inline PTX, as attention_mma_kernel.cuh does,
// so that every fragment index below can be checked against the PTX ISA's table: "Matrix
// Fragments for mma.m16n8k32", section 9.7.14.5.10 of PTX ISA 8.x/9.x), for lane = 4·g + t:
//   A (16 × 32, row-major), four .b32 registers of four int8 each, the lowest-addressed byte the
//     lowest element: a0 = row g, columns 4t .. 4t + 3; a1 = row g + 8, the same columns;
//     a2 = row g, columns 16 + 4t ..; a3 = row g + 8, columns 16 + 4t ..
//   B (32 × 8, column-major: column n is weight row n, contiguous in k), two registers:
//     b0 = column g, rows (k) 4t .. 4t + 3; b1 = column g, rows 16 + 4t ..
//   C, D (16 × 8 int32): c0, c1 = row g, columns 2t, 2t + 1; c2, c3 = row g + 8, the same.
// The k order inside a stage is permuted, the same way for A and B, so that each lane's registers
// of a row for the stage's two k32 steps are one 16-byte load: lane t reads bytes 16t .. 16t + 15
// of its row, words w0 .. w3, and takes w0, w1 as the columns 4t .., 16 + 4t .. of the first k32
// step (A's a0/a2 or a1/a3 by the row, B's b0/b1) and w2, w3 as those of the second. Every byte
// of the stage is one (step, column) of one mma, the same for A and B, so D is the same set of
// int32 products: the sum of exact integers (see below) in any order is the same integer, and the
// outputs are bit for bit those of the unpermuted order (and of cuBLASLt's path). Shared rows are
// 64 bytes, unpadded: the 8 lanes of a quarter warp (rows g, g + 1, words 16t) read 128
// contiguous bytes, which is every bank once (and the cp.async stores of 16 bytes per thread are
// contiguous too). One 16-byte load per row and stage replaces four 4-byte ones.
//
// Integers: |x'| ≤ 128 and |w| ≤ 128, so |D| ≤ 16,384 · Kp < 2^31 for Kp ≤ kGemmI8MmaMaxKp
// (the tensor cores' s32 sums are then exact, whatever they do on overflow;
// gemm_i8_mma_supported refuses a longer K); the zero-point fold wraps modulo 2^32 like the
// reference (int8_math.h). The fp32 steps are int8_epilogue_value.cuh's, the epilogue kernel's.
//
// Also compiled for the host by tests/cuda_emulation/ (ENCRT_CUDA_HOST_EMULATION: mma.sync from
// the PTX table and cp.async landing at its wait), so the indexing is checked on every build.
#pragma once

#include <cstdint>

#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/cuda_kernels.h"
#include "backends/cuda/kernels/int8_epilogue_value.cuh"
#include "backends/cuda/kernels/mma_int8.cuh"
#include "backends/cuda/kernels/stage_ring.cuh"

namespace encrt::cuda::mma_gemm_i8 {

constexpr int kWarps = 4;  // 2 × 2 over the block tile
constexpr int kThreads = kWarps * 32;
constexpr int kBlockK = 64;          // bytes of K per shared-memory stage (two k32 steps)
constexpr int kLd = kBlockK;         // a shared row: 64 bytes (the permuted k order: no bank conflict)
// Stages of the ring: 4 (32 KB at 64 x 64, 48 KB at 128 x 64), 3 at 128 x 128 (48 KB).
template <int BM, int BN>
constexpr int kStagesOf = (BM + BN) * kLd * 4 <= 48 * 1024 ? 4 : 3;

template <int BM, int BN>
struct __align__(16) Stages {
  static constexpr int kStages = kStagesOf<BM, BN>;
  int8_t a[kStages][BM][kLd];  // x' rows m0 .. m0 + BM − 1
  int8_t b[kStages][BN][kLd];  // weight rows n0 .. n0 + BN − 1
};
static_assert(sizeof(Stages<128, 128>) <= 48 * 1024 && sizeof(Stages<128, 64>) <= 48 * 1024,
              "static shared memory per block");

// Rows r0 .. r0 + ROWS − 1, bytes k0 .. k0 + 63 of a [rows, Kp] int8 matrix into `tile` in chunks
// of kChunk bytes (Kp a multiple of kChunk, so a chunk is wholly inside or outside a row); rows
// at or past `rows` and bytes at or past Kp are zeros, stored directly (not read).
template <int ROWS, int kChunk>
__device__ __forceinline__ void load_tile(int8_t (*tile)[kLd], const int8_t* src, int rows, int Kp, int r0, int k0) {
  constexpr int kChunks = kBlockK / kChunk;  // per row
  for (int e = threadIdx.x; e < ROWS * kChunks; e += kThreads) {
    const int r = e / kChunks, c = (e % kChunks) * kChunk;
    int8_t* dst = &tile[r][c];
    if (r0 + r < rows && k0 + c < Kp) {
      copy_async<kChunk>(dst, src + static_cast<size_t>(r0 + r) * static_cast<size_t>(Kp) + static_cast<size_t>(k0 + c));
    } else if constexpr (kChunk == 16) {
      *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
    } else {
      *reinterpret_cast<uint32_t*>(dst) = 0u;
    }
  }
}

// A lane's 16 bytes of a shared row (16t .. 16t + 15): its fragment registers of that row for
// both k32 steps of the stage (the permuted order: the header comment).
__device__ __forceinline__ uint4 words_at(const int8_t* p) { return *reinterpret_cast<const uint4*>(p); }

// kChunk: 16 when x, w and Kp allow 16-byte copies (Kp % 16 == 0 and 16-aligned bases), else 4.
// pairs: column pairs (2t, 2t + 1) are stored (and the residual read) as float2 (N even, y and
// residual 8-aligned).
template <int BM, int BN, int kChunk>
__global__ void __launch_bounds__(kThreads) gemm_i8_mma_kernel(GemmI8MmaArgs a, bool pairs) {
  constexpr int WM = BM / 2, WN = BN / 2;  // the warp's sub-tile
  constexpr int MT = WM / 16, NT = WN / 8;  // its m16 and n8 tiles
  constexpr int kStages = kStagesOf<BM, BN>;
  static_assert(MT >= 1 && NT >= 1 && WM % 16 == 0 && WN % 8 == 0, "warp tile");
  __shared__ Stages<BM, BN> s;
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;  // the fragment layout's groupID and threadID_in_group
  const int wm = (warp >> 1) * WM, wn = (warp & 1) * WN;
  const int8_t* x = static_cast<const int8_t*>(a.x);
  const int steps = (a.Kp + kBlockK - 1) / kBlockK;

  int32_t acc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) acc[mt][nt][0] = acc[mt][nt][1] = acc[mt][nt][2] = acc[mt][nt][3] = 0;

  run_stage_ring<kStages>(
      steps, [&](int slot, int step) { load_tile<BN, kChunk>(s.b[slot], a.w, a.ld_w, a.Kp, n0, step * kBlockK); },
      [&](int slot, int step) { load_tile<BM, kChunk>(s.a[slot], x, a.M, a.Kp, m0, step * kBlockK); },
      [&](int stage) {
        // B's registers for both k32 steps (bf[nt]: .x, .y the first step's b0, b1; .z, .w the
        // second's), then A's row by row: lo row g, hi row g + 8, the same words.
        const int c = 16 * t;
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
            mma_m16n8k32_s8s8(acc[mt][nt], a0, bf[nt].x, bf[nt].y);
            mma_m16n8k32_s8s8(acc[mt][nt], a1, bf[nt].z, bf[nt].w);
          }
        }
      });

  // The epilogue, from the accumulators: acc[mt][nt][2h + e] is row wm + mt·16 + g + 8h, column
  // wn + nt·8 + 2t + e of the tile.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm + mt * 16 + g + 8 * h;
      if (m >= a.M) continue;
      const float sx = a.x_scale[m];
      const int32_t zp = a.x_zero_point[m];
      const size_t row = static_cast<size_t>(m) * static_cast<size_t>(a.N);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int n = n0 + wn + nt * 8 + 2 * t;
        if (n >= a.N) continue;
        // Both values first (one copy of the epilogue's code per accumulator pair: with two, the
        // 128 × 128 tile's unrolled epilogue grew past what the compiler unrolls, and the
        // accumulators went to local memory), then the stores: a pair (N even, n with it) or one by one.
        const bool second = n + 1 < a.N;
        float v0 = int8::epilogue_value(acc[mt][nt][2 * h], zp, sx, a.w_sum[n], a.w_scale[n], a.bias, n, a.activation);
        float v1 = second ? int8::epilogue_value(acc[mt][nt][2 * h + 1], zp, sx, a.w_sum[n + 1], a.w_scale[n + 1], a.bias,
                                                 n + 1, a.activation)
                          : 0.0f;
        if (pairs) {  // n + 1 < N: N is even and n is
          if (a.residual) {
            const float2 r = *reinterpret_cast<const float2*>(a.residual + row + n);
            v0 = int8::add_rn(v0, r.x);
            v1 = int8::add_rn(v1, r.y);
          }
          *reinterpret_cast<float2*>(a.y + row + n) = make_float2(v0, v1);
        } else {
          if (a.residual) v0 = int8::add_rn(v0, a.residual[row + n]);
          a.y[row + n] = v0;
          if (second) {
            if (a.residual) v1 = int8::add_rn(v1, a.residual[row + n + 1]);
            a.y[row + n + 1] = v1;
          }
        }
      }
    }
}

}  // namespace encrt::cuda::mma_gemm_i8
