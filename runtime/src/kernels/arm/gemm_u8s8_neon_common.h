// What the ARM int8 GEMMs (gemm_u8s8_neon.cpp, gemm_u8s8_neondot.cpp, gemm_u8s8_neoni8mm.cpp)
// share: the tile arguments, the walk over 16-column panels and row tiles, and the epilogue of the
// reference's float order. Internal linkage, as neon_common.h.
#pragma once

#include "kernels/arm/arm_kernels.h"
#include "kernels/arm/neon_common.h"
#include "kernels/tiling.h"

namespace encrt::kernels::arm {
namespace {

struct U8S8TileArgs {
  int K4;                 // k-groups of 4
  const uint8_t* a;       // row m0 of the quantized activations
  size_t lda;
  const int8_t* w;        // the panel
  const float* a_scale;
  const int32_t* a_zp;
  const int32_t* w_sum;
  const float* w_scale;
  float* C;
  size_t ldc;
  int m0, n0;
  int cols;               // valid columns of the panel, 1..16
  const GemmEpilogue* ep;
  const int32_t* panel_sums;  // what the kernel's panel hook computed for this panel, or null
  const int8_t* panel_steps;  // the panel's whole 16-k steps in the kernel's own layout (its panel hook), or null
};

using U8S8TileFn = void (*)(const U8S8TileArgs&);

// The default panel hook: no work per panel (panel_sums and panel_steps stay null).
struct U8S8NoPanelHook {
  void operator()(U8S8TileArgs&) const {}
};

// Panels outside, row tiles of at most MR rows inside; tiles[r - 1] computes a tile of r rows.
// hook(t) runs once per panel, before its row tiles (t.w, t.n0 and t.cols already set): a kernel
// may compute there what every row tile of the panel needs and point t.panel_sums or t.panel_steps at it.
template <int MR, typename PanelHook = U8S8NoPanelHook>
void u8s8_gemm_panels(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                      const float* w_scale, float* C, int ldc, const GemmEpilogue& ep, const U8S8TileFn (&tiles)[MR],
                      PanelHook&& hook = PanelHook{}) {
  if (M <= 0 || N <= 0) return;
  U8S8TileArgs t{};
  t.K4 = (K + kPanelK - 1) / kPanelK;
  t.lda = static_cast<size_t>(A.ld);
  t.a_scale = A.scale;
  t.a_zp = A.zero_point;
  t.w_sum = w_sum;
  t.w_scale = w_scale;
  t.C = C;
  t.ldc = static_cast<size_t>(ldc);
  t.ep = &ep;
  const size_t panel_bytes = static_cast<size_t>(t.K4) * kPanelN * kPanelK;
  for (int n0 = 0; n0 < N; n0 += kPanelN) {
    t.n0 = n0;
    t.cols = N - n0 < kPanelN ? N - n0 : kPanelN;
    t.w = W + static_cast<size_t>(n0 / kPanelN) * panel_bytes;
    hook(t);
    for (int m0 = 0; m0 < M;) {
      const int mr = next_tile_rows(M - m0, MR);
      t.m0 = m0;
      t.a = A.data + static_cast<size_t>(m0) * t.lda;
      tiles[mr - 1](t);
      m0 += mr;
    }
  }
}

// Rows [m0, m0 + rows) of A re-encoded into dst (stride ld, a multiple of 16): each byte XOR the
// pattern of its k-group, `pattern` holding the patterns of groups 4i..4i+3 (16 bytes). Only the
// 4·K4 bytes of a row are read (the rows' readable length) and written.
inline void u8s8_encode_rows(const QuantizedRows& A, int m0, int rows, int K4, uint8x16_t pattern, uint8_t* dst,
                             size_t ld) {
  const int bytes = 4 * K4, whole = bytes & ~15;
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = A.data + static_cast<size_t>(m0 + r) * static_cast<size_t>(A.ld);
    uint8_t* out = dst + static_cast<size_t>(r) * ld;
    int k = 0;
    for (; k < whole; k += 16) vst1q_u8(out + k, veorq_u8(vld1q_u8(src + k), pattern));
    if (k < bytes) {
      alignas(16) uint8_t tail[16] = {};
      for (int i = 0; i < bytes - k; ++i) tail[i] = src[k + i];
      vst1q_u8(tail, veorq_u8(vld1q_u8(tail), pattern));
      for (int i = 0; i < bytes - k; ++i) out[k + i] = tail[i];
    }
  }
}

// u8s8_gemm_panels for kernels that flip their activation bytes before multiplying them (the
// smull and sdot kernels: signed × signed): with A.workspace (qu8s8_encoded_rows_workspace(K)
// bytes) and at least min_panels panels, blocks of kEncodedBlockRows rows are flipped once into
// the workspace (u8s8_encode_rows) and `encoded` tiles, which multiply the bytes as they are, run
// on them: the flips are done once per row instead of once per row and panel. Otherwise `plain`
// tiles flip as they go. Either way the same integers, so the same outputs.
template <int MR, typename PanelHook = U8S8NoPanelHook>
void u8s8_gemm_encoded_rows(int M, int N, int K, const QuantizedRows& A, const int8_t* W, const int32_t* w_sum,
                            const float* w_scale, float* C, int ldc, const GemmEpilogue& ep,
                            const U8S8TileFn (&plain)[MR], const U8S8TileFn (&encoded)[MR], uint8x16_t pattern,
                            int min_panels, PanelHook&& hook = PanelHook{}) {
  if (M <= 0 || N <= 0) return;
  const int panels = (N + kPanelN - 1) / kPanelN;
  if (!A.workspace || panels < min_panels) {
    u8s8_gemm_panels<MR>(M, N, K, A, W, w_sum, w_scale, C, ldc, ep, plain, hook);
    return;
  }
  const int K4 = (K + kPanelK - 1) / kPanelK;
  const size_t ld = encoded_row_bytes(K);
  for (int m0 = 0; m0 < M; m0 += kEncodedBlockRows) {
    const int rows = M - m0 < kEncodedBlockRows ? M - m0 : kEncodedBlockRows;
    u8s8_encode_rows(A, m0, rows, K4, pattern, A.workspace, ld);
    QuantizedRows block = A;
    block.data = A.workspace;
    block.ld = static_cast<int>(ld);
    block.scale = A.scale + m0;
    block.zero_point = A.zero_point + m0;
    GemmEpilogue block_ep = ep;
    if (ep.residual) block_ep.residual = ep.residual + static_cast<size_t>(m0) * static_cast<size_t>(ep.ldr);
    u8s8_gemm_panels<MR>(rows, N, K, block, W, w_sum, w_scale, C + static_cast<size_t>(m0) * static_cast<size_t>(ldc),
                         ldc, block_ep, encoded, hook);
  }
}

// The whole 4-group steps of a tile (full = K4 rounded down to a multiple of 4) by a kernel's
// assembly loop for 4-row tiles, steps(a0, a1, a2, a3, w, steps), on its accumulators; returns the
// k-group from which the tile's C++ loop goes on: `full` for a 4-row tile, 0 for the others.
template <int MR, typename AsmSteps>
ENCRT_ARM_INLINE int u8s8_asm_whole_steps(const U8S8TileArgs& t, int full, AsmSteps&& steps) {
  if constexpr (MR == 4) {
    if (full > 0)
      steps(t.a, t.a + t.lda, t.a + 2 * t.lda, t.a + 3 * t.lda, t.w, static_cast<size_t>(full / 4));
    return full;
  }
  return 0;
}

// One row's 16 outputs of a whole panel: float(sums + (offset - zp)·w_sum) · scale · w_scale[n],
// + bias, activation, + residual, in the reference's order. w_sum, w_scale, bias: the panel's.
template <Activation kAct>
ENCRT_ARM_INLINE void u8s8_finish_row(const int32_t* sums, int32_t zp_term, float scale, const int32x4_t (&w_sum)[4],
                                      const float32x4_t (&w_scale)[4], const float32x4_t (&bias)[4], bool has_bias,
                                      const float* residual, float* c) {
  float32x4_t v[4];
  for (int j = 0; j < 4; ++j) {
    const int32x4_t exact = vmlaq_n_s32(vld1q_s32(sums + 4 * j), w_sum[j], zp_term);
    v[j] = vmulq_f32(vmulq_n_f32(vcvtq_f32_s32(exact), scale), w_scale[j]);
    if (has_bias) v[j] = vaddq_f32(v[j], bias[j]);
    // One vector at a time: with the panel's 12 column factors live, four GELUs at once left
    // too few registers for its constants, which g++ then reloaded.
    if constexpr (kAct == Activation::kRelu) v[j] = vmaxq_f32(v[j], vdupq_n_f32(0.0f));
    if constexpr (kAct == Activation::kGelu) v[j] = gelu_neon(v[j]);
  }
  if (residual)
    for (int j = 0; j < 4; ++j) v[j] = vaddq_f32(v[j], vld1q_f32(residual + 4 * j));
  for (int j = 0; j < 4; ++j) vst1q_f32(c + 4 * j, v[j]);
}

// The rows of a tile whose panel has all 16 columns, one activation: the panel's column factors
// (and the GELU's constants) stay in registers across the rows.
template <Activation kAct>
void u8s8_finish_full_panel(const U8S8TileArgs& t, int offset, int rows, const int32_t* sums) {
  const GemmEpilogue& ep = *t.ep;
  int32x4_t w_sum[4];
  float32x4_t w_scale[4], bias[4];
  for (int j = 0; j < 4; ++j) {
    const int n = t.n0 + 4 * j;
    w_sum[j] = vld1q_s32(t.w_sum + n);
    w_scale[j] = vld1q_f32(t.w_scale + n);
    bias[j] = ep.bias ? vld1q_f32(ep.bias + n) : vdupq_n_f32(0.0f);
  }
  for (int r = 0; r < rows; ++r) {
    const int m = t.m0 + r;
    const float* residual = ep.residual ? ep.residual + static_cast<size_t>(m) * ep.ldr + t.n0 : nullptr;
    u8s8_finish_row<kAct>(sums + 16 * r, offset - t.a_zp[m], t.a_scale[m], w_sum, w_scale, bias, ep.bias != nullptr,
                          residual, t.C + static_cast<size_t>(m) * t.ldc + t.n0);
  }
}

// The epilogue of a tile of `rows` rows from its int32 sums (row r's 16 columns at sums + 16·r),
// each Σ_k (q - offset)·w. Exact: + (offset - zp[m])·w_sum[n]; then the reference's float order:
// · scale[m] · w_scale[n], + bias, activation, + residual. Out of line and from memory: the tile's
// accumulators are dead here, so the epilogue has the registers to itself (inlined with the sums
// in registers, g++ reloaded the GELU's twelve constants for every 4 outputs).
__attribute__((noinline)) void u8s8_finish_tile(const U8S8TileArgs& t, int offset, int rows, const int32_t* sums) {
  if (t.cols == kPanelN) {
    switch (t.ep->activation) {
      case Activation::kGelu: return u8s8_finish_full_panel<Activation::kGelu>(t, offset, rows, sums);
      case Activation::kRelu: return u8s8_finish_full_panel<Activation::kRelu>(t, offset, rows, sums);
      default: return u8s8_finish_full_panel<Activation::kNone>(t, offset, rows, sums);
    }
  }
  for (int j = 0; j < 4 && 4 * j < t.cols; ++j) {
    const int n = t.n0 + 4 * j;
    const int valid = t.cols - 4 * j;
    int32_t ws[4] = {0, 0, 0, 0};
    float wsc[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4 && i < valid; ++i) ws[i] = t.w_sum[n + i], wsc[i] = t.w_scale[n + i];
    const int32x4_t w_sum = vld1q_s32(ws);
    const float32x4_t w_scale = vld1q_f32(wsc);
    for (int r = 0; r < rows; ++r) {
      const int m = t.m0 + r;
      const int32x4_t exact = vmlaq_n_s32(vld1q_s32(sums + 16 * r + 4 * j), w_sum, offset - t.a_zp[m]);
      const float32x4_t v = vmulq_f32(vmulq_n_f32(vcvtq_f32_s32(exact), t.a_scale[m]), w_scale);
      finish_store_neon(v, *t.ep, m, n, valid, t.C + static_cast<size_t>(m) * t.ldc);
    }
  }
}

// The epilogue of a tile of MR rows: sums(r, j) gives the int32 sums of row r, columns 4j..4j+3
// of the panel (see u8s8_finish_tile).
template <int MR, typename SumsFn>
ENCRT_ARM_INLINE void u8s8_epilogue(const U8S8TileArgs& t, int offset, SumsFn sums) {
  int32_t stored[MR * 16];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) vst1q_s32(stored + 16 * r + 4 * j, sums(r, j));
  u8s8_finish_tile(t, offset, MR, stored);
}

}  // namespace
}  // namespace encrt::kernels::arm
