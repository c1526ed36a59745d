#include "session/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ENCRT_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define ENCRT_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define ENCRT_CPU_RELAX() ((void)0)
#endif

namespace encrt {

namespace {
constexpr int kSpinIterations = 20000;  // ~50-100 µs of pause before sleeping
}

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  workers_.reserve(static_cast<size_t>(threads_ - 1));
  for (int t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::work(int thread) {
  for (int task = next_task_.fetch_add(1); task < tasks_; task = next_task_.fetch_add(1)) fn_(context_, task, thread);
}

void ThreadPool::run(int tasks, TaskFn fn, void* context) {
  if (threads_ == 1 || tasks <= 1) {
    for (int t = 0; t < tasks; ++t) fn(context, t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    context_ = context;
    tasks_ = tasks;
    next_task_.store(0);
    busy_workers_.store(threads_ - 1);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  work(0);
  while (busy_workers_.load(std::memory_order_acquire) != 0) ENCRT_CPU_RELAX();
}

void ThreadPool::worker(int thread) {
  unsigned seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinIterations) {
      ENCRT_CPU_RELAX();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    work(thread);
    busy_workers_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace encrt
