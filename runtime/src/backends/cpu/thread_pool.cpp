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

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads), ranges_(new Range[static_cast<size_t>(threads_)]) {
  workers_.reserve(static_cast<size_t>(threads_ - 1));
  for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    posted_.fetch_add(1);  // a new "job" wakes every worker
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

int ThreadPool::claim(int r, uint32_t job, bool from_front) {
  std::atomic<uint64_t>& word = ranges_[r].word;
  uint64_t w = word.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t front = static_cast<uint32_t>(w >> 16) & 0xffffu, back = static_cast<uint32_t>(w) & 0xffffu;
    if (static_cast<uint32_t>(w >> 32) != job || front >= back) return -1;
    // front + 1 <= back <= 0xffff and back - 1 >= front >= 0: neither field leaves its 16 bits.
    const uint64_t next = from_front ? w + (uint64_t{1} << 16) : w - 1;
    if (word.compare_exchange_weak(w, next, std::memory_order_acq_rel, std::memory_order_acquire))
      return static_cast<int>(from_front ? front : back - 1);
  }
}

void ThreadPool::work(uint32_t job, int thread) {
  for (int i = 0; i < threads_; ++i) {
    const int r = (thread + i) % threads_;
    for (int task; (task = claim(r, job, i == 0)) >= 0;) {
      // fn_, context_ and offset_ are this job's: the claim succeeded on a word the caller
      // stored (release) after writing them, and the caller cannot start another job before
      // done_ counts this task.
      fn_(context_, offset_ + task, thread);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
}

void ThreadPool::run(int tasks, TaskFn fn, void* context) {
  if (threads_ == 1 || tasks <= 1) {
    for (int t = 0; t < tasks; ++t) fn(context, t, 0);
    return;
  }
  for (int first = 0; first < tasks; first += kMaxTasksPerJob) {
    const int n = tasks - first < kMaxTasksPerJob ? tasks - first : kMaxTasksPerJob;
    fn_ = fn;
    context_ = context;
    offset_ = first;
    done_.store(0, std::memory_order_relaxed);
    const uint32_t job = ++job_;
    // Each word carries the new job number: a thread still inside work() for the previous job
    // fails every claim on it and returns.
    for (int t = 0; t < threads_; ++t) {
      const uint64_t begin = static_cast<uint64_t>(n) * t / threads_, end = static_cast<uint64_t>(n) * (t + 1) / threads_;
      ranges_[t].word.store(uint64_t{job} << 32 | begin << 16 | end, std::memory_order_release);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      posted_.store(job, std::memory_order_release);
    }
    wake_.notify_all();
    work(job, 0);
    for (int spins = 0; done_.load(std::memory_order_acquire) != n; ++spins) {
      if (spins < kCallerSpinsBeforeYield) {
        ENCRT_CPU_RELAX();
      } else {
        std::this_thread::yield();  // the worker running the last task may need this core
      }
    }
  }
}

void ThreadPool::worker(int thread) {
  uint32_t seen = 0;
  for (;;) {
    auto posted = [this] { return posted_.load(std::memory_order_acquire); };
    int spins = 0;
    while (posted() == seen && spins < kSpinIterations) {
      ENCRT_CPU_RELAX();
      ++spins;
    }
    if (posted() == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return posted() != seen; });
    }
    seen = posted();
    if (stop_.load()) return;
    work(seen, thread);
  }
}

}  // namespace encrt::cpu
