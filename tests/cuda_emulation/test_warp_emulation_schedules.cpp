// The emulator's own checks (warp_emulation.h), each against a tiny kernel with and without the
// barrier it needs: a read of another warp's write (the barrier between the write and the read), a
// buffer written again while another warp may still read it (the barrier between the read and the
// second write), the same reuse across a cluster's blocks through distributed shared memory (a
// row's sums and squares in one place: what the fused linear + LayerNorm kernels must not do), and
// a cp.async issued into a buffer another warp still reads. Every schedule and landing gets the
// right answer with the barrier; without it, some gets a wrong one, and cycle (what every other
// test runs under) meets it within three (six for the copies) launches. Also: the PDL wait that
// some blocks skip, and a barrier not every thread reaches (both abort: ctest runs them). In a
// ThreadSanitizer build (the race check, race_check.h) the kernels without their barrier are
// races that it reports wherever they run: there they run in the hidden [.emulation_race] cases
// alone, one a process, each of which must be reported (scripts/test_sanitizers.sh).
#include <catch2/catch.hpp>

#include <vector>

#include "cuda_emulation/warp_emulation.h"
#include "backends/cuda/kernels/cp_async.cuh"
#include "backends/cuda/kernels/dependent_launch.cuh"

// A template kernel as the kernel headers write them (in encrt::cuda): thread 0 records its
// shared word, then writes 7 + its block there.
namespace encrt::cuda::emulation_self_test {
template <typename T>
void read_then_write(std::vector<uint32_t>& seen) {
  __shared__ T word;
  if (threadIdx.x == 0) {
    seen[blockIdx.x] = static_cast<uint32_t>(word);
    word = static_cast<T>(7 + blockIdx.x);  // (not one constant: clang would shrink the static to a bool)
  }
}
}  // namespace encrt::cuda::emulation_self_test

namespace {

using encrt::emulation::Schedule;

constexpr Schedule kSchedules[] = {Schedule::alternating, Schedule::first_ahead, Schedule::last_ahead, Schedule::cycle};

// Runs f under schedule s, then puts back cycle.
template <typename F>
void under(Schedule s, F&& f) {
  encrt::emulation::schedule() = s;
  f();
  encrt::emulation::schedule() = Schedule::cycle;
}

// Two warps: lane 0 of each writes `base + warp` to its slot, then every thread reads the other
// warp's slot. True when every thread read what the other warp wrote in this launch.
bool read_after_write(bool barrier, int base) {
  std::vector<int> got(64, -1);
  encrt::emulation::launch({1, 1, 1}, 64, [&] {
    __shared__ int slot[2];
    const int w = static_cast<int>(threadIdx.x / 32);
    if (threadIdx.x % 32 == 0) slot[w] = base + w;
    if (barrier) __syncthreads();
    got[threadIdx.x] = slot[1 - w];
  });
  for (int t = 0; t < 64; ++t)
    if (got[static_cast<size_t>(t)] != base + 1 - t / 32) return false;
  return true;
}

// Two warps share one slot each, used twice: the first values are read by the other warp, then
// the slots take the second values. Without the barrier between the read and the second write, a
// warp may overwrite its slot before the other has read the first value.
bool write_after_read(bool barrier, int base) {
  std::vector<int> first(64, -1), second(64, -1);
  encrt::emulation::launch({1, 1, 1}, 64, [&] {
    __shared__ int slot[2];
    const int w = static_cast<int>(threadIdx.x / 32);
    if (threadIdx.x % 32 == 0) slot[w] = base + w;
    __syncthreads();
    first[threadIdx.x] = slot[1 - w];
    if (barrier) __syncthreads();
    if (threadIdx.x % 32 == 0) slot[w] = base + 10 + w;
    __syncthreads();
    second[threadIdx.x] = slot[1 - w];
  });
  for (int t = 0; t < 64; ++t) {
    const int other = 1 - t / 32;
    if (first[static_cast<size_t>(t)] != base + other || second[static_cast<size_t>(t)] != base + 10 + other) return false;
  }
  return true;
}

// A cluster of 4 blocks of 32 threads: each block's thread 0 writes a partial sum to its shared
// memory, every thread adds the cluster's partials, then the same place takes a second partial
// (the squares), added up the same way. Without the cluster barrier between the first reads and
// the second writes, a block may overwrite its partial while a peer still reads it.
bool cluster_reuse(bool barrier, int base) {
  constexpr int kBlocks = 4;
  std::vector<int> sums(kBlocks * 32, -1), squares(kBlocks * 32, -1);
  encrt::emulation::launch_clusters({kBlocks, 1, 1}, kBlocks, 32, sizeof(int), [&] {
    int* partial = reinterpret_cast<int*>(encrt::emulation::dynamic_shared_memory());
    const int rank = encrt::emulation::cluster_rank();
    const size_t me = static_cast<size_t>(rank) * 32 + threadIdx.x;
    if (threadIdx.x == 0) *partial = base + rank;
    encrt::emulation::cluster_sync();
    int total = 0;
    for (int r = 0; r < kBlocks; ++r) total += *static_cast<int*>(encrt::emulation::cluster_peer(partial, r));
    sums[me] = total;
    if (barrier) encrt::emulation::cluster_sync();
    if (threadIdx.x == 0) *partial = (base + rank) * (base + rank);
    encrt::emulation::cluster_sync();
    total = 0;
    for (int r = 0; r < kBlocks; ++r) total += *static_cast<int*>(encrt::emulation::cluster_peer(partial, r));
    squares[me] = total;
    encrt::emulation::cluster_sync();
  });
  int want_sum = 0, want_squares = 0;
  for (int r = 0; r < kBlocks; ++r) want_sum += base + r, want_squares += (base + r) * (base + r);
  for (size_t t = 0; t < sums.size(); ++t)
    if (sums[t] != want_sum || squares[t] != want_squares) return false;
  return true;
}

// Two warps read each other's half of a 64-value buffer, then cp.async refills it from global
// memory (each thread its own value), waited for after a barrier, and read again. Without the
// barrier between the first reads and the copies' issue, a warp's copies may land while the other
// warp still reads the old values: only copies that land early (at their issue) show it.
bool copy_over_read(bool barrier, int base) {
  std::vector<int> first(64, -1), second(64, -1), fresh(64);
  for (int t = 0; t < 64; ++t) fresh[static_cast<size_t>(t)] = base + 1000 + t;
  encrt::emulation::launch({1, 1, 1}, 64, [&] {
    __shared__ int buffer[64];
    const int t = static_cast<int>(threadIdx.x);
    buffer[t] = base + t;
    __syncthreads();
    first[static_cast<size_t>(t)] = buffer[63 - t];
    if (barrier) __syncthreads();
    encrt::cuda::copy_async<4>(&buffer[t], &fresh[static_cast<size_t>(t)]);
    encrt::cuda::copy_commit();
    __syncthreads();
    encrt::cuda::copy_wait<0>();
    __syncthreads();
    second[static_cast<size_t>(t)] = buffer[63 - t];
  });
  for (int t = 0; t < 64; ++t)
    if (first[static_cast<size_t>(t)] != base + 63 - t || second[static_cast<size_t>(t)] != base + 1000 + 63 - t) return false;
  return true;
}

// Whether `kernel(barrier, base)` is right under schedule s in every one of three launches
// (cycle then gives each launch the next of its three schedules).
template <typename Kernel>
bool right_in_three_launches(Schedule s, bool barrier, Kernel kernel) {
  bool right = true;
  under(s, [&] {
    for (int launch = 0; launch < 3; ++launch) right = kernel(barrier, 100 * (launch + 1)) && right;
  });
  return right;
}

// With its barrier, the kernel is right under every schedule.
template <typename Kernel>
void check_race_free(Kernel kernel) {
  for (Schedule s : kSchedules) {
    INFO("schedule " << encrt::emulation::schedule_name(s));
    CHECK(right_in_three_launches(s, true, kernel));
  }
}

template <typename Kernel>
void check_race(Kernel kernel) {
  check_race_free(kernel);
  if (encrt::emulation::race::kChecked) return;  // (the race check reports it: [.emulation_race])
  bool some_schedule_wrong = false;
  for (Schedule s : {Schedule::alternating, Schedule::first_ahead, Schedule::last_ahead})
    some_schedule_wrong = !right_in_three_launches(s, false, kernel) || some_schedule_wrong;
  CHECK(some_schedule_wrong);
  CHECK_FALSE(right_in_three_launches(Schedule::cycle, false, kernel));
}

}  // namespace

TEST_CASE("warp emulation: a read of another warp's write without the barrier is caught", "[cuda_emulation][schedules]") {
  check_race(read_after_write);
}

TEST_CASE("warp emulation: a buffer rewritten before another warp has read it is caught", "[cuda_emulation][schedules]") {
  check_race(write_after_read);
}

TEST_CASE("warp emulation: a cluster's partial sums overwritten before the peers have read them are caught",
          "[cuda_emulation][schedules]") {
  check_race(cluster_reuse);
  if (encrt::emulation::race::kChecked) return;
  // The old round-robin order alone did not catch this one (a block's partials were always read
  // by every peer before any thread got past the next barrier of its warp); the threads that run
  // ahead do.
  CHECK_FALSE(right_in_three_launches(Schedule::first_ahead, false, cluster_reuse));
  CHECK_FALSE(right_in_three_launches(Schedule::last_ahead, false, cluster_reuse));
}

// Hidden (the emulator aborts the process): ctest runs it once under each schedule
// (ENCRT_EMULATION_SCHEDULE) and expects the emulator's report (tests/CMakeLists.txt).
TEST_CASE("warp emulation: a barrier that not every thread reaches is reported", "[.emulation_deadlock]") {
  encrt::emulation::launch({1, 1, 1}, 64, [] {
    if (threadIdx.x < 32) __syncthreads();
  });
}

// Hidden (the emulator aborts): a block that returns before wait_for_previous_kernel() while the
// others wait (dependent_launch.cuh's rule), which ctest expects the emulator to report.
TEST_CASE("warp emulation: a block that ends before the PDL wait is reported", "[.emulation_early_return]") {
  encrt::emulation::launch({3, 1, 1}, 32, [] {
    if (blockIdx.x == 1) return;
    encrt::cuda::wait_for_previous_kernel();
  });
}

// Hidden: each kernel above without its barrier, once. Under the race check (a ThreadSanitizer
// build) each must be reported as a data race, in a process of its own, whatever the schedule
// (scripts/test_sanitizers.sh runs them); elsewhere they only run.
TEST_CASE("race check: a read of another warp's write without the barrier", "[.emulation_race]") {
  read_after_write(false, 1);
}
TEST_CASE("race check: a buffer rewritten before another warp has read it", "[.emulation_race]") {
  write_after_read(false, 1);
}
TEST_CASE("race check: a cluster's partial sums overwritten before the peers have read them", "[.emulation_race]") {
  cluster_reuse(false, 1);
}
TEST_CASE("race check: a cp.async into a buffer another warp still reads", "[.emulation_race]") {
  copy_over_read(false, 1);
}

TEST_CASE("warp emulation: launches where every block or no block waits for the kernel before pass",
          "[cuda_emulation][schedules]") {
  int waited = 0;
  encrt::emulation::launch({3, 1, 1}, 64, [&] {
    if (threadIdx.x >= 32) return;  // a warp may end first: the block's other warp waits
    encrt::cuda::wait_for_previous_kernel();
    if (threadIdx.x == 0) ++waited;
  });
  CHECK(waited == 3);
  int ran = 0;
  encrt::emulation::launch({3, 1, 1}, 32, [&] {
    if (threadIdx.x == 0) ++ran;
  });
  CHECK(ran == 3);
  encrt::emulation::launch_clusters({4, 1, 1}, 2, 32, 16, [&] { encrt::cuda::wait_for_previous_kernel(); });
}

TEST_CASE("warp emulation: a cp.async into a buffer another warp still reads is caught where copies land early",
          "[cuda_emulation][schedules]") {
  using encrt::emulation::Landing;
  auto with_landing = [](Landing l, auto f) {
    encrt::emulation::landing() = l;
    f();
    encrt::emulation::landing() = Landing::cycle;
  };
  for (Landing l : {Landing::late, Landing::early, Landing::cycle})
    with_landing(l, [] { check_race_free(copy_over_read); });
  if (encrt::emulation::race::kChecked) return;  // (the race check reports it: [.emulation_race])
  // Late copies (at the wait, after the barrier) never show it, whatever the schedule; early ones
  // do where the copying warp runs first.
  with_landing(Landing::late, [] {
    for (Schedule s : {Schedule::alternating, Schedule::first_ahead, Schedule::last_ahead})
      CHECK(right_in_three_launches(s, false, copy_over_read));
  });
  with_landing(Landing::early, [] {
    CHECK_FALSE(right_in_three_launches(Schedule::first_ahead, false, copy_over_read));
    CHECK_FALSE(right_in_three_launches(Schedule::last_ahead, false, copy_over_read));
  });
  // cycle: three blocks with late copies, then three with early ones.
  bool some_launch_wrong = false;
  for (int launch = 0; launch < 6; ++launch) some_launch_wrong = !copy_over_read(false, 7 * launch) || some_launch_wrong;
  CHECK(some_launch_wrong);
}

TEST_CASE("warp emulation: every block starts with garbage in its static and dynamic shared memory",
          "[cuda_emulation][schedules]") {
  // Each block reads its shared memory before writing it: every block, the first included, must
  // find the 0xa5 bytes, never what the block before wrote (nor the zeros a static starts with).
  constexpr uint32_t kGarbage = 0xa5a5a5a5u;
  std::vector<uint32_t> statics(4), dynamics(4);
  encrt::emulation::set_dynamic_shared_bytes(64);
  encrt::emulation::launch({4, 1, 1}, 32, [&] {
    __shared__ uint32_t flag;
    auto* dynamic = reinterpret_cast<uint32_t*>(encrt::emulation::dynamic_shared_memory());
    if (threadIdx.x == 0) {
      statics[blockIdx.x] = flag;
      dynamics[blockIdx.x] = dynamic[15];
      flag = 7 + blockIdx.x;  // (not one constant: clang would shrink the static to a bool)
      dynamic[15] = 7;
    }
  });
  for (int b = 0; b < 4; ++b) {
    CHECK(statics[static_cast<size_t>(b)] == kGarbage);
    CHECK(dynamics[static_cast<size_t>(b)] == kGarbage);
  }
  // ... and in a template kernel of encrt::cuda, whose static the compiler keeps in a COMDAT
  // section of its own (the link script gathers those too).
  std::vector<uint32_t> in_template(3);
  encrt::emulation::launch({3, 1, 1}, 32, [&] { encrt::cuda::emulation_self_test::read_then_write<uint32_t>(in_template); });
  for (int b = 0; b < 3; ++b) CHECK(in_template[static_cast<size_t>(b)] == kGarbage);
}
