// The CPU backend's thread pool on its own: many jobs of different sizes in a row, every task of
// every job run exactly once, and run() returning only when its job is done. With more workers
// than cores, workers are preempted at every point of the claim protocol, including between a
// job's last claim and the next job's start (where a worker once claimed tasks of the next job
// against the previous job's cursor, ran them twice and overcounted the next job, whose run()
// then never returned).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
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

namespace {

struct Takeover {
  int tasks;
  std::atomic<int> finished{0};        // tasks done, the blocked one not counted
  std::atomic<bool> blocked{false};    // a worker holds one task
  std::atomic<bool> timed_out{false};
};

}  // namespace

// Tasks have a home thread (thread_pool.h); a thread stuck in one of its tasks must not keep the
// rest of its range from running. Here the first task a worker claims waits until every other task
// is done: only the caller, taking the worker's remaining tasks from the back of its range, can
// get there (with fixed ranges the wait would time out).
TEST_CASE("thread pool: the tasks a stuck worker would run next are taken over", "[threads][pool]") {
  for (int threads : {2, 3}) {
    INFO("threads " << threads);
    encrt::cpu::ThreadPool pool(threads);
    int jobs_with_a_blocked_worker = 0;
    for (int job = 0; job < 200 && jobs_with_a_blocked_worker < 20; ++job) {
      Takeover t;
      t.tasks = 4 * threads;
      pool.run(
          t.tasks,
          [](void* ctx, int, int thread) {
            auto* tk = static_cast<Takeover*>(ctx);
            bool expected = false;
            if (thread != 0 && tk->blocked.compare_exchange_strong(expected, true)) {
              const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
              while (tk->finished.load() != tk->tasks - 1) {
                if (std::chrono::steady_clock::now() > until) {
                  tk->timed_out.store(true);
                  break;
                }
                std::this_thread::yield();
              }
              return;
            }
            // The caller gives the workers a moment to show up (they may be asleep, or the
            // machine busy with other tests), so that most jobs do have a stuck worker.
            if (thread == 0 && !tk->blocked.load()) {
              const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
              while (!tk->blocked.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
            }
            tk->finished.fetch_add(1);
          },
          &t);
      CHECK(t.finished.load() == (t.blocked.load() ? t.tasks - 1 : t.tasks));
      CHECK_FALSE(t.timed_out.load());
      if (t.blocked.load()) ++jobs_with_a_blocked_worker;
    }
    CHECK(jobs_with_a_blocked_worker > 0);  // the workers did take part
  }
}

// A job of more tasks than one range word can count (thread_pool.h: 16-bit fields) runs as several
// jobs in a row; every task still runs exactly once, with its own index.
TEST_CASE("thread pool: a job of more than 65535 tasks runs every task once", "[threads][pool]") {
  constexpr int kTasks = 3 * 65535 + 17;
  std::vector<std::atomic<int>> runs(kTasks);
  for (auto& r : runs) r.store(0, std::memory_order_relaxed);
  encrt::cpu::ThreadPool pool(3);
  pool.run(
      kTasks,
      [](void* ctx, int task, int) {
        (*static_cast<std::vector<std::atomic<int>>*>(ctx))[static_cast<size_t>(task)].fetch_add(1, std::memory_order_relaxed);
      },
      &runs);
  long wrong = 0;
  for (const auto& r : runs) wrong += r.load(std::memory_order_relaxed) != 1;
  CHECK(wrong == 0);
}
