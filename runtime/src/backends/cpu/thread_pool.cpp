#include "backends/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ENCRT_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define ENCRT_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define ENCRT_CPU_RELAX() ((void)0)
#endif

namespace encrt::cpu {

namespace {
constexpr int kSpinIterations = 20000;  // ~50-100 µs of pause before a worker sleeps
constexpr int kCallerSpinsBeforeYield = 2000;
}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  workers_.reserve(static_cast<size_t>(threads_ - 1));
  for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    cursor_.fetch_add(uint64_t{1} << 32);  // a new "job" wakes every worker
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::work(uint32_t job, int thread) {
  uint64_t cur = cursor_.load(std::memory_order_acquire);
  for (;;) {
    if (static_cast<uint32_t>(cur >> 32) != job) return;
    const uint32_t task = static_cast<uint32_t>(cur);
    // tasks_/fn_/context_ belong to `job` as long as one of its tasks is unfinished, which the
    // successful claim below guarantees (the caller cannot start a new job before done_ counts
    // this task).
    if (task >= static_cast<uint32_t>(tasks_.load(std::memory_order_acquire))) return;
    if (!cursor_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      continue;
    fn_(context_, static_cast<int>(task), thread);
    done_.fetch_add(1, std::memory_order_acq_rel);
    cur = cursor_.load(std::memory_order_acquire);
  }
}

void ThreadPool::run(int tasks, TaskFn fn, void* context) {
  if (threads_ == 1 || tasks <= 1) {
    for (int t = 0; t < tasks; ++t) fn(context, t, 0);
    return;
  }
  // First close the previous job: a worker may still hold its cursor (its last index, all
  // claimed) and be about to compare that index with tasks_; once tasks_ holds this job's larger
  // count, a claim against the old cursor would succeed, run this job's function on an index that
  // is also claimed below, and count it twice, so that done_ overshoots and this run never
  // returns. A cursor with a new job number and an index no job reaches makes every such claim
  // fail, and a worker that sees it claims nothing and waits for the job after it.
  ++job_;
  cursor_.store((static_cast<uint64_t>(job_) << 32) | 0xffffffffu, std::memory_order_release);
  fn_ = fn;
  context_ = context;
  done_.store(0, std::memory_order_relaxed);
  // release: a worker that reads this count (acquire) also sees the closed cursor in its claim.
  tasks_.store(tasks, std::memory_order_release);
  ++job_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cursor_.store(static_cast<uint64_t>(job_) << 32, std::memory_order_release);
  }
  wake_.notify_all();
  work(job_, 0);
  for (int spins = 0; done_.load(std::memory_order_acquire) != tasks; ++spins) {
    if (spins < kCallerSpinsBeforeYield) {
      ENCRT_CPU_RELAX();
    } else {
      std::this_thread::yield();  // the worker running the last task may need this core
    }
  }
}

void ThreadPool::worker(int thread) {
  uint32_t seen = 0;
  for (;;) {
    auto job_of = [this] { return static_cast<uint32_t>(cursor_.load(std::memory_order_acquire) >> 32); };
    int spins = 0;
    while (job_of() == seen && spins < kSpinIterations) {
      ENCRT_CPU_RELAX();
      ++spins;
    }
    if (job_of() == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return job_of() != seen; });
    }
    seen = job_of();
    if (stop_.load()) return;
    work(seen, thread);
  }
}

}  // namespace encrt::cpu
