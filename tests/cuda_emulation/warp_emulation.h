// Just enough of CUDA's execution model on the host to run a kernel's own source there: one
// fiber per CUDA thread of a block (blocks one after another, the fibers of one host thread taking
// turns at each barrier, under one of three schedules that expose a missing barrier in different
// ways (Schedule, below): far cheaper than as many host threads), __syncthreads as a barrier of
// the block, the warp's shuffles and votes through exchange slots and a barrier of the warp, and
// mma.sync.m16n8k16.row.col.f32.f16.f16.f32 (and .bf16.bf16) computed from the fragments as the PTX
// ISA's tables ("Matrix Fragments for mma.m16n8k16 with floating point type") place them, likewise
// mma.sync.m16n8k32.row.col.s32.s8.s8.s32 ("Matrix Fragments for mma.m16n8k32") and its .u8.s8
// variant, a kernel's dynamic shared memory as one buffer of the test's, and cp.async landing at
// either end of what the PTX rules allow (Landing, below): late, its bytes read when it is issued
// and written to shared memory only when cp.async.wait_group lets its committed group be waited
// for (a copy never waited for never lands), so that a wait with a count too high, a read before
// the wait, or a missing commit leaves the old bytes in shared memory for the test to find; or
// early, at the issue, so that a copy into a stage another warp still reads clobbers it.
// Thread-block clusters (sm_90, launch_clusters): the blocks of a cluster run together, their
// fibers taking turns, each with its own dynamic shared memory, which the others reach through
// cluster_peer (distributed shared memory), and a barrier of the whole cluster. What it checks: a
// kernel's indexing, tiling, masking and softmax logic against a reference on the host, and its
// barriers, as far as the schedules and landings above expose a missing one (and, in a
// ThreadSanitizer build, every access that no barrier orders with another thread's write:
// race_check.h). What it cannot: the hardware itself (timing, the tensor cores' internal rounding, memory ordering
// beyond the barriers), which waits for a GPU run. Include this before the kernel's .cuh, which
// then compiles with ENCRT_CUDA_HOST_EMULATION.
#pragma once

#define ENCRT_CUDA_HOST_EMULATION 1

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>  // the vector types (uint4) and the qualifiers this file redefines
#include <vector_functions.h>  // make_uint4

#include "core/half.h"
#include "fiber/fiber_switch.h"
#include "race_check.h"

// The kernel's qualifiers as host C++: __shared__ as a function-local static (one block runs at
// a time, so all its threads see the one instance), gathered by the test's link script
// (shared_statics.ld) into one section that the launches fill with 0xa5 bytes before each block:
// a block that reads static shared memory none of its threads wrote finds garbage, not what the
// block before left there. (It gathers the template kernels' statics by their mangled names, as
// function-local statics of encrt::cuda: a template kernel elsewhere keeps its statics' bytes.)
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __align__
#define __align__(n) alignas(n)
#undef __shared__
#define __shared__ static __attribute__((section("encrt_emulated_shared")))

struct __half {
  uint16_t bits;
};
struct __half2 {
  __half x, y;
};
inline __half __float2half_rn(float f) { return __half{encrt::float_to_half(f)}; }
inline uint16_t __half_as_ushort(__half h) { return h.bits; }
inline __half2 __floats2half2_rn(float lo, float hi) { return {__float2half_rn(lo), __float2half_rn(hi)}; }
// cuda_bf16's: bf16 is the upper 16 bits of an fp32; float to bf16 rounds to nearest even (a NaN
// becomes the canonical 0x7fff, as cvt.rn.bf16.f32 gives), bf16 to float is exact.
struct __nv_bfloat16 {
  uint16_t bits;
};
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{0x7fffu};
  u += 0x7fffu + ((u >> 16) & 1u);  // a carry into the exponent is the rounding up (to Inf past the largest)
  return __nv_bfloat16{static_cast<uint16_t>(u >> 16)};
}
inline uint16_t __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
inline float __bfloat162float(__nv_bfloat16 h) {
  const uint32_t u = static_cast<uint32_t>(h.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

namespace encrt::emulation {

struct Index {
  unsigned x = 0, y = 0, z = 0;
};

// The running block's fibers (launch_blocks, at the end): a thread that waits at a barrier has
// arrived (the block made progress), then lets the others run until the barrier opens (its
// generation moves past the one it arrived in; the scheduler runs it again only then).
inline void barrier_opened();
inline void wait_until_changed(const long* generation, long arrived_in);

// A reusable barrier of n threads (fibers of one host thread: no lock needed). Under the race
// check (race_check.h) a block's or a cluster's barrier (orders_memory) orders what its threads did
// before it with what they do after it, through two sync bytes of its own, one per generation's
// parity; a warp's barrier, which only paces the emulated shuffles, orders nothing.
class Barrier {
 public:
  explicit Barrier(int n, bool orders_memory = false) : n_(n), orders_memory_(orders_memory) {}
  void wait() {
    race::Unchecked unchecked;
    const long generation = generation_;
    if (orders_memory_) race::release(&sync_[generation & 1]);
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      barrier_opened();
    } else {
      wait_until_changed(&generation_, generation);
    }
    if (orders_memory_) race::acquire(&sync_[generation & 1]);
  }
  // __syncthreads_or: the barrier, and whether any thread's predicate was nonzero. The answer of a
  // generation stays until the next one opens, which needs every thread of this one, each of
  // which has read it by then.
  int wait_or(int predicate) {
    {
      race::Unchecked unchecked;
      pending_or_ = pending_or_ || predicate != 0;
      if (waiting_ + 1 == n_) {
        answer_or_ = pending_or_;
        pending_or_ = false;
      }
    }
    wait();
    race::Unchecked unchecked;
    return answer_or_ ? 1 : 0;
  }

 private:
  int n_, waiting_ = 0;
  bool pending_or_ = false, answer_or_ = false;
  long generation_ = 0;
  bool orders_memory_;
  unsigned char sync_[2] = {};
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

struct Cluster;

struct Block {
  int threads = 0;
  Barrier* barrier = nullptr;
  Warp* warps = nullptr;
  // In a cluster launch: the block's own dynamic shared memory, its rank and its cluster.
  unsigned char* shared = nullptr;
  int rank = 0;
  Cluster* cluster = nullptr;
  // A thread of the block got to wait_for_previous_kernel() (dependent_launch.cuh).
  bool waited = false;
};

// A thread-block cluster of the running launch: its blocks, and the barrier of all their threads.
struct Cluster {
  int size = 0;
  Block* blocks = nullptr;
  Barrier* barrier = nullptr;
  size_t shared_bytes = 0;  // each block's
};

// The running fiber's block (the scheduler sets it before each fiber runs).
inline Block*& current_block() {
  static Block* b = nullptr;
  return b;
}
inline Block& block() { return *current_block(); }
inline thread_local Index thread_index, block_index;

inline Warp& my_warp() { return block().warps[thread_index.x / 32]; }

// wait_for_previous_kernel() under emulation (dependent_launch.cuh): the running block got there.
inline void waited_for_previous_kernel() {
  race::Unchecked unchecked;
  if (current_block()) block().waited = true;
}

// Every block of a launch waits for the kernel before it (PDL), or none does (a kernel without
// the wait, or a device function a test runs on its own): some blocks ending without it is the
// bug dependent_launch.cuh describes, reported here and the test aborted. `waited` and `skipped`
// count the launch's blocks so far; `at` is the block that just ended.
inline void check_dependent_launch_wait(long waited, long skipped, const Index& at) {
  if (waited > 0 && skipped > 0) {
    std::fprintf(stderr,
                 "warp_emulation: %ld block(s) of the launch called wait_for_previous_kernel() and %ld ended without it "
                 "(block (%u, %u, %u) is the last so far): with PDL, a block must not end before the wait\n",
                 waited, skipped, at.x, at.y, at.z);
    std::abort();
  }
}
inline int my_lane() { return static_cast<int>(thread_index.x % 32); }

inline void launch_blocks(Index grid, int threads, const std::function<void()>& kernel);

// Runs kernel() on a grid of blocks of `threads` threads (a multiple of 32, at most 1024).
inline void launch(Index grid, int threads, const std::function<void()>& kernel) { launch_blocks(grid, threads, kernel); }

}  // namespace encrt::emulation

#define threadIdx (encrt::emulation::thread_index)
#define blockIdx (encrt::emulation::block_index)
#define blockDim (encrt::emulation::Index{static_cast<unsigned>(encrt::emulation::block().threads), 1, 1})

inline void __syncthreads() { encrt::emulation::block().barrier->wait(); }
inline int __syncthreads_or(int predicate) { return encrt::emulation::block().barrier->wait_or(predicate); }

inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  encrt::emulation::race::Unchecked unchecked;  // a shuffle orders no memory (race_check.h)
  encrt::emulation::Warp& w = encrt::emulation::my_warp();
  const int lane = encrt::emulation::my_lane();
  w.f[lane] = v;
  w.barrier.wait();
  const float got = w.f[lane ^ lane_mask];
  w.barrier.wait();
  return got;
}

inline bool __any_sync(unsigned, bool v) {
  encrt::emulation::race::Unchecked unchecked;
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
// fp32 (the tensor cores' own rounding of the sum is not modelled). `value` decodes one 16-bit
// element (fp16 or bf16: one layout for both).
inline void emulated_mma_m16n8k16_of(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                                     float (*value)(uint16_t)) {
  using namespace encrt::emulation;
  auto lo = [value](uint32_t reg) { return value(static_cast<uint16_t>(reg & 0xffffu)); };
  auto hi = [value](uint32_t reg) { return value(static_cast<uint16_t>(reg >> 16)); };
  race::Unchecked unchecked;  // the fragments are registers: the exchange orders no memory
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
      A[row][col] = (i & 1) ? hi(reg) : lo(reg);
    }
    for (int i = 0; i < 4; ++i) {
      const uint32_t reg = w.b[l][i / 2];
      B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = (i & 1) ? hi(reg) : lo(reg);
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
inline void emulated_mma_m16n8k16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  emulated_mma_m16n8k16_of(c, a, b0, b1, [](uint16_t h) { return encrt::half_to_float(h); });
}
// mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32: the same fragments, bf16 elements (a product of two
// bf16 values is exact in fp32: 8 + 8 significant bits).
inline void emulated_mma_m16n8k16_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  emulated_mma_m16n8k16_of(c, a, b0, b1, [](uint16_t h) { return __bfloat162float(__nv_bfloat16{h}); });
}

// ---- The SIMT kernels (layer_norm, layer_norm_quantize, quantize, int8_epilogue, attention,
// elementwise, packed_rows: their *_kernel.cuh): the half conversions, the broadcast shuffle, the
// device's math functions by their host names; and the fibers that run a block's threads.

// cuda_fp16's conversions: float to half rounds to nearest even (core/half.h's, as
// __float2half_rn), half to float is exact.
inline float __half2float(__half h) { return encrt::half_to_float(h.bits); }

// The value of v in lane src_lane of the warp (every lane of the warp calls it, as the kernels do:
// a full mask).
inline float __shfl_sync(unsigned, float v, int src_lane) {
  encrt::emulation::race::Unchecked unchecked;
  encrt::emulation::Warp& w = encrt::emulation::my_warp();
  const int lane = encrt::emulation::my_lane();
  w.f[lane] = v;
  w.barrier.wait();
  const float got = w.f[src_lane & 31];
  w.barrier.wait();
  return got;
}

// The device's isnan; expf, erff, tanhf, sqrtf, fmaxf and rintf are the C library's own (<cmath>
// declares them in the global namespace). The host's expf, erff and tanhf are within an ulp or two
// of CUDA's (whose bounds are 2, 2 and 2 ulp): the tests' tolerances for them say so.
using std::isnan;

namespace encrt::emulation {

// How the threads of a block (or of a cluster) take turns, each running until it waits at a
// barrier whose other threads have not all arrived (or ends). Every one is a schedule the hardware
// may follow; a race shows under some and not under others: a read of another thread's write
// without a barrier between them finds the old bytes where the reader runs first, and a write over
// what another thread has yet to read (a buffer reused before the barrier that frees it) clobbers
// it where the writer runs first.
//   alternating: rounds up the threads and down again, each thread running once a round; the
//     threads of a block keep close together.
//   first_ahead: the lowest-numbered thread that can run (the cluster's rank, then the thread) runs;
//     warp 0, and a cluster's block 0, get as far as their barriers let them before the rest start.
//   last_ahead: the same from the highest-numbered thread down.
//   cycle (the default): the three in turn, one block (or cluster) after another, counted over the
//     whole process, so that every kernel a test launches more than once meets them all.
// ENCRT_EMULATION_SCHEDULE=alternating|first_ahead|last_ahead|cycle chooses one for a whole run.
enum class Schedule { alternating, first_ahead, last_ahead, cycle };

inline const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::alternating: return "alternating";
    case Schedule::first_ahead: return "first_ahead";
    case Schedule::last_ahead: return "last_ahead";
    case Schedule::cycle: return "cycle";
  }
  return "?";
}

inline Schedule schedule_from_environment() {
  const char* v = std::getenv("ENCRT_EMULATION_SCHEDULE");
  if (!v || !*v) return Schedule::cycle;
  for (Schedule s : {Schedule::alternating, Schedule::first_ahead, Schedule::last_ahead, Schedule::cycle})
    if (std::strcmp(v, schedule_name(s)) == 0) return s;
  std::fprintf(stderr, "warp_emulation: ENCRT_EMULATION_SCHEDULE=%s: not alternating, first_ahead, last_ahead or cycle\n", v);
  std::abort();
}

// The schedule of every launch from now on (a test that needs one sets it, and puts back cycle).
inline Schedule& schedule() {
  static Schedule s = schedule_from_environment();
  return s;
}

// When a cp.async copy writes shared memory: anywhere from its issue to the cp.async.wait_group
// that covers it, by the PTX rules. late: at that wait (a read before the wait finds the old
// bytes); early: at the issue (a copy into a buffer that another warp still reads, issued before
// the barrier that frees it, clobbers it). cycle (the default): late for three blocks (or
// clusters), one under each schedule, then early for three. ENCRT_EMULATION_COPIES chooses one.
enum class Landing { late, early, cycle };

inline Landing landing_from_environment() {
  const char* v = std::getenv("ENCRT_EMULATION_COPIES");
  if (!v || !*v || std::strcmp(v, "cycle") == 0) return Landing::cycle;
  if (std::strcmp(v, "late") == 0) return Landing::late;
  if (std::strcmp(v, "early") == 0) return Landing::early;
  std::fprintf(stderr, "warp_emulation: ENCRT_EMULATION_COPIES=%s: not late, early or cycle\n", v);
  std::abort();
}

// The landing of every launch from now on (a test that needs one sets it, and puts back cycle).
inline Landing& landing() {
  static Landing l = landing_from_environment();
  return l;
}

// The schedule and the copies' landing the next block (or cluster) runs under, and, for
// alternating, whether its first round goes down the threads.
inline Schedule next_block_schedule(bool& descending_first, bool& copies_early) {
  static long blocks = 0;
  const long n = blocks++;
  descending_first = (n / 3) % 2 != 0;
  copies_early = landing() == Landing::cycle ? (n / 3) % 2 != 0 : landing() == Landing::early;
  if (schedule() != Schedule::cycle) return schedule();
  constexpr Schedule kTurns[3] = {Schedule::alternating, Schedule::first_ahead, Schedule::last_ahead};
  return kTurns[n % 3];
}

// The threads of the running blocks (one, or the blocks of a cluster) as fibers (tests/fiber) of the
// calling host thread, taking turns as the schedule says. A thread that waits at a barrier records
// which (wait_until_changed), so the scheduler runs it again only once that barrier has opened. No
// thread able to run while some have not ended is a deadlock (a barrier that not every thread
// reaches): it is reported and the test aborts, rather than hangs.
class Fibers {
 public:
  Fibers(int fibers, const std::function<void()>& kernel) : kernel_(kernel), contexts_(static_cast<size_t>(fibers)) {
    for (int t = 0; t < fibers; ++t) stacks_.emplace_back(new char[kStackBytes]);
    if (fake_stacks().size() < contexts_.size()) fake_stacks().resize(contexts_.size(), nullptr);
    race::note_scheduler();
  }

  // A thread's cp.async copies not yet landed: each with its bytes (read at the issue), its
  // destination and its group (0: not yet committed; else the commit's number, from 1).
  struct PendingCopy {
    unsigned char* shared;
    unsigned char bytes[16];
    int size;
    long group;
    bool landed;  // at its issue (Landing::early): the wait only stands for its write, for the race check
  };
  struct ThreadCopies {
    std::vector<PendingCopy> pending;
    long committed = 0;  // groups committed so far
  };
  ThreadCopies& copies() { return copies_[static_cast<size_t>(current_)]; }

  // Runs every thread of blocks[0 .. count) (block b at indices[b], blocks[b].threads threads each,
  // together as many as the fibers) to its end.
  void run_blocks(Block* blocks, const Index* indices, int count) {
    const int fibers = static_cast<int>(contexts_.size());
    const int threads = blocks[0].threads;
    copies_.assign(contexts_.size(), ThreadCopies{});  // a block's copies never waited for: dropped
    done_.assign(contexts_.size(), false);
    waiting_on_.assign(contexts_.size(), nullptr);
    arrived_in_.assign(contexts_.size(), 0);
    live_ = fibers;
    blocks_ = blocks;
    indices_ = indices;
    threads_ = threads;
    block_done_.assign(static_cast<size_t>(count), 0);
    // Under the race check, what the host did before these blocks happens before each of their
    // threads, and each thread's end before what the host does next: blocks (and clusters) run
    // one after another, each ordered after the one before.
    race::release(&run_sync_[0]);
    for (int t = 0; t < fibers; ++t) contexts_[static_cast<size_t>(t)].start(stack(t), &Fibers::entry, this);
    bool descending = false;
    schedule_ = next_block_schedule(descending, copies_early_);
    if (schedule_ == Schedule::alternating) {
      while (live_ > 0) {
        bool ran = false;
        for (int i = 0; i < fibers; ++i) {
          const int f = descending ? fibers - 1 - i : i;
          if (!runnable(f)) continue;
          resume(f);
          ran = true;
        }
        if (!ran) deadlock(count);
        descending = !descending;
      }
    } else {
      // The first thread in the schedule's order that can run, runs. Only a barrier that opens
      // lets a thread earlier in the order run again, so the search goes on from where it stopped
      // until one does.
      const bool down = schedule_ == Schedule::last_ahead;
      int i = 0;
      while (live_ > 0) {
        while (i < fibers && !runnable(down ? fibers - 1 - i : i)) ++i;
        if (i == fibers) deadlock(count);
        const long opened = opened_;
        resume(down ? fibers - 1 - i : i);
        if (opened_ != opened) i = 0;
      }
    }
    race::acquire(&run_sync_[1]);
  }

  // The running thread waits at a barrier, arrived in `arrived_in` of its generations: the next
  // one runs.
  void wait_at(const long* generation, long arrived_in) {
    waiting_on_[static_cast<size_t>(current_)] = generation;
    arrived_in_[static_cast<size_t>(current_)] = arrived_in;
    fiber::Context& me = contexts_[static_cast<size_t>(current_)];  // (nothing between the switches)
    race::switch_to_scheduler();
    me.switch_to(scheduler_, scheduler_stack_);
  }
  void opened() { ++opened_; }
  // Whether this block's cp.async copies land at their issue (else at the wait that covers them).
  bool copies_land_at_issue() const { return copies_early_; }

  static Fibers*& running() {
    static Fibers* fibers = nullptr;
    return fibers;
  }

 private:
  static constexpr size_t kStackBytes = 256 * 1024;

  bool runnable(int f) const {
    const size_t i = static_cast<size_t>(f);
    return !done_[i] && (!waiting_on_[i] || *waiting_on_[i] != arrived_in_[i]);
  }

  void resume(int f) {
    current_ = f;
    const int b = f / threads_;
    thread_index = {static_cast<unsigned>(f % threads_), 0, 0};
    block_index = indices_[b];
    current_block() = &blocks_[b];
    waiting_on_[static_cast<size_t>(f)] = nullptr;
    const fiber::Context& to = contexts_[static_cast<size_t>(f)];  // (nothing between the switches)
    const fiber::Stack to_stack = stack(f);
    race::switch_to_thread(static_cast<size_t>(f));
    scheduler_.switch_to(to, to_stack);
  }

  [[noreturn]] void deadlock(int count) const {
    std::fprintf(stderr, "warp_emulation: block (%u, %u, %u)%s deadlocks under the %s schedule: a barrier that not every thread reaches\n",
                 indices_[0].x, indices_[0].y, indices_[0].z, count > 1 ? "'s cluster" : "", schedule_name(schedule_));
    std::abort();
  }

  // The body of a thread's fiber (entry, below, around it).
  __attribute__((noinline)) static void run_thread() {
    Fibers& f = *running();
    const unsigned char* run_sync;
    {
      race::Unchecked unchecked;  // (the host's memory: read before the acquire orders it)
      run_sync = f.run_sync_.get();
    }
    race::acquire(&run_sync[0]);
    f.kernel_();
    {
      race::Unchecked unchecked;
      f.done_[static_cast<size_t>(f.current_)] = true;
      --f.live_;
      // A block whose threads have all ended has left its multiprocessor: its shared memory is
      // garbage from now on, so a peer that still reads it (a cluster without its last barrier)
      // reads garbage, as it may on the device.
      const int b = f.current_ / f.threads_;
      Block& block = f.blocks_[b];
      if (++f.block_done_[static_cast<size_t>(b)] == f.threads_ && block.cluster)
        std::memset(block.shared, 0xa5, block.cluster->shared_bytes);
    }
    race::release(&run_sync[1]);
  }
  // Under the race check the switch back to the scheduler's fiber is the last step, in a function
  // left uninstrumented (race_check.h): run_thread's own entry and exit hooks stay on the fiber.
  ENCRT_EMULATION_FIBER_ENTRY static void entry(void* fibers) {
    Fibers& f = *static_cast<Fibers*>(fibers);
    void*& fake_stack = fake_stacks()[static_cast<size_t>(f.current_)];
    f.scheduler_stack_ = fiber::arrived(fake_stack);
    run_thread();
    race::switch_to_scheduler();
    fiber::Context::leave_for_good(f.scheduler_, f.scheduler_stack_, &fake_stack);
  }
  // AddressSanitizer's fake stacks (tests/fiber/fiber_switch.h), one for each fiber index, kept from
  // one block's fibers to the next, and from launch to launch (one launch runs at a time).
  static std::vector<void*>& fake_stacks() {
    static std::vector<void*> stacks;
    return stacks;
  }
  fiber::Stack stack(int f) const { return {stacks_[static_cast<size_t>(f)].get(), kStackBytes}; }

  const std::function<void()>& kernel_;
  std::vector<fiber::Context> contexts_;
  std::vector<std::unique_ptr<char[]>> stacks_;
  std::vector<bool> done_;
  std::vector<const long*> waiting_on_;  // the barrier's generation a thread waits on (nullptr: none)
  std::vector<long> arrived_in_;
  std::vector<ThreadCopies> copies_;
  fiber::Context scheduler_;
  fiber::Stack scheduler_stack_;  // the host thread's (AddressSanitizer tells each fiber as it starts)
  int current_ = 0, live_ = 0;
  long opened_ = 0;  // barriers opened so far
  Schedule schedule_ = Schedule::alternating;
  bool copies_early_ = false;
  Block* blocks_ = nullptr;
  const Index* indices_ = nullptr;
  int threads_ = 1;
  std::vector<int> block_done_;
  std::unique_ptr<unsigned char[]> run_sync_{new unsigned char[2]};
};

inline void barrier_opened() {
  if (Fibers* f = Fibers::running()) f->opened();
}
inline void wait_until_changed(const long* generation, long arrived_in) {  // (within an Unchecked)
  while (*generation == arrived_in) Fibers::running()->wait_at(generation, arrived_in);
}

inline std::vector<uint4>& dynamic_shared_buffer();

}  // namespace encrt::emulation

// The bounds of the output section that holds every __shared__ static (above), which the test's
// link script (shared_statics.ld) defines; weak, so that a program linked without it links (both
// are then null, and the statics keep what the block before left).
extern "C" unsigned char encrt_emulated_shared_begin[] __attribute__((weak));
extern "C" unsigned char encrt_emulated_shared_end[] __attribute__((weak));

namespace encrt::emulation {

// Every __shared__ static of the program as 0xa5 bytes: before each block (or cluster) runs.
// Word by word through a volatile pointer, not memset: under AddressSanitizer the statics have
// redzones between them, which this must cross without the memset interceptor's check (the
// function is not instrumented; the shadow of the redzones stays as it is).
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
inline void poison_static_shared() {
  unsigned char* begin = encrt_emulated_shared_begin;
  unsigned char* end = encrt_emulated_shared_end;
  if (!begin || end <= begin) return;
  volatile uint64_t* w = reinterpret_cast<volatile uint64_t*>(begin);  // the section is 64-byte aligned
  const size_t words = static_cast<size_t>(end - begin) / 8;
  for (size_t i = 0; i < words; ++i) w[i] = 0xa5a5a5a5a5a5a5a5ull;
  for (unsigned char* p = begin + words * 8; p < end; ++p) *reinterpret_cast<volatile unsigned char*>(p) = 0xa5;
}

// Runs kernel() on every block of the grid with `threads` threads (a multiple of 32, at most
// 1024): each block's threads to their end before the next block starts (a block's __shared__
// statics are then free for the next). The dynamic shared memory starts each block as 0xa5 bytes,
// not as what the block before left: a read of what no thread of the block wrote finds garbage.
inline void launch_blocks(Index grid, int threads, const std::function<void()>& kernel) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  race::Unchecked unchecked;  // the scheduler's bookkeeping (race_check.h)
  std::vector<uint4>& shared = dynamic_shared_buffer();
  Barrier barrier(threads, /*orders_memory=*/true);
  std::vector<Warp> warps(static_cast<size_t>(threads / 32));
  Block one{threads, &barrier, warps.data()};
  Fibers fibers(threads, kernel);
  Fibers::running() = &fibers;
  long waited = 0, skipped = 0;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        const Index at{x, y, z};
        if (!shared.empty()) std::memset(static_cast<void*>(shared.data()), 0xa5, shared.size() * sizeof(uint4));
        poison_static_shared();
        one.waited = false;
        fibers.run_blocks(&one, &at, 1);
        ++(one.waited ? waited : skipped);
        check_dependent_launch_wait(waited, skipped, at);
      }
  Fibers::running() = nullptr;
  current_block() = nullptr;
}


// Runs kernel() on a grid of clusters of cluster_x blocks along x (grid.x a multiple of it), each
// block `threads` threads with shared_bytes of dynamic shared memory of its own: a cluster's
// blocks run together (rank = blockIdx.x % cluster_x, as the hardware numbers a 1-D cluster), one
// cluster after another. Shared memory starts as 0xa5 bytes, not zeros: a read of what no thread
// wrote finds garbage, as on the device.
inline void launch_clusters(Index grid, int cluster_x, int threads, size_t shared_bytes,
                            const std::function<void()>& kernel) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  if (cluster_x < 1 || grid.x % static_cast<unsigned>(cluster_x) != 0) {
    std::fprintf(stderr, "warp_emulation: grid.x %u is not a multiple of the cluster's %d blocks\n", grid.x, cluster_x);
    std::abort();
  }
  race::Unchecked unchecked;  // the scheduler's bookkeeping (race_check.h)
  const size_t n = static_cast<size_t>(cluster_x);
  std::vector<std::unique_ptr<Barrier>> barriers;
  std::vector<std::vector<Warp>> warps(n);
  std::vector<std::vector<uint4>> shared(n);
  std::vector<Block> blocks(n);
  Barrier cluster_barrier(cluster_x * threads, /*orders_memory=*/true);
  Cluster cluster{cluster_x, blocks.data(), &cluster_barrier, shared_bytes};
  for (size_t b = 0; b < n; ++b) {
    barriers.emplace_back(new Barrier(threads, /*orders_memory=*/true));
    warps[b].resize(static_cast<size_t>(threads / 32));
    shared[b].resize((shared_bytes + 15) / 16 + 1);
    blocks[b] = Block{threads, barriers[b].get(), warps[b].data(), reinterpret_cast<unsigned char*>(shared[b].data()),
                      static_cast<int>(b), &cluster};
  }
  Fibers fibers(cluster_x * threads, kernel);
  Fibers::running() = &fibers;
  std::vector<Index> at(n);
  long waited = 0, skipped = 0;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x0 = 0; x0 < grid.x; x0 += static_cast<unsigned>(cluster_x)) {
        for (size_t b = 0; b < n; ++b) {
          at[b] = {x0 + static_cast<unsigned>(b), y, z};
          std::memset(static_cast<void*>(shared[b].data()), 0xa5, shared[b].size() * sizeof(uint4));
          blocks[b].waited = false;
        }
        poison_static_shared();
        fibers.run_blocks(blocks.data(), at.data(), cluster_x);
        for (size_t b = 0; b < n; ++b) {
          ++(blocks[b].waited ? waited : skipped);
          check_dependent_launch_wait(waited, skipped, at[b]);
        }
      }
  Fibers::running() = nullptr;
  current_block() = nullptr;
}

// The cluster API of the running block (cluster.cuh on the device): the barrier of every thread of
// the cluster (barrier.cluster arrive + wait: it also orders shared-memory writes before it, the
// peers' included, with reads after it), the block's rank, and the address in block `rank`'s
// shared memory of what is at p in this block's.
inline void cluster_sync() { block().cluster->barrier->wait(); }
inline int cluster_rank() { return block().rank; }
inline void* cluster_peer(void* p, int rank) {
  Block& me = block();
  if (rank < 0 || rank >= me.cluster->size) {
    std::fprintf(stderr, "warp_emulation: cluster rank %d of a %d-block cluster\n", rank, me.cluster->size);
    std::abort();
  }
  return me.cluster->blocks[rank].shared + (static_cast<unsigned char*>(p) - me.shared);
}

}  // namespace encrt::emulation

// D = A·B + C for the int8 mma.sync m16n8k32 (PTX ISA 9.7.14.5.10, "Matrix Fragments for
// mma.m16n8k32", .s8 multiplicands, .s32 accumulators), for lane = 4·g + t and element i of a
// fragment (four per register, the lowest byte the lowest element): A (16x32, row-major),
// element i of 16: row g, + 8 for i in 4..7 and 12..15; column 4t + (i & 3), + 16 for i >= 8.
// B (32x8, column-major), element i of 8: row 4t + (i & 3), + 16 for i >= 4; column g. C and D
// (16x8 s32), element i of 4: row g, + 8 for i >= 2; column 2t + (i & 1). Sums modulo 2^32.
// kUnsignedA: the .u8.s8 variant (the same fragment table; A's bytes unsigned, B's signed).
template <bool kUnsignedA>
inline void emulated_mma_m16n8k32(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  using namespace encrt::emulation;
  race::Unchecked unchecked;
  Warp& w = my_warp();
  const int lane = my_lane();
  for (int r = 0; r < 4; ++r) w.a[lane][r] = a[r];
  w.b[lane][0] = b0;
  w.b[lane][1] = b1;
  w.barrier.wait();
  auto sbyte = [](uint32_t reg, int j) { return static_cast<int32_t>(static_cast<int8_t>((reg >> (8 * j)) & 0xffu)); };
  auto abyte = [&](uint32_t reg, int j) { return kUnsignedA ? static_cast<int32_t>((reg >> (8 * j)) & 0xffu) : sbyte(reg, j); };
  int32_t A[16][32], B[32][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 16; ++i) {
      const int row = g + ((i & 4) ? 8 : 0), col = 4 * t + (i & 3) + (i >= 8 ? 16 : 0);
      A[row][col] = abyte(w.a[l][i / 4], i & 3);
    }
    for (int i = 0; i < 8; ++i) B[4 * t + (i & 3) + (i >= 4 ? 16 : 0)][g] = sbyte(w.b[l][i / 4], i & 3);
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

// A kernel's dynamic shared memory (extern __shared__ on the device): one buffer, 16-byte
// aligned, that the test sizes before the launch (one block runs at a time; each starts with it
// filled with 0xa5 bytes). What the last block left there stays for the test to read.
inline std::vector<uint4>& dynamic_shared_buffer() {
  static std::vector<uint4> buffer;
  return buffer;
}
inline void set_dynamic_shared_bytes(size_t bytes) { dynamic_shared_buffer().assign((bytes + 15) / 16, uint4{}); }
// (In a cluster launch each block has its own: launch_clusters.)
inline unsigned char* dynamic_shared_memory() {
  if (current_block() && block().shared) return block().shared;
  return reinterpret_cast<unsigned char*>(dynamic_shared_buffer().data());
}

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

// cp.async of `bytes` (at most 16) from global to shared memory: read now (after the bounds
// check), written to shared memory when a wait_group covers its group (above), or at once where
// the block's copies land early (Landing). Outside a fiber (no block running: a test calling a
// device function directly) the copy lands at once. Both
// addresses must be aligned to `bytes` (PTX ISA, cp.async; a GPU reports a misaligned address
// and the context is lost): reported, and the test aborts.
inline void emulated_cp_async(void* shared, const void* global, int bytes) {
  if (reinterpret_cast<uintptr_t>(shared) % static_cast<uintptr_t>(bytes) != 0 ||
      reinterpret_cast<uintptr_t>(global) % static_cast<uintptr_t>(bytes) != 0) {
    std::fprintf(stderr, "warp_emulation: cp.async of %d bytes from %p to %p: an address not aligned to its size\n",
                 bytes, global, shared);
    std::abort();
  }
  encrt::emulation::Readable& r = encrt::emulation::readable();
  {
    encrt::emulation::race::Unchecked unchecked(/*sync=*/true);  // the lock orders no emulated thread
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto* p = static_cast<const unsigned char*>(global);
    bool inside = r.ranges.empty();
    for (const auto& [base, size] : r.ranges) inside = inside || (p >= base && p + bytes <= base + size);
    if (!inside) {
      ++r.outside;
      return;
    }
  }
  encrt::emulation::Fibers* f = encrt::emulation::Fibers::running();
  if (!f || bytes > 16) {
    std::memcpy(shared, global, static_cast<size_t>(bytes));
    return;
  }
  // Wherever it lands, the copy may write its bytes at any moment from its issue to the wait that
  // covers it: the race check sees a write at both ends.
  const bool early = f->copies_land_at_issue();
  encrt::emulation::Fibers::PendingCopy c{static_cast<unsigned char*>(shared), {}, bytes, 0, early};
  if (early) {
    std::memcpy(shared, global, static_cast<size_t>(bytes));
  } else {
    std::memcpy(c.bytes, global, static_cast<size_t>(bytes));
    encrt::emulation::race::write(shared, static_cast<size_t>(bytes));
  }
  encrt::emulation::race::Unchecked unchecked;
  f->copies().pending.push_back(c);
}
// cp.async.commit_group: the thread's copies issued since the last commit form the next group.
inline void emulated_cp_async_commit() {
  encrt::emulation::race::Unchecked unchecked;
  encrt::emulation::Fibers* f = encrt::emulation::Fibers::running();
  if (!f) return;
  auto& t = f->copies();
  ++t.committed;
  for (auto& c : t.pending)
    if (c.group == 0) c.group = t.committed;
}
// cp.async.wait_group n: every committed group but the newest n has landed (uncommitted copies
// are not waited for).
inline void emulated_cp_async_wait(int n) {
  encrt::emulation::race::Unchecked unchecked;
  encrt::emulation::Fibers* f = encrt::emulation::Fibers::running();
  if (!f) return;
  auto& t = f->copies();
  size_t kept = 0;  // (in place, in issue order: no allocation per wait)
  for (size_t i = 0; i < t.pending.size(); ++i) {
    const auto& c = t.pending[i];
    if (c.group != 0 && c.group <= t.committed - n) {
      encrt::emulation::race::Checked landing;  // the issuing thread's write to shared memory
      if (c.landed)
        encrt::emulation::race::write(c.shared, static_cast<size_t>(c.size));
      else
        std::memcpy(c.shared, c.bytes, static_cast<size_t>(c.size));
    } else
      t.pending[kept++] = c;
  }
  t.pending.resize(kept);
}
