// A plain C++ model of AMX's palette 1 (8 tile registers of at most 16 rows × 64 bytes) and of
// LDTILECFG, TILELOADD, TDPBUSD, TDPBSSD, TDPBSUD, TILESTORED, TILEZERO and TILERELEASE, written
// from the Intel SDM's definitions, for the tests that run the AMX kernels' code on CPUs without
// AMX (test_x86_u8s8_amx_emulated.cpp, and the AMX attention in test_x86_attention.cpp). It
// refuses what the hardware would refuse (a product whose tile shapes do not fit or whose three
// tiles are not distinct; an invalid configuration; a tile instruction outside a configuration),
// any tile load that reads past a watched buffer, and any tile store into one. No ISA flags.
#pragma once

#if defined(ENCRT_ARCH_X86)

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulated_kernels.h"

namespace encrt::kernels::test {

// What the hardware would fault on (#UD, #GP) or what would read or write memory it must not.
struct TileFault : std::logic_error {
  using std::logic_error::logic_error;
};

inline void require(bool ok, const std::string& what) {
  if (!ok) throw TileFault(what);
}

// Palette 1: 8 tiles of at most 16 rows × 64 bytes (CPUID leaf 1DH on every AMX CPU so far).
class EmulatedTiles : public test::TileOperations {
 public:
  static constexpr int kTiles = 8, kMaxRows = 16, kMaxRowBytes = 64;

  // A buffer of the caller's: a tile load that touches it must lie inside it; no tile store may
  // touch it (the kernel stores tiles into its own buffer only).
  void watch(const void* p, size_t bytes, const char* name) {
    watched_.push_back({static_cast<const uint8_t*>(p), bytes, name});
  }

  // LDTILECFG m512: the palette, start_row, per tile colsb (bytes per row, uint16 at 16 + 2t) and
  // rows (uint8 at 48 + t); reserved bytes (2-15) zero; a tile is either unused (0 rows, 0
  // bytes) or has both; palette 1 names tiles 0-7 only. Every tile's data becomes zero.
  void load_config(const uint8_t (&raw)[64]) override {
    require(raw[0] == 1, "ldtilecfg: palette " + std::to_string(raw[0]) + ", not 1");
    require(raw[1] == 0, "ldtilecfg: start_row is not 0");
    for (int i = 2; i < 16; ++i) require(raw[i] == 0, "ldtilecfg: reserved byte " + std::to_string(i) + " not 0");
    for (int t = 0; t < 16; ++t) {
      const int colsb = raw[16 + 2 * t] | raw[17 + 2 * t] << 8, rows = raw[48 + t];
      const std::string tile = "ldtilecfg: tmm" + std::to_string(t);
      if (t >= kTiles) {
        require(colsb == 0 && rows == 0, tile + " does not exist in palette 1");
        continue;
      }
      require(rows <= kMaxRows && colsb <= kMaxRowBytes, tile + " is larger than 16 rows x 64 bytes");
      require((rows == 0) == (colsb == 0), tile + ": rows and bytes per row must be both zero or both set");
      tiles_[t].rows = rows;
      tiles_[t].colsb = colsb;
    }
    for (Tile& t : tiles_) std::memset(t.data, 0, sizeof t.data);
    configured_ = true;
    ++configs;
  }

  // TILELOADD tmm, [base + stride·r]: rows r < tmm.rows, tmm.colsb bytes each; the rest zero.
  void load(int T, const void* base, size_t stride) override {
    Tile& t = tile(T, "tileloadd");
    const uint8_t* p = static_cast<const uint8_t*>(base);
    for (int r = 0; r < kMaxRows; ++r) {
      std::memset(t.data[r], 0, kMaxRowBytes);
      if (r >= t.rows) continue;
      check_read(p + r * stride, t.colsb, T);
      std::memcpy(t.data[r], p + r * stride, t.colsb);
    }
    ++loads;
  }

  // TDPBUSD tmm1, tmm2, tmm3 (C, A, B): A's bytes unsigned, B's signed (dot below).
  void dpbusd(int kC, int kA, int kB) override {
    dot(kC, kA, kB, false, true, "tdpbusd");
    ++dpbusds;
  }
  // TDPBSSD: both signed.
  void dpbssd(int kC, int kA, int kB) override {
    dot(kC, kA, kB, true, true, "tdpbssd");
    ++dpbssds;
  }
  // TDPBSUD: A signed, B unsigned.
  void dpbsud(int kC, int kA, int kB) override {
    dot(kC, kA, kB, true, false, "tdpbsud");
    ++dpbsuds;
  }

  // TILESTORED [base + stride·r], tmm: rows r < tmm.rows, tmm.colsb bytes each.
  void store(int T, void* base, size_t stride) override {
    const Tile& t = tile(T, "tilestored");
    uint8_t* p = static_cast<uint8_t*>(base);
    for (int r = 0; r < t.rows; ++r) {
      check_write(p + r * stride, t.colsb, T);
      std::memcpy(p + r * stride, t.data[r], t.colsb);
    }
  }

  // TILEZERO tmm.
  void zero(int T) override {
    std::memset(tile(T, "tilezero").data, 0, sizeof tiles_[0].data);
  }

  // TILERELEASE: back to the init state (no configuration, tiles zero).
  void release() override {
    configured_ = false;
    for (Tile& t : tiles_) t = Tile{};
  }

  bool configured() const { return configured_; }
  int configs = 0;
  long loads = 0, dpbusds = 0, dpbssds = 0, dpbsuds = 0;

 private:
  struct Tile {
    int rows = 0, colsb = 0;
    uint8_t data[kMaxRows][kMaxRowBytes] = {};
  };
  struct Watched {
    const uint8_t* begin;
    size_t bytes;
    const char* name;
  };

  // TDPB[SU][SU]D tmm1, tmm2, tmm3 (C, A, B): #UD unless the three are distinct, C.rows ==
  // A.rows, C.colsb == B.colsb and A.colsb / 4 == B.rows. Then, Intel's pseudocode:
  //   FOR m < C.rows: FOR k < A.colsb / 4: FOR n < C.colsb / 4:
  //     C.row[m].dword[n] += Σ_{i<4} Extend(A.row[m].dword[k].byte[i])
  //                               · Extend(B.row[k].dword[n].byte[i])   (32-bit, wrapping)
  //   (Extend: SignExtend for a signed operand, ZeroExtend for an unsigned one), and the bytes of
  //   each row past C.colsb, and the rows past C.rows, become zero.
  void dot(int kC, int kA, int kB, bool a_signed, bool b_signed, const std::string& name) {
    require(kC != kA && kA != kB && kC != kB, name + ": its three tiles must be distinct");
    Tile& c = tile(kC, (name + " (C)").c_str());
    const Tile& a = tile(kA, (name + " (A)").c_str());
    const Tile& b = tile(kB, (name + " (B)").c_str());
    require(c.rows == a.rows, name + ": C and A rows differ");
    require(c.colsb == b.colsb, name + ": C and B bytes per row differ");
    require(a.colsb % 4 == 0 && a.colsb / 4 == b.rows, name + ": A's k-groups are not B's rows");
    const auto extend = [](uint8_t byte, bool is_signed) {
      return is_signed ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
    };
    for (int m = 0; m < c.rows; ++m) {
      for (int k = 0; k < a.colsb / 4; ++k)
        for (int n = 0; n < c.colsb / 4; ++n) {
          uint32_t acc;
          std::memcpy(&acc, c.data[m] + 4 * n, 4);
          for (int i = 0; i < 4; ++i)
            acc += static_cast<uint32_t>(extend(a.data[m][4 * k + i], a_signed) * extend(b.data[k][4 * n + i], b_signed));
          std::memcpy(c.data[m] + 4 * n, &acc, 4);
        }
      std::memset(c.data[m] + c.colsb, 0, kMaxRowBytes - c.colsb);
    }
    for (int m = c.rows; m < kMaxRows; ++m) std::memset(c.data[m], 0, kMaxRowBytes);
  }

  // #UD for a tile instruction without a configuration or on a tile the configuration leaves unused.
  Tile& tile(int t, const char* instruction) {
    require(configured_, std::string(instruction) + " without a tile configuration");
    require(t >= 0 && t < kTiles, std::string(instruction) + ": no tile " + std::to_string(t));
    require(tiles_[t].rows > 0, std::string(instruction) + ": tmm" + std::to_string(t) + " is not configured");
    return tiles_[t];
  }
  static bool overlaps(const uint8_t* p, size_t n, const Watched& w) { return p < w.begin + w.bytes && w.begin < p + n; }
  void check_read(const uint8_t* p, size_t n, int t) const {
    for (const Watched& w : watched_)
      if (overlaps(p, n, w))
        require(p >= w.begin && p + n <= w.begin + w.bytes,
                "tileloadd tmm" + std::to_string(t) + " reads across the bounds of " + w.name);
  }
  void check_write(const uint8_t* p, size_t n, int t) const {
    for (const Watched& w : watched_)
      require(!overlaps(p, n, w), "tilestored tmm" + std::to_string(t) + " writes into " + std::string(w.name));
  }

  Tile tiles_[kTiles];
  bool configured_ = false;
  std::vector<Watched> watched_;
};

}  // namespace encrt::kernels::test

#endif  // ENCRT_ARCH_X86
