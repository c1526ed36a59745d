// The CPU backend's thread pool on its own: many jobs of different sizes in a row, every task of
// every job run exactly once, and run() returning only when its job is done. With more workers
// than cores, workers are preempted at every point of the claim protocol, including between a
// job's last claim and the next job's start (where a worker once claimed tasks of the next job
// against the previous job's cursor, ran them twice and overcounted the next job, whose run()
// then never returned).
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "backends/cpu/thread_pool.h"

namespace {

struct Job {
  std::vector<std::atomic<int>>* runs;
  int job;
};

}  // namespace

TEST_CASE("thread pool: every task of every job runs exactly once, whatever the job sizes", "[threads][pool]") {
  for (int threads : {2, 4, 8}) {
    INFO("threads " << threads);
    encrt::cpu::ThreadPool pool(threads);
    constexpr int kMaxTasks = 40;
    std::vector<std::atomic<int>> runs(kMaxTasks);
    long mismatches = 0;
    for (int job = 0; job < 20000; ++job) {
      // Sizes that grow and shrink from job to job (a small job right before a large one is
      // where a late worker found unclaimed indices).
      const int tasks = 2 + (job * 7919) % (kMaxTasks - 1);
      for (int t = 0; t < kMaxTasks; ++t) runs[static_cast<size_t>(t)].store(0, std::memory_order_relaxed);
      Job j{&runs, job};
      pool.run(
          tasks,
          [](void* ctx, int task, int thread) {
            auto* jb = static_cast<Job*>(ctx);
            (void)thread;
            (*jb->runs)[static_cast<size_t>(task)].fetch_add(1, std::memory_order_relaxed);
          },
          &j);
      for (int t = 0; t < kMaxTasks; ++t)
        mismatches += runs[static_cast<size_t>(t)].load(std::memory_order_relaxed) != (t < tasks ? 1 : 0);
    }
    CHECK(mismatches == 0);
  }
}
