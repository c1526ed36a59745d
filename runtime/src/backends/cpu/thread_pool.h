// A small fixed thread pool for the session's parallel loops. Our own rather than pthreadpool:
// it needs one primitive (run N tasks, the caller joins in, wait), must not allocate per call,
// and must degrade gracefully on a loaded edge device: the caller waits for the *tasks* to be
// done, never for every worker to show up, so a worker that the OS has descheduled costs
// nothing — the caller (and any awake worker) simply takes its share. Workers spin briefly
// before sleeping so that back-to-back ops do not pay a futex wake-up each time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace encrt::cpu {

class ThreadPool {
 public:
  using TaskFn = void (*)(void* context, int task, int thread);

  explicit ThreadPool(int threads);  // threads - 1 workers; the caller is thread 0
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }
  // Runs fn(context, task, thread) for task in [0, tasks) and returns when all are done.
  // `thread` is in [0, threads()) and no two tasks run concurrently with the same `thread`.
  void run(int tasks, TaskFn fn, void* context);

 private:
  void worker(int thread);
  // Claims and runs tasks of job `job` until none is left.
  void work(uint32_t job, int thread);

  const int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // High 32 bits: the job number; low 32 bits: the next task index of that job. Claiming a
  // task is a CAS that fails if the job changed, so a late worker never runs a stale task. Each
  // run() takes two job numbers: the first, with index 0xffffffff, only closes the previous job
  // before tasks_ changes (thread_pool.cpp says why).
  std::atomic<uint64_t> cursor_{0};
  std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
  uint32_t job_ = 0;  // written by the caller only
  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  std::atomic<int> tasks_{0};  // read by workers before they claim a task
};

}  // namespace encrt::cpu
