// A small fixed thread pool for the session's parallel loops. Our own rather than pthreadpool:
// it needs one primitive (run N tasks, caller joins in, wait), must not allocate per call, and
// spins briefly before sleeping so that back-to-back ops (tens of microseconds each) do not pay
// a futex wake-up each time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace encrt {

class ThreadPool {
 public:
  using TaskFn = void (*)(void* context, int task, int thread);

  explicit ThreadPool(int threads);  // threads - 1 workers; the caller is thread 0
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }
  // Runs fn(context, task, thread) for task in [0, tasks) and returns when all are done.
  // `thread` is in [0, threads()) and no two concurrent calls share it.
  void run(int tasks, TaskFn fn, void* context);

 private:
  void worker(int thread);
  void work(int thread);

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> next_task_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<bool> stop_{false};
  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  int tasks_ = 0;
};

}  // namespace encrt
