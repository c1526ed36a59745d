// Just enough of CUDA's execution model on the host to run a kernel's own source there: one host
// thread per CUDA thread of a block (blocks one after another), __syncthreads as a barrier of
// the block, the warp's shuffles and votes through exchange slots and a barrier of the warp, and
// mma.sync.m16n8k16.row.col.f32.f16.f16.f32 computed from the fragments as the PTX ISA's tables
// ("Matrix Fragments for mma.m16n8k16 with floating point type") place them, likewise
// mma.sync.m16n8k32.row.col.s32.s8.s8.s32 ("Matrix Fragments for mma.m16n8k32"), and cp.async as
// a plain copy (its commit and wait are then nothing to do: the copy has landed when it returns). What it checks: a
// kernel's indexing, tiling, masking and softmax logic against a reference on the host. What it
// cannot: the hardware itself (timing, the tensor cores' internal rounding, memory ordering
// beyond the barriers), which waits for a GPU run. Include this before the kernel's .cuh, which
// then compiles with ENCRT_CUDA_HOST_EMULATION.
#pragma once

#define ENCRT_CUDA_HOST_EMULATION 1

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>  // the vector types (uint4) and the qualifiers this file redefines
#include <vector_functions.h>  // make_uint4

#include "core/half.h"

// The kernel's qualifiers as host C++: __shared__ as a function-local static (one block runs at
// a time, so all its threads see the one instance).
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __forceinline__
#define __forceinline__ inline
#undef __launch_bounds__
#define __launch_bounds__(threads)
#undef __align__
#define __align__(n) alignas(n)
#undef __shared__
#define __shared__ static

struct __half {
  uint16_t bits;
};
struct __half2 {
  __half x, y;
};
inline __half __float2half_rn(float f) { return __half{encrt::float_to_half(f)}; }
inline uint16_t __half_as_ushort(__half h) { return h.bits; }
inline __half2 __floats2half2_rn(float lo, float hi) { return {__float2half_rn(lo), __float2half_rn(hi)}; }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

namespace encrt::emulation {

struct Index {
  unsigned x = 0, y = 0, z = 0;
};

// A reusable barrier of n threads.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const long generation = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int n_, waiting_ = 0;
  long generation_ = 0;
};

constexpr int kMaxWarps = 8;

// What the warps of the running block exchange.
struct Warp {
  Barrier barrier{32};
  float f[32];
  int i[32];
  uint32_t a[32][4];
  uint32_t b[32][2];
};

struct Block {
  int threads = 0;
  Barrier* barrier = nullptr;
  Warp* warps = nullptr;
};

inline Block& block() {
  static Block b;
  return b;
}
inline thread_local Index thread_index, block_index;

inline Warp& my_warp() { return block().warps[thread_index.x / 32]; }
inline int my_lane() { return static_cast<int>(thread_index.x % 32); }

inline float half_lo(uint32_t r) { return half_to_float(static_cast<uint16_t>(r & 0xffffu)); }
inline float half_hi(uint32_t r) { return half_to_float(static_cast<uint16_t>(r >> 16)); }

// Runs kernel() on a grid of blocks of `threads` threads (a multiple of 32, at most 256).
inline void launch(Index grid, int threads, const std::function<void()>& kernel) {
  Barrier barrier(threads);
  std::vector<Warp> warps(static_cast<size_t>(threads / 32));
  block() = Block{threads, &barrier, warps.data()};
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
          pool.emplace_back([&, t, x, y, z] {
            thread_index = {static_cast<unsigned>(t), 0, 0};
            block_index = {x, y, z};
            kernel();
          });
        for (std::thread& t : pool) t.join();
      }
  block() = Block{};
}

}  // namespace encrt::emulation

#define threadIdx (encrt::emulation::thread_index)
#define blockIdx (encrt::emulation::block_index)
#define blockDim (encrt::emulation::Index{static_cast<unsigned>(encrt::emulation::block().threads), 1, 1})

inline void __syncthreads() { encrt::emulation::block().barrier->wait(); }

inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  encrt::emulation::Warp& w = encrt::emulation::my_warp();
  const int lane = encrt::emulation::my_lane();
  w.f[lane] = v;
  w.barrier.wait();
  const float got = w.f[lane ^ lane_mask];
  w.barrier.wait();
  return got;
}

inline bool __any_sync(unsigned, bool v) {
  encrt::emulation::Warp& w = encrt::emulation::my_warp();
  const int lane = encrt::emulation::my_lane();
  w.i[lane] = v ? 1 : 0;
  w.barrier.wait();
  bool any = false;
  for (int l = 0; l < 32; ++l) any = any || w.i[l] != 0;
  w.barrier.wait();
  return any;
}

// D = A·B + C for the warp, from each lane's fragments. PTX's tables, for lane = 4·groupID +
// threadID_in_group (g, t): A (16x16, row-major), element i of 8 (two per register, the lower
// index in the low half): row g, + 8 for i in {2, 3, 6, 7}; column 2t + (i & 1), + 8 for i >= 4.
// B (16x8, column-major), element i of 4: row 2t + (i & 1), + 8 for i >= 2; column g. C and D
// (16x8 fp32), element i of 4: row g, + 8 for i >= 2; column 2t + (i & 1). Products and sums in
// fp32 (the tensor cores' own rounding of the sum is not modelled).
inline void emulated_mma_m16n8k16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  using namespace encrt::emulation;
  Warp& w = my_warp();
  const int lane = my_lane();
  for (int r = 0; r < 4; ++r) w.a[lane][r] = a[r];
  w.b[lane][0] = b0;
  w.b[lane][1] = b1;
  w.barrier.wait();
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 8; ++i) {
      const uint32_t reg = w.a[l][i / 2];
      const int row = g + ((i & 2) ? 8 : 0), col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = (i & 1) ? half_hi(reg) : half_lo(reg);
    }
    for (int i = 0; i < 4; ++i) {
      const uint32_t reg = w.b[l][i / 2];
      B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = (i & 1) ? half_hi(reg) : half_lo(reg);
    }
  }
  w.barrier.wait();  // every lane has read the fragments before any lane's next mma writes them
  const int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    float sum = c[i];
    for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
    c[i] = sum;
  }
}

// D = A·B + C for the int8 mma.sync m16n8k32 (PTX ISA 9.7.14.5.10, "Matrix Fragments for
// mma.m16n8k32", .s8 multiplicands, .s32 accumulators), for lane = 4·g + t and element i of a
// fragment (four per register, the lowest byte the lowest element): A (16x32, row-major),
// element i of 16: row g, + 8 for i in 4..7 and 12..15; column 4t + (i & 3), + 16 for i >= 8.
// B (32x8, column-major), element i of 8: row 4t + (i & 3), + 16 for i >= 4; column g. C and D
// (16x8 s32), element i of 4: row g, + 8 for i >= 2; column 2t + (i & 1). Sums modulo 2^32.
inline void emulated_mma_m16n8k32_s8(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  using namespace encrt::emulation;
  Warp& w = my_warp();
  const int lane = my_lane();
  for (int r = 0; r < 4; ++r) w.a[lane][r] = a[r];
  w.b[lane][0] = b0;
  w.b[lane][1] = b1;
  w.barrier.wait();
  auto byte = [](uint32_t reg, int j) { return static_cast<int32_t>(static_cast<int8_t>((reg >> (8 * j)) & 0xffu)); };
  int32_t A[16][32], B[32][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 16; ++i) {
      const int row = g + ((i & 4) ? 8 : 0), col = 4 * t + (i & 3) + (i >= 8 ? 16 : 0);
      A[row][col] = byte(w.a[l][i / 4], i & 3);
    }
    for (int i = 0; i < 8; ++i) B[4 * t + (i & 3) + (i >= 4 ? 16 : 0)][g] = byte(w.b[l][i / 4], i & 3);
  }
  w.barrier.wait();  // every lane has read the fragments before any lane's next mma writes them
  const int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    uint32_t sum = static_cast<uint32_t>(c[i]);
    for (int k = 0; k < 32; ++k) sum += static_cast<uint32_t>(A[row][k] * B[k][col]);
    c[i] = static_cast<int32_t>(sum);
  }
}

namespace encrt::emulation {

// The global memory a test lets a kernel's cp.async read (none registered: any), and how many
// copies fell outside it: a kernel that reads past a row or a matrix is caught even where the
// bytes it read would not change its results.
struct Readable {
  std::mutex mutex;
  std::vector<std::pair<const unsigned char*, size_t>> ranges;
  long outside = 0;
};
inline Readable& readable() {
  static Readable r;
  return r;
}
inline void allow_reads(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(readable().mutex);
  readable().ranges.emplace_back(static_cast<const unsigned char*>(p), bytes);
}
// Clears the ranges; returns the copies outside them since the last call.
inline long reset_reads() {
  std::lock_guard<std::mutex> lock(readable().mutex);
  const long outside = readable().outside;
  readable().ranges.clear();
  readable().outside = 0;
  return outside;
}

}  // namespace encrt::emulation

// cp.async of `bytes` from global to shared memory, done at once (after the bounds check).
inline void emulated_cp_async(void* shared, const void* global, int bytes) {
  encrt::emulation::Readable& r = encrt::emulation::readable();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto* p = static_cast<const unsigned char*>(global);
    bool inside = r.ranges.empty();
    for (const auto& [base, size] : r.ranges) inside = inside || (p >= base && p + bytes <= base + size);
    if (!inside) {
      ++r.outside;
      return;
    }
  }
  std::memcpy(shared, global, static_cast<size_t>(bytes));
}
