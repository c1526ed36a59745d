// Stackful fibers for the CUDA emulator (tests/cuda_emulation/warp_emulation.h runs each emulated
// CUDA thread as a fiber of one host thread): a switch saves what the calling convention asks a
// call to keep (the callee-saved registers and the floating-point control state) on the stack it
// leaves, and restores them from the stack it enters, in a few dozen instructions
// (fiber_switch.cpp, x86-64 and aarch64).
//
// Why not swapcontext: glibc's swapcontext also saves and restores the signal mask, a system call
// (rt_sigprocmask) at every switch, and AddressSanitizer's interceptor of it clears the shadow of
// the whole stack it enters (32 KiB for a 256 KiB stack) at every switch too. The emulator switches
// millions of times a test case (each warp collective, each barrier): without those, the emulation
// suite's Release run took 68 s instead of 157 s, and one test case under AddressSanitizer 5.3 s
// instead of 12 s. Nothing in the emulator touches the signal mask, so none of that is needed.
//
// Under AddressSanitizer each switch is announced to it (__sanitizer_start_switch_fiber before,
// __sanitizer_finish_switch_fiber after), so that its reports and its fake stacks follow the stack
// that runs. With detect_stack_use_after_return each fiber has a fake stack of its own (where the
// frames live whose use after return it checks), made at the fiber's first call and unmapped when
// it leaves for good, unless the caller keeps it for the next fiber (arrived, leave_for_good): a
// fresh fake stack for each of the emulator's fibers cost more than all its switches.
// ThreadSanitizer's own fibers (tests/cuda_emulation/race_check.h) are switched by the caller, in
// the same frame as the switch: every function here that switches is always inlined.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENCRT_FIBER_ASAN 1
#endif
#endif
#if !defined(ENCRT_FIBER_ASAN) && defined(__SANITIZE_ADDRESS__)
#define ENCRT_FIBER_ASAN 1
#endif
#if ENCRT_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

// Saves the running context's registers on its stack and its stack pointer in *save, then
// resumes the context whose stack pointer is resume (saved by an earlier switch, or made by
// encrt::fiber::Context::start). Returns when some switch resumes *save.
extern "C" void encrt_fiber_switch(void** save, void* resume);

namespace encrt::fiber {

// A stack: where a fiber runs, or the host thread's own (bounds known to AddressSanitizer only).
struct Stack {
  const void* bottom = nullptr;
  size_t bytes = 0;
};

// A context that can be switched to: the stack pointer its last switch away saved.
class Context {
 public:
  // Makes this the start of entry(argument) on stack: the first switch to it calls entry, which
  // must never return (it ends with leave_for_good). Under AddressSanitizer the stack's shadow is
  // cleared (what an ended fiber's frames left poisoned).
  void start(Stack stack, void (*entry)(void*), void* argument);

  // Leaves the running context (saved into this) for `to`, which runs on to_stack; returns when a
  // switch comes back to this.
  __attribute__((always_inline)) inline void switch_to(const Context& to, Stack to_stack) {
#if ENCRT_FIBER_ASAN
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, to_stack.bottom, to_stack.bytes);
    encrt_fiber_switch(&sp_, to.sp_);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
    (void)to_stack;
    encrt_fiber_switch(&sp_, to.sp_);
#endif
  }

  // The last thing a fiber does: switches to `to` for good. Its stack is free from then on (it may
  // be started again). Its fake stack (AddressSanitizer) is unmapped, or kept in *keep_fake_stack
  // for a later fiber's arrived.
  [[noreturn]] __attribute__((always_inline)) static inline void leave_for_good(const Context& to, Stack to_stack,
                                                                               void** keep_fake_stack = nullptr) {
    void* ended = nullptr;
#if ENCRT_FIBER_ASAN
    __sanitizer_start_switch_fiber(keep_fake_stack, to_stack.bottom, to_stack.bytes);
#else
    (void)to_stack;
    (void)keep_fake_stack;
#endif
    encrt_fiber_switch(&ended, to.sp_);
    __builtin_trap();  // (nothing resumes an ended fiber)
  }

 private:
  void* sp_ = nullptr;
};

// The first thing a fiber's entry does: returns the stack of the context that switched to it
// (under AddressSanitizer, which tells; elsewhere an empty Stack, which nothing needs). fake_stack:
// one an ended fiber kept (leave_for_good), whose frames have all returned, or none (a new one).
__attribute__((always_inline)) inline Stack arrived(void* fake_stack = nullptr) {
  Stack from;
#if ENCRT_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, &from.bottom, &from.bytes);
#else
  (void)fake_stack;
#endif
  return from;
}

}  // namespace encrt::fiber
