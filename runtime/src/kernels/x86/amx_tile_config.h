// AMX's tile configuration (palette 1), shared by the AMX kernels (gemm_u8s8_amx.h,
// attention_i8_amx.h) and their emulated-tile tests. No ISA flags needed: data only.
#pragma once

#include <cstdint>
#include <cstring>

namespace encrt::kernels::x86 {
namespace {
namespace amx {

constexpr int kTiles = 8;                              // tile registers of palette 1
constexpr int kTileRows = 16;                          // rows of a tile at most (palette 1)
constexpr int kTileRowBytes = 64;                      // bytes per tile row at most (palette 1)
constexpr int kTileBytes = kTileRows * kTileRowBytes;  // 1 KiB

// The 64-byte operand of ldtilecfg (Intel SDM vol. 1, "Tile Configuration"): the palette, the
// row to restart from (0), and per tile register its bytes per row and rows; unused fields zero.
struct alignas(64) TileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

// Palette 1 with no tile configured.
inline TileConfig empty_tile_config() {
  TileConfig c;
  std::memset(&c, 0, sizeof c);
  c.palette_id = 1;
  return c;
}

inline void set_tile_shape(TileConfig& c, int tile, int rows, int row_bytes) {
  c.rows[tile] = static_cast<uint8_t>(rows);
  c.colsb[tile] = static_cast<uint16_t>(row_bytes);
}

}  // namespace amx
}  // namespace
}  // namespace encrt::kernels::x86
