// The emulator's race check: in a ThreadSanitizer build (ENCRT_SANITIZE_THREAD), every emulated
// CUDA thread is a ThreadSanitizer fiber of its own, and the only orderings between the threads of
// a block (or of a cluster) are the ones CUDA gives: __syncthreads (and __syncthreads_or) and the
// cluster's barrier. Every read and write of the kernel's own code is then checked against them, so
// two accesses from two threads of a block or cluster, one a write, with no barrier between them
// are reported as a data race (with both stacks: the kernel's lines) whatever order the schedule
// ran them in: what compute-sanitizer's racecheck reports on a GPU, here for shared memory
// (dynamic, static, a cluster peer's) and global memory alike. What it takes:
//   - fibers switched without synchronization (__tsan_switch_to_fiber_no_sync), so that taking
//     turns orders nothing;
//   - each block or cluster barrier a release on arrival and an acquire on leaving, on two sync
//     bytes of its own, one for each parity of its generation (a thread that has left generation g
//     and arrived at g + 1 must not order what it did before anyone leaves g);
//   - the warp's shuffles, votes and mma ordering nothing, as on the device (only __syncwarp and
//     the barriers order memory there);
//   - a cp.async copy seen as a write by its thread both at its issue and at the wait that covers
//     it, since it may land at any moment in between;
//   - the emulator's own bookkeeping (its barriers' counters, the exchange slots of a warp's
//     shuffles, the scheduler's state, which one host thread's fibers share without locks)
//     unchecked (Unchecked).
// What it does not check: blocks (and clusters) of a launch, which run one after another here,
// are ordered one after the other (the host acquires every thread's end and releases the next
// block's start), so two blocks writing one global word are not reported; nor is a block's shared
// memory read before any thread of the block wrote it (the garbage the launches fill it with shows
// that). Elsewhere every function here does nothing.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ENCRT_EMULATION_RACE_CHECK 1
#endif
#endif
#if !defined(ENCRT_EMULATION_RACE_CHECK) && defined(__SANITIZE_THREAD__)
#define ENCRT_EMULATION_RACE_CHECK 1
#endif

#if ENCRT_EMULATION_RACE_CHECK
#include <sanitizer/tsan_interface.h>
#include <vector>
extern "C" void __tsan_write_range(void* address, unsigned long bytes);  // (tsan_interface.h omits it)
// ThreadSanitizer's dynamic annotations (its runtime defines them; no header declares them).
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
void AnnotateIgnoreSyncBegin(const char* file, int line);
void AnnotateIgnoreSyncEnd(const char* file, int line);
}
#endif

// A fiber's entry function switches back to the scheduler's fiber as its last step, after which
// its own function-exit hook would run on the scheduler's shadow stack: the entry function is left
// uninstrumented (what it calls is not).
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define ENCRT_EMULATION_FIBER_ENTRY __attribute__((disable_sanitizer_instrumentation))
#endif
#endif
#if !defined(ENCRT_EMULATION_FIBER_ENTRY) && defined(__GNUC__) && !defined(__clang__)
#define ENCRT_EMULATION_FIBER_ENTRY __attribute__((no_sanitize_thread))
#endif
#if !defined(ENCRT_EMULATION_FIBER_ENTRY)
#define ENCRT_EMULATION_FIBER_ENTRY
#endif

namespace encrt::emulation::race {

#if ENCRT_EMULATION_RACE_CHECK
inline constexpr bool kChecked = true;

// The emulator's own reads and writes while one lives (and, with sync, its locks' orderings).
class Unchecked {
 public:
  explicit Unchecked(bool sync = false) : sync_(sync) {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    if (sync_) AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
  }
  ~Unchecked() {
    if (sync_) AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
  Unchecked(const Unchecked&) = delete;
  Unchecked& operator=(const Unchecked&) = delete;

 private:
  bool sync_;
};

// The opposite, inside an Unchecked: the kernel's own access that the emulator makes for it (a
// cp.async copy landing in shared memory at the wait that covers it).
class Checked {
 public:
  Checked() {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  }
  ~Checked() {
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  }
  Checked(const Checked&) = delete;
  Checked& operator=(const Checked&) = delete;
};

inline void release(const void* address) { __tsan_release(const_cast<void*>(address)); }
inline void acquire(const void* address) { __tsan_acquire(const_cast<void*>(address)); }

// A write of [memory, memory + bytes) by the running thread, without writing it (a cp.async copy
// may land at any moment from its issue to its wait: the end where it does not land).
inline void write(void* memory, size_t bytes) { __tsan_write_range(memory, bytes); }

// The fibers of the emulated threads, one per thread index of a launch, made once and kept for the
// host thread's life (ThreadSanitizer's per-fiber state is large, and launches are many); and the
// host thread's own, which runs the scheduler. Both per host thread: a program that launches from
// several threads (the emulated GPU's sessions on two threads) runs each launch's fibers on the
// thread that launched it, and switches back to that thread's own fiber.
inline void* fiber(size_t index) {
  thread_local std::vector<void*> fibers;
  while (fibers.size() <= index) fibers.push_back(__tsan_create_fiber(0));
  return fibers[index];
}
inline void* host_fiber() {
  thread_local void* host = __tsan_get_current_fiber();
  return host;
}
// Called by the scheduler before its first switch (the host thread's fiber is the one running).
inline void note_scheduler() { (void)host_fiber(); }
// Just before the fiber switch (tests/fiber) to an emulated thread (index) or back to the
// scheduler: no ordering. Always inlined: the switch must happen in the frame that calls the fiber
// switch, or this function's own exit hook would pop the other fiber's shadow stack.
__attribute__((always_inline)) inline void switch_to_thread(size_t index) {
  void* to = fiber(index);
  __tsan_switch_to_fiber(to, __tsan_switch_to_fiber_no_sync);
}
__attribute__((always_inline)) inline void switch_to_scheduler() {
  void* to = host_fiber();
  __tsan_switch_to_fiber(to, __tsan_switch_to_fiber_no_sync);
}

#else
inline constexpr bool kChecked = false;

class Unchecked {
 public:
  explicit Unchecked(bool = false) {}
  Unchecked(const Unchecked&) = delete;
  Unchecked& operator=(const Unchecked&) = delete;
};
class Checked {
 public:
  Checked() {}
  Checked(const Checked&) = delete;
  Checked& operator=(const Checked&) = delete;
};
inline void release(const void*) {}
inline void acquire(const void*) {}
inline void write(void*, size_t) {}
inline void note_scheduler() {}
inline void switch_to_thread(size_t) {}
inline void switch_to_scheduler() {}
#endif

}  // namespace encrt::emulation::race
