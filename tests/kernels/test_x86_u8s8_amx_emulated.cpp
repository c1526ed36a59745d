// The AMX int8 GEMM (gemm_u8s8_amx.h, the code of qu8s8_gemm_32x32__amx) run with emulated tiles:
// a plain C++ model of palette 1's 8 tile registers and of LDTILECFG, TILELOADD, TDPBUSD,
// TILESTORED, TILEZERO and TILERELEASE, written from the Intel SDM's definitions. This checks the
// kernel's tile configuration, operand layout (A rows in place with stride ld, B = a weight
// panel's 16 k-groups in place), staging of partial tiles (K, M and N tails), the tile stores and
// the epilogue's wiring on any AVX-512 CPU (every AMX CPU has AVX-512), bit for bit: without an
// epilogue against ref::gemm_u8s8, with every epilogue against the avx512vnni kernel (whose float
// epilogue it shares) where the CPU has AVX512-VNNI. The emulation also refuses what the hardware
// would refuse (a tdpbusd whose tile shapes do not fit, or whose three tiles are not distinct;
// an invalid configuration; a tile instruction outside a configuration), any tile load that
// reads past a caller's buffer, and any tile store into one. The native kernel is held to the
// reference in test_simd_gemm.cpp where the CPU has AMX (first run on real tiles on a Xeon VM
// with AMX-INT8: every case passed, as did conformance cpu:amx). The kernel code is built in
// emulated_u8s8_amx_avx512.cpp (emulated_kernels.h says why); the emulation and the tests here
// have no ISA flags.
#include <catch2/catch.hpp>

#if defined(ENCRT_ARCH_X86)

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "kernels/ref/ref_kernels.h"
#include "emulated_kernels.h"
#include "emulated_tiles.h"
#include "epilogue_cases.h"
#include "kernels/x86/x86_kernels.h"

namespace {

using namespace encrt::kernels;

// An ldtilecfg operand, field by field (Intel SDM vol. 1, "Tile Configuration"): palette 1 with
// tmm0-7 all 16 rows × 64 bytes, the configuration the kernel loads, unless altered.
struct TileConfigBytes {
  uint8_t raw[64] = {};
  TileConfigBytes() {
    raw[0] = 1;
    for (int t = 0; t < 8; ++t) rows(t, 16), colsb(t, 64);
  }
  void palette(uint8_t p) { raw[0] = p; }
  void rows(int t, uint8_t r) { raw[48 + t] = r; }
  void colsb(int t, uint16_t c) {
    raw[16 + 2 * t] = static_cast<uint8_t>(c & 0xff);
    raw[17 + 2 * t] = static_cast<uint8_t>(c >> 8);
  }
};

constexpr float kSentinel = -777.25f;

using namespace encrt::kernels::test;  // EpilogueCase, kPlain, kRotating (epilogue_cases.h)

// One int8 GEMM problem with its quantized operands, sized exactly (so that the emulation's
// bounds checks see any read past them).
struct Problem {
  int M, N, K, ldq, ldc, ldr;
  EpilogueCase epilogue;
  std::vector<uint8_t> q;
  std::vector<float> scale, w_scale, bias, residual;
  std::vector<int32_t> zp, w_sum;
  std::vector<int8_t> w;

  // Activations and weights quantized from uniform floats (raw = false), or raw bytes over their
  // whole ranges, -128 included (raw = true: the largest sums).
  Problem(int M_, int N_, int K_, int ld_extra, const EpilogueCase& e, uint32_t seed, bool raw = false)
      : M(M_), N(N_), K(K_), ldq(round_up(K_, kPanelK) + ld_extra), ldc(N_ + 3), ldr(N_ + 5), epilogue(e) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::uniform_int_distribution<int> byte(0, 255);
    q.resize(static_cast<size_t>(M) * ldq);
    scale.resize(M);
    zp.resize(M);
    w.resize(panel_i8_size(N, K));
    w_scale.resize(N);
    w_sum.resize(N);
    if (raw) {
      for (uint8_t& x : q) x = static_cast<uint8_t>(byte(rng));
      for (int m = 0; m < M; ++m) scale[m] = 0.001f * (1 + m % 7), zp[m] = byte(rng);
      std::fill(w.begin(), w.end(), 0);
      for (int n = 0; n < N; ++n) {
        w_sum[n] = 0;
        w_scale[n] = 0.002f * (1 + n % 5);
        for (int k = 0; k < K; ++k) {
          const int8_t v = static_cast<int8_t>(byte(rng) - 128);
          w[panel_i8_index(n, k, K)] = v;
          w_sum[n] += v;
        }
      }
    } else {
      std::vector<float> a(static_cast<size_t>(M) * K), wf(static_cast<size_t>(N) * K);
      for (float& x : a) x = dist(rng);
      for (float& x : wf) x = dist(rng);
      ref::quantize_rows_u8(M, K, a.data(), K, nullptr, q.data(), ldq, scale.data(), zp.data());
      ref::quantize_pack_weights_i8(N, K, wf.data(), w.data(), w_scale.data(), w_sum.data());
      // The row padding [K, ldq) is readable but its values must not matter (kernel_types.h).
      for (int m = 0; m < M; ++m)
        for (int k = K; k < ldq; ++k) q[static_cast<size_t>(m) * ldq + k] = static_cast<uint8_t>(byte(rng));
    }
    bias.resize(N);
    for (float& x : bias) x = 2 * dist(rng);
    residual.resize(static_cast<size_t>(M) * ldr);
    for (float& x : residual) x = 3 * dist(rng);
    if (e.residual == Residual::kAliasC) ldr = ldc;
  }

  QuantizedRows rows() const { return {q.data(), ldq, scale.data(), zp.data()}; }

  std::vector<float> initial_c() const {
    std::vector<float> c(static_cast<size_t>(M) * ldc, kSentinel);
    if (epilogue.residual == Residual::kAliasC)
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) c[static_cast<size_t>(m) * ldc + n] = residual[static_cast<size_t>(m) * (N + 5) + n];
    return c;
  }
  GemmEpilogue make_epilogue(float* c) const {
    GemmEpilogue ep;
    ep.bias = epilogue.bias ? bias.data() : nullptr;
    ep.activation = epilogue.activation;
    if (epilogue.residual == Residual::kSeparate) {
      ep.residual = residual.data();
      ep.ldr = ldr;
    } else if (epilogue.residual == Residual::kAliasC) {
      ep.residual = c;
      ep.ldr = ldc;
    }
    return ep;
  }
  std::string describe() const {
    std::ostringstream s;
    s << "M=" << M << " N=" << N << " K=" << K << " ld=" << ldq << " epilogue=" << epilogue.name;
    return s.str();
  }
};

// The emulated AMX kernel's output, with the emulation's checks of what it did.
std::vector<float> run_emulated(const Problem& p) {
  std::vector<float> c = p.initial_c();
  const GemmEpilogue ep = p.make_epilogue(c.data());
  EmulatedTiles tiles;
  tiles.watch(p.q.data(), p.q.size(), "the quantized activations");
  tiles.watch(p.w.data(), p.w.size(), "the weights");
  tiles.watch(c.data(), c.size() * sizeof(float), "C");
  if (ep.residual && ep.residual != c.data()) tiles.watch(p.residual.data(), p.residual.size() * sizeof(float), "the residual");
  test::qu8s8_amx_gemm_emulated(tiles, p.M, p.N, p.K, p.rows(), p.w.data(), p.w_sum.data(), p.w_scale.data(), c.data(), p.ldc, ep);
  INFO(p.describe());
  CHECK(tiles.configs == 1);         // one ldtilecfg per call
  CHECK_FALSE(tiles.configured());   // and tilerelease at its end
  // One tdpbusd per (16-row tile, panel, step of 16 k-groups): no more than the shape needs.
  const long row_tiles = (p.M / 32) * 2 + (p.M % 32 == 0 ? 0 : p.M % 32 > 16 ? 2 : 1);
  const long col_tiles = (p.N + 15) / 16, steps = (p.K + 63) / 64;
  CHECK(tiles.dpbusds == row_tiles * col_tiles * steps);
  return c;
}

// Bit for bit (memcmp of each float: -0 and +0 differ), sentinels past N included.
int count_differences(const Problem& p, const std::vector<float>& got, const std::vector<float>& want,
                      std::ostringstream& first) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && bad++ < 3)
      first << " (" << p.describe() << " m=" << i / p.ldc << " n=" << i % p.ldc << " got " << got[i] << " want "
            << want[i] << ")";
  return bad;
}

}  // namespace

TEST_CASE("AMX int8 GEMM code with emulated tiles matches ref::gemm_u8s8 and the avx512vnni kernel bit for bit",
          "[x86][gemm][u8s8][amx]") {
  if (!isa_supported(kIsaAvx2 | kIsaAvx512)) {
    WARN("not tested: this CPU has no AVX-512 (the AMX kernel's epilogue)");
    return;
  }
  const bool vnni = isa_supported(kIsaAvx2 | kIsaAvx512 | kIsaAvx512Vnni);
  if (!vnni) WARN("the epilogues are not compared: this CPU has no AVX512-VNNI for the avx512vnni kernel");
  int bad_ref = 0, bad_vnni = 0, problems = 0;
  std::ostringstream first;
  uint32_t seed = 7;
  size_t rotation = 0;
  // M and N around the 16-row / 16-column tiles and the 32 × 32 block; K with tails of 1-3 bytes
  // (K % 4) and of 1-15 k-groups (K4 % 16), up to several steps.
  for (int M : {1, 5, 15, 16, 17, 31, 32, 33, 48, 70})
    for (int N : {1, 15, 16, 17, 31, 32, 33, 48, 100})
      for (int K : {1, 2, 3, 4, 5, 60, 63, 64, 65, 66, 67, 127, 129, 385}) {
        const int ld_extra = (M + N + K) % 3 == 0 ? 0 : 8;  // rows padded to 4 bytes only, or more
        for (const EpilogueCase& e : {kPlain, kRotating[rotation++ % std::size(kRotating)]}) {
          const Problem p(M, N, K, ld_extra, e, seed++);
          ++problems;
          const std::vector<float> got = run_emulated(p);
          if (e.bias == false && e.activation == Activation::kNone && e.residual == Residual::kNone) {
            std::vector<float> want = p.initial_c();
            ref::gemm_u8s8(M, N, K, p.rows(), p.w.data(), p.w_sum.data(), p.w_scale.data(), want.data(), p.ldc,
                           GemmEpilogue{});
            bad_ref += count_differences(p, got, want, first);
          }
          if (vnni) {
            std::vector<float> want = p.initial_c();
            x86::qu8s8_gemm_8x48__avx512vnni(M, N, K, p.rows(), p.w.data(), p.w_sum.data(), p.w_scale.data(),
                                             want.data(), p.ldc, p.make_epilogue(want.data()));
            bad_vnni += count_differences(p, got, want, first);
          }
        }
      }
  INFO(problems << " problems;" << first.str());
  CHECK(bad_ref == 0);
  CHECK(bad_vnni == 0);
}

TEST_CASE("AMX int8 GEMM code with emulated tiles: full-range bytes stay exact", "[x86][gemm][u8s8][amx]") {
  if (!isa_supported(kIsaAvx2 | kIsaAvx512)) {
    WARN("not tested: this CPU has no AVX-512 (the AMX kernel's epilogue)");
    return;
  }
  // Activations over 0..255 and weights over -128..127 (the quantizer never makes -128): the
  // largest products and sums tdpbusd can see, against the reference's int32 sums.
  int bad = 0;
  std::ostringstream first;
  for (int K : {37, 64, 1537})
    for (int M : {7, 33}) {
      const Problem p(M, 50, K, 4, kPlain, 1000 + K + M, /*raw=*/true);
      const std::vector<float> got = run_emulated(p);
      std::vector<float> want = p.initial_c();
      ref::gemm_u8s8(p.M, p.N, p.K, p.rows(), p.w.data(), p.w_sum.data(), p.w_scale.data(), want.data(), p.ldc,
                     GemmEpilogue{});
      bad += count_differences(p, got, want, first);
    }
  INFO(first.str());
  CHECK(bad == 0);
}

TEST_CASE("emulated tiles refuse what the hardware refuses", "[x86][amx]") {
  // The emulation's own checks, so that a kernel bug of these kinds cannot pass silently.
  EmulatedTiles tiles;
  CHECK_THROWS_AS(tiles.zero(0), TileFault);  // no configuration yet
  TileConfigBytes config;
  config.palette(0);
  CHECK_THROWS_AS(tiles.load_config(config.raw), TileFault);
  config = TileConfigBytes();
  config.rows(3, 17);
  CHECK_THROWS_AS(tiles.load_config(config.raw), TileFault);
  config = TileConfigBytes();
  config.rows(8, 1);  // palette 1 has tmm0-7
  config.colsb(8, 4);
  CHECK_THROWS_AS(tiles.load_config(config.raw), TileFault);
  config = TileConfigBytes();
  config.colsb(6, 32);  // B of 16 rows × 32 bytes: C (64 bytes per row) does not fit it
  tiles.load_config(config.raw);
  CHECK_THROWS_AS((tiles.dpbusd(0, 4, 6)), TileFault);
  CHECK_NOTHROW((tiles.dpbusd(0, 4, 7)));
  CHECK_THROWS_AS((tiles.dpbusd(0, 0, 7)), TileFault);  // tiles not distinct
  config = TileConfigBytes();
  config.colsb(4, 60);  // A of 15 k-groups: B has 16 rows
  tiles.load_config(config.raw);
  CHECK_THROWS_AS((tiles.dpbusd(0, 4, 6)), TileFault);
  // Loads past a watched buffer, stores into one.
  tiles.load_config(TileConfigBytes().raw);
  std::vector<uint8_t> buffer(16 * 64 - 1);
  tiles.watch(buffer.data(), buffer.size(), "buffer");
  CHECK_THROWS_AS(tiles.load(4, buffer.data(), 64), TileFault);
  CHECK_NOTHROW(tiles.load(4, buffer.data(), 63));
  CHECK_THROWS_AS(tiles.store(0, buffer.data(), 64), TileFault);
  // tdpbusd's arithmetic on one known row: A = bytes 1..64 (u8), B row k = -(k + 1) in byte i of
  // every column: C[0][n] = Σ_k Σ_i (4k + i + 1) · -(k + 1).
  alignas(64) uint8_t a[16][64] = {}, b[16][64] = {};
  for (int i = 0; i < 64; ++i) a[0][i] = static_cast<uint8_t>(i + 1);
  for (int k = 0; k < 16; ++k)
    for (int i = 0; i < 64; ++i) b[k][i] = static_cast<uint8_t>(-(k + 1));
  tiles.zero(0);
  tiles.load(4, a, 64);
  tiles.load(6, b, 64);
  tiles.dpbusd(0, 4, 6);
  alignas(64) int32_t c[16][16];
  tiles.store(0, c, 64);
  int32_t want = 0;
  for (int k = 0; k < 16; ++k)
    for (int i = 0; i < 4; ++i) want += (4 * k + i + 1) * -(k + 1);
  for (int n = 0; n < 16; ++n) CHECK(c[0][n] == want);
  CHECK(c[1][0] == 0);
  // 255 · -128 · 64 per dpbusd, accumulated 2^11 times: wraps modulo 2^32 as the hardware does.
  std::memset(a, 255, sizeof a);
  std::memset(b, 0x80, sizeof b);
  tiles.zero(1);
  tiles.load(4, a, 64);
  tiles.load(6, b, 64);
  for (int i = 0; i < 2048; ++i) tiles.dpbusd(1, 4, 6);
  tiles.store(1, c, 64);
  CHECK(c[15][15] == static_cast<int32_t>(static_cast<uint32_t>(-255 * 128 * 64) * 2048u));
  tiles.release();
  CHECK_THROWS_AS(tiles.load(4, a, 64), TileFault);
}

#endif  // ENCRT_ARCH_X86
