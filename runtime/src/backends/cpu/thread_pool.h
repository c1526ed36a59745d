// A small fixed thread pool for the session's parallel loops. Our own rather than pthreadpool:
// it needs one primitive (run N tasks, the caller joins in, wait), must not allocate per call,
// and must degrade gracefully on a loaded edge device: the caller waits for the *tasks* to be
// done, never for every worker to show up, so a worker that the OS has descheduled costs
// nothing — the caller (and any awake worker) simply takes its share. Workers spin briefly
// before sleeping so that back-to-back ops do not pay a futex wake-up each time.
//
// Tasks have a home thread: a job of N tasks on T threads gives thread t the contiguous range
// [N·t/T, N·(t+1)/T), which it runs from the front; a thread whose range is done takes tasks
// from the back of the others' ranges. So consecutive ops cut the same way (the row blocks of a
// GEMM, then of the LayerNorm and the quantization after it) run each block on the core that
// wrote it, while a descheduled worker's tasks are still taken over. (With a single shared
// cursor the blocks landed on either core from op to op, and half of each op's rows came from
// the other core's cache: MiniLM int8 b1 s128 on 2 threads ran 1-12% slower, by kernel level.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
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
  // A thread's range of one job: the job number (high 32 bits), the front (bits 16-31: the next
  // task its own thread takes) and the back (bits 0-15: one past the last task left). Claims are
  // CASes on the whole word, so a claim made with an older job's word fails.
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };
  static constexpr int kMaxTasksPerJob = 0xffff;  // run() cuts larger task counts into jobs of this many

  void worker(int thread);
  // Runs tasks of job `job` until none is left: its own range from the front, then the other
  // ranges from the back.
  void work(uint32_t job, int thread);
  // One task of range r of job `job` (from the front or the back), or -1 when the range is empty
  // or already belongs to another job.
  int claim(int r, uint32_t job, bool from_front);

  const int threads_;
  std::vector<std::thread> workers_;
  std::unique_ptr<Range[]> ranges_;  // one per thread
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint32_t> posted_{0};  // the newest job; workers wait for it to change
  std::atomic<int> done_{0};         // tasks of the current job finished
  std::atomic<bool> stop_{false};
  uint32_t job_ = 0;  // written by the caller only
  // The current job's function, context and first task index: written by the caller before it
  // posts the job's ranges, read by a thread only after it has claimed a task of that job.
  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  int offset_ = 0;
};

}  // namespace encrt::cpu
