// The int8 GEMM of qu8s8_gemm_32x32__amx (gemm_u8s8_amx.cpp): uint8 activations × int8 weights
// (PanelN16K4) with AMX-INT8's tdpbusd, as a template over the tile operations (class Tiles:
// load_config, load, dpbusd, store, zero, release) so that the tests can run the same code with
// emulated tiles on CPUs without AMX (tests/kernels/test_x86_u8s8_amx_emulated.cpp).
// Include only from files built with AVX-512 flags (the epilogue, gemm_u8s8_epilogue_avx512.h).
//
// Tiles: palette 1 (8 tile registers of at most 16 rows × 64 bytes), all 8 configured as 16 rows
// × 64 bytes, once per call:
//   A(i)    = tmm4 + i: 16 activation rows × 64 bytes = 16 k-groups of 4 uint8 per row, loaded in
//             place from the quantized rows (stride A.ld);
//   B(j)    = tmm6 + j: 16 rows of 64 bytes, row g = k-group g of one weight panel (its 16 columns
//             × 4 int8). That is PanelN16K4's [K/4][16][4] as it lies in memory: 1 KiB read in
//             place with stride 64, no repacking;
//   C(i, j) = tmm(2i + j): 16 × 16 int32. tdpbusd C, A, B adds to C[m][n], for each k-group g,
//             Σ_{k<4} A[m][4g + k] · B[g][4n + k], u8 × s8 (Intel SDM, TDPBUSD), exact in int32.
// Register tile: 2 × 2 C tiles = 32 rows × 32 columns with 2 A and 2 B tiles, the 8 registers.
// Each step of 16 k-groups loads 4 tiles (4 KiB) for 4 tdpbusd: one load per tdpbusd, where 1 × 1
// needs two and 1 × 3 or 3 × 1 (7 registers) 4/3; a tdpbusd (16 × 16 × 64 products) takes the
// TMUL unit 16 cycles on Sapphire Rapids, time enough for its share of the loads from L1.
// 32 × 32 divides MiniLM's shapes: M = 128 (batch 1 × seq 128) = 4 × 32, N = 384 = 12 × 32 and
// 1536 = 48 × 32.
//
// Loop order, as the avx512vnni kernel: column blocks outside, row blocks inside, the whole depth
// accumulated in the C tiles. A block's two panels (12 KiB at K = 384, 48 KiB at K = 1536) stay in
// L1/L2 while the row blocks stream through them.
//
// Tails: no tile load reads past its operand (rows are padded to a multiple of 4 bytes only, and
// the last panel ends the weights); partial tiles are staged, zero-padded, in 1 KiB buffers:
//   K: a last step of g < 16 k-groups copies 4g bytes of each A row and g B rows (64 bytes each);
//      the staged bytes past them are zero, so the step's products there are 0;
//   M: a block of r <= 32 rows uses ceil(r/16) row tiles (as few as any tiling of 16-row tiles);
//      a row tile with fewer than 16 rows is staged at every step, its missing rows zero, and only
//      the block's rows are stored;
//   N: the last panel holds zeros past N (PanelN16K4's padding), so its B tile is read whole; a
//      block of <= 16 columns uses one column tile (there is no second panel to read); the
//      epilogue's masked stores write only columns < N.
// The sums are then stored (tilestored) into one of two 32 × 32 int32 buffers, acc[r·NT + j] one
// zmm per row r and panel j, and the outputs made by gemm_u8s8_epilogue_avx512.h: the avx512vnni
// kernel's own code, so from the same exact sums both kernels give the same floats, bit for bit.
// A block's epilogue runs one block late, between the next block's last tdpbusd and its tile
// stores, so that the vector units make a block's outputs while the tile unit computes the next.
//
// Measured on a 2-core Xeon VM with AMX (tdpbusd probe 6.2 Top/s), 64-byte aligned operands as
// the arena and the model file give them, M128 K384 N384 with bias: the tile work alone 10.4 µs,
// the epilogue alone 4.2 µs (its fp32 stores of C bound it: 4 cycles a zmm, 6 at N = 1536 where C
// leaves L1), 16.4 µs one after the other and 15.4 µs overlapped as above. Tried and dropped:
// the epilogue split into row chunks between every k-step (no faster at K = 384, slower at
// N = 1536), and software prefetch of the next step's A rows and B panels into L1 (5-20%
// slower: the tile loads already keep the load ports busy). Operands 16 bytes off a cache line
// cost 30% (each 64-byte tile row then splits across two lines). Kept: prefetch of the next
// column block's panels, a few lines per k-step (PanelPrefetch): in a model each layer's weights
// come from L3 or memory, and MiniLM int8 b1 s128 ran 3-4% faster with it (min 2.57-2.67 ms
// against 2.66-2.86 ms over four interleaved rounds).
#pragma once

#include <algorithm>
#include <cstring>

#include "kernels/x86/amx_tile_config.h"
#include "kernels/x86/gemm_u8s8_epilogue_avx512.h"
#include "kernels/x86/x86_kernels.h"

namespace encrt::kernels::x86 {
namespace {

namespace amx {

constexpr int kStepGroups = kTileRowBytes / kPanelK;  // k-groups per tdpbusd step: 16
static_assert(kStepGroups == kTileRows, "the rows of a B tile are the k-groups of an A tile row");
static_assert(kPanelN * kPanelK == kTileRowBytes, "a B tile row is one k-group of a weight panel");
static_assert(kPanelN * 4 == kTileRowBytes, "a C tile row is one panel's 16 int32 columns");
constexpr int kRowTiles = 2, kColTiles = 2;
constexpr int kMR = kRowTiles * kTileRows;  // 32 rows per block
constexpr int kNR = kColTiles * kPanelN;    // 32 columns per block

// The tile registers: C(i, j) = tmm0-3, A(i) = tmm4-5, B(j) = tmm6-7.
constexpr int tmm_c(int i, int j) { return kColTiles * i + j; }
constexpr int tmm_a(int i) { return kRowTiles * kColTiles + i; }
constexpr int tmm_b(int j) { return kRowTiles * kColTiles + kRowTiles + j; }
static_assert(tmm_b(kColTiles - 1) == 7, "palette 1 has 8 tile registers");

// Palette 1, tmm0-7 all 16 rows × 64 bytes.
inline TileConfig tile_config() {
  TileConfig c = empty_tile_config();
  for (int t = 0; t < 8; ++t) set_tile_shape(c, t, kTileRows, kTileRowBytes);
  return c;
}

// The next column block's weight panels, brought towards L1 a few lines per k-step while the
// row blocks of this one run (the weights of a model's layer are read once per run: they come
// from L3 or memory, not from L2 as in a benchmark that repeats one GEMM).
// At most kMaxLinesPerStep lines per step: with one row block (M <= 32) the next panels would take
// 32 lines a step at K = 1536 and crowd out the tile loads (measured: 70% slower on hot weights).
struct PanelPrefetch {
  static constexpr int kMaxLinesPerStep = 8;
  const char* next = nullptr;  // the next line to fetch
  const char* end = nullptr;
  int lines_per_step = 0;

  // Spreads `bytes` from `panels` over `steps` k-steps.
  void start(const int8_t* panels, size_t bytes, int steps) {
    next = reinterpret_cast<const char*>(panels);
    end = next + bytes;
    lines_per_step = std::min(kMaxLinesPerStep, static_cast<int>((bytes / 64 + steps - 1) / steps));
  }
  ENCRT_X86_INLINE void step() {
    for (int i = 0; i < lines_per_step && next < end; ++i, next += 64) _mm_prefetch(next, _MM_HINT_T0);
  }
};

// One block of rows and columns.
struct Block {
  int K4;              // k-groups of 4 in the whole depth
  const uint8_t* a;    // the block's first row of quantized activations
  size_t lda;
  int rows;            // the block's rows, 1..kMR
  const int8_t* w;     // the block's first weight panel
  size_t panel_bytes;  // K4 · 64
};

// Loads A(I) for the step at k-group g0 of `groups` groups: in place when the tile's 16 rows and
// 16 groups all exist, else staged into `stage` (the block's rows of this tile, 4·groups bytes of
// each, zeros after them; the rows past the block were zeroed at its start).
template <int I, class Tiles>
ENCRT_X86_INLINE void load_a(Tiles& tiles, const Block& b, int g0, int groups, uint8_t* stage) {
  const int rows = b.rows - I * kTileRows;  // >= 1
  const uint8_t* src = b.a + static_cast<size_t>(I) * kTileRows * b.lda + static_cast<size_t>(g0) * kPanelK;
  if (rows >= kTileRows && groups == kStepGroups) {
    tiles.template load<tmm_a(I)>(src, b.lda);
    return;
  }
  const int n = rows < kTileRows ? rows : kTileRows;
  const size_t bytes = static_cast<size_t>(groups) * kPanelK;
  for (int r = 0; r < n; ++r) {
    std::memcpy(stage + r * kTileRowBytes, src + r * b.lda, bytes);
    if (bytes < kTileRowBytes) std::memset(stage + r * kTileRowBytes + bytes, 0, kTileRowBytes - bytes);
  }
  tiles.template load<tmm_a(I)>(stage, kTileRowBytes);
}

// Loads B(J), panel J of the block, for the step at k-group g0: in place for 16 groups, else its
// `groups` rows staged into `stage` and the rest zero.
template <int J, class Tiles>
ENCRT_X86_INLINE void load_b(Tiles& tiles, const Block& b, int g0, int groups, int8_t* stage) {
  const int8_t* src = b.w + J * b.panel_bytes + static_cast<size_t>(g0) * kTileRowBytes;
  if (groups == kStepGroups) {
    tiles.template load<tmm_b(J)>(src, kTileRowBytes);
    return;
  }
  const size_t bytes = static_cast<size_t>(groups) * kTileRowBytes;
  std::memcpy(stage, src, bytes);
  std::memset(stage + bytes, 0, kTileBytes - bytes);
  tiles.template load<tmm_b(J)>(stage, kTileRowBytes);
}

// The exact int32 sums of a block of MT row tiles and NT column tiles, left in the C tiles.
template <int MT, int NT, class Tiles>
void accumulate(Tiles& tiles, const Block& b, PanelPrefetch& pf) {
  static_assert(MT >= 1 && MT <= kRowTiles && NT >= 1 && NT <= kColTiles, "a block has at most 2 × 2 tiles");
  alignas(64) uint8_t stage_a[MT][kTileBytes];
  alignas(64) int8_t stage_b[NT][kTileBytes];
  // The staging tile of the last row tile: its rows past the block stay zero.
  const int last_rows = b.rows - (MT - 1) * kTileRows;
  if (last_rows < kTileRows)
    std::memset(stage_a[MT - 1] + last_rows * kTileRowBytes, 0, static_cast<size_t>(kTileRows - last_rows) * kTileRowBytes);

  tiles.template zero<tmm_c(0, 0)>();
  if constexpr (NT == 2) tiles.template zero<tmm_c(0, 1)>();
  if constexpr (MT == 2) tiles.template zero<tmm_c(1, 0)>();
  if constexpr (MT == 2 && NT == 2) tiles.template zero<tmm_c(1, 1)>();
  for (int g0 = 0; g0 < b.K4; g0 += kStepGroups) {
    const int groups = b.K4 - g0 < kStepGroups ? b.K4 - g0 : kStepGroups;
    pf.step();
    load_a<0>(tiles, b, g0, groups, stage_a[0]);
    load_b<0>(tiles, b, g0, groups, stage_b[0]);
    tiles.template dpbusd<tmm_c(0, 0), tmm_a(0), tmm_b(0)>();
    if constexpr (NT == 2) {
      load_b<NT - 1>(tiles, b, g0, groups, stage_b[NT - 1]);
      tiles.template dpbusd<tmm_c(0, NT - 1), tmm_a(0), tmm_b(NT - 1)>();
    }
    if constexpr (MT == 2) {
      load_a<MT - 1>(tiles, b, g0, groups, stage_a[MT - 1]);
      tiles.template dpbusd<tmm_c(MT - 1, 0), tmm_a(MT - 1), tmm_b(0)>();
      if constexpr (NT == 2) tiles.template dpbusd<tmm_c(MT - 1, NT - 1), tmm_a(MT - 1), tmm_b(NT - 1)>();
    }
  }
}

// Stores the C tiles of a block of MT × NT tiles into acc[r·NT + j] (row r, panel j: one zmm of
// 16 columns): row r of C(i, j) goes to acc[(16i + r)·NT + j], stride NT zmm.
template <int MT, int NT, class Tiles>
void store_sums(Tiles& tiles, __m512i* acc) {
  constexpr size_t kAccStride = NT * sizeof(__m512i);
  tiles.template store<tmm_c(0, 0)>(acc, kAccStride);
  if constexpr (NT == 2) tiles.template store<tmm_c(0, NT - 1)>(acc + NT - 1, kAccStride);
  if constexpr (MT == 2) tiles.template store<tmm_c(MT - 1, 0)>(acc + kTileRows * NT, kAccStride);
  if constexpr (MT == 2 && NT == 2)
    tiles.template store<tmm_c(MT - 1, NT - 1)>(acc + kTileRows * NT + NT - 1, kAccStride);
}

// The two steps above for a block of mt × nt tiles (1..2 each).
template <class Tiles>
void accumulate(Tiles& tiles, const Block& b, int mt, int nt, PanelPrefetch& pf) {
  if (mt == 2)
    nt == 2 ? accumulate<2, 2>(tiles, b, pf) : accumulate<2, 1>(tiles, b, pf);
  else
    nt == 2 ? accumulate<1, 2>(tiles, b, pf) : accumulate<1, 1>(tiles, b, pf);
}
template <class Tiles>
void store_sums(Tiles& tiles, int mt, int nt, __m512i* acc) {
  if (mt == 2)
    nt == 2 ? store_sums<2, 2>(tiles, acc) : store_sums<2, 1>(tiles, acc);
  else
    nt == 2 ? store_sums<1, 2>(tiles, acc) : store_sums<1, 1>(tiles, acc);
}

// A block whose sums are stored and whose outputs are still to be made.
struct PendingBlock {
  U8S8TileOut out;
  U8S8EpilogueFn finish = nullptr;  // none yet
  int rows = 0;
  const __m512i* acc = nullptr;

  void run() {
    if (finish) finish(out, rows, acc);
  }
};

}  // namespace amx

template <class Tiles>
void qu8s8_amx_gemm(Tiles& tiles, int M, int N, int K, const QuantizedRows& A, const int8_t* W,
                    const int32_t* w_sum, const float* w_scale, float* C, int ldc, const GemmEpilogue& ep) {
  using namespace amx;
  if (M <= 0 || N <= 0) return;
  const TileConfig config = tile_config();
  tiles.load_config(config);
  Block b{};
  b.K4 = (K + kPanelK - 1) / kPanelK;
  b.lda = static_cast<size_t>(A.ld);
  b.panel_bytes = static_cast<size_t>(b.K4) * kPanelN * kPanelK;
  U8S8TileOut out{};
  out.a_scale = A.scale;
  out.a_zp = A.zero_point;
  out.w_sum = w_sum;
  out.w_scale = w_scale;
  out.C = C;
  out.ldc = static_cast<size_t>(ldc);
  out.ep = &ep;
  // Two buffers of sums: block i's are stored into one while block i - 1's epilogue reads the other.
  alignas(64) __m512i acc[2][kMR * kColTiles];
  int cur = 0;
  const int steps = (b.K4 + kStepGroups - 1) / kStepGroups;
  const int row_blocks = (M + kMR - 1) / kMR;
  PendingBlock pending;
  for (int n0 = 0; n0 < N; n0 += kNR) {
    const int cols = N - n0 < kNR ? N - n0 : kNR;
    const int nt = (cols + kPanelN - 1) / kPanelN;
    out.n0 = n0;
    out.last_cols = cols - (nt - 1) * kPanelN;
    b.w = W + static_cast<size_t>(n0 / kPanelN) * b.panel_bytes;
    const U8S8EpilogueFn finish = select_u8s8_epilogue<kColTiles>(nt, ep);
    PanelPrefetch pf;  // the next column block's panels, over this block's row blocks
    if (n0 + kNR < N) {
      const int next_nt = N - n0 - kNR > kPanelN ? 2 : 1;
      pf.start(b.w + kColTiles * b.panel_bytes, next_nt * b.panel_bytes, row_blocks * steps);
    }
    for (int m0 = 0; m0 < M; m0 += kMR) {
      b.rows = M - m0 < kMR ? M - m0 : kMR;
      b.a = A.data + static_cast<size_t>(m0) * b.lda;
      const int mt = b.rows > kTileRows ? 2 : 1;
      // The tile unit works through this block's tdpbusd while the vector units make the
      // previous block's outputs: its epilogue comes between the last tdpbusd and the stores.
      accumulate(tiles, b, mt, nt, pf);
      pending.run();
      store_sums(tiles, mt, nt, acc[cur]);
      out.m0 = m0;
      pending.out = out;
      pending.finish = finish;
      pending.rows = b.rows;
      pending.acc = acc[cur];
      cur ^= 1;
    }
  }
  pending.run();
  tiles.release();
}

}  // namespace
}  // namespace encrt::kernels::x86
