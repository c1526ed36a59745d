// The CUDA emulator's fiber switch (fiber_switch.h) on its own: fibers take turns in the order
// they switch, the registers a call must keep survive a switch to a context that clobbers them, a
// new fiber's stack is aligned as a call needs, each context keeps its floating-point rounding
// mode, and stacks are started again after their fiber has ended. Built for x86-64 and for
// aarch64 (scripts/test_aarch64.sh runs it under qemu).
#include <catch2/catch.hpp>

#include <cfenv>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fiber/fiber_switch.h"

#if ENCRT_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace {

using encrt::fiber::Context;
using encrt::fiber::Stack;

constexpr size_t kStackBytes = 64 * 1024;

// The host thread's context and the fibers', with their stacks.
struct Fibers {
  explicit Fibers(int count) : contexts(static_cast<size_t>(count)) {
    for (int i = 0; i < count; ++i) stacks.emplace_back(new unsigned char[kStackBytes]);
  }
  Stack stack(int i) const { return {stacks[static_cast<size_t>(i)].get(), kStackBytes}; }

  Context host;
  Stack host_stack;  // (AddressSanitizer tells it to the first fiber that starts)
  std::vector<Context> contexts;
  std::vector<std::unique_ptr<unsigned char[]>> stacks;
};

// Round robin: each fiber logs (its index, its turn) and yields to the host, turns times, then ends.
struct RoundRobin {
  Fibers* fibers;
  int turns;
  std::string log;
  int running = 0;
};
void round_robin_entry(void* argument) {
  RoundRobin& r = *static_cast<RoundRobin*>(argument);
  r.fibers->host_stack = encrt::fiber::arrived();
  const int me = r.running;
  for (int turn = 0; turn < r.turns; ++turn) {
    r.log += std::to_string(me) + ":" + std::to_string(turn) + " ";
    r.fibers->contexts[static_cast<size_t>(me)].switch_to(r.fibers->host, r.fibers->host_stack);
  }
  r.log += std::to_string(me) + ":end ";
  Context::leave_for_good(r.fibers->host, r.fibers->host_stack);
}

TEST_CASE("fibers: they take turns in the order they are switched to, and stacks start again after their fiber ended", "[fiber]") {
  Fibers fibers(3);
  for (int round = 0; round < 2; ++round) {  // the second round starts the same stacks again
    RoundRobin r{&fibers, 2, {}, 0};
    for (int i = 0; i < 3; ++i) fibers.contexts[static_cast<size_t>(i)].start(fibers.stack(i), &round_robin_entry, &r);
    for (int pass = 0; pass < 3; ++pass)  // two turns each, then each fiber's end
      for (int i = 0; i < 3; ++i) {
        const int f = pass % 2 == 0 ? i : 2 - i;  // down the fibers, then back up
        r.running = f;
        fibers.host.switch_to(fibers.contexts[static_cast<size_t>(f)], fibers.stack(f));
      }
    CHECK(r.log == "0:0 1:0 2:0 2:1 1:1 0:1 0:end 1:end 2:end ");
  }
}

// Values a function keeps live across a switch, in whatever registers the compiler chose (the
// callee-saved ones across a call), while the other context enters each switch with every
// callee-saved register overwritten.
struct Clobber {
  Fibers* fibers;
  int switches;
};
__attribute__((always_inline)) inline void clobber_callee_saved_registers() {
#if defined(__x86_64__)
  asm volatile(
      "movq $0x5a5a5a5a5a5a5a5a, %%rbx\n\tmovq %%rbx, %%r12\n\tmovq %%rbx, %%r13\n\t"
      "movq %%rbx, %%r14\n\tmovq %%rbx, %%r15" ::: "rbx", "r12", "r13", "r14", "r15");
#elif defined(__aarch64__)
  asm volatile(
      "mov x19, #0x5a5a\n\tmov x20, x19\n\tmov x21, x19\n\tmov x22, x19\n\tmov x23, x19\n\t"
      "mov x24, x19\n\tmov x25, x19\n\tmov x26, x19\n\tmov x27, x19\n\tmov x28, x19\n\t"
      "fmov d8, x19\n\tfmov d9, x19\n\tfmov d10, x19\n\tfmov d11, x19\n\tfmov d12, x19\n\t"
      "fmov d13, x19\n\tfmov d14, x19\n\tfmov d15, x19" ::: "x19", "x20", "x21", "x22", "x23", "x24",
      "x25", "x26", "x27", "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");
#endif
}
void clobber_entry(void* argument) {
  Clobber& c = *static_cast<Clobber*>(argument);
  c.fibers->host_stack = encrt::fiber::arrived();
  for (int i = 0; i < c.switches; ++i) {
    clobber_callee_saved_registers();  // (inlined: this function's own epilogue restores them, after the switches)
    c.fibers->contexts[0].switch_to(c.fibers->host, c.fibers->host_stack);
  }
  Context::leave_for_good(c.fibers->host, c.fibers->host_stack);
}

// Each callee-saved register pinned to a value of its own across one switch (an explicit register
// variable, tied to it by the empty asm statements on either side of the switch).
__attribute__((noinline)) bool callee_saved_registers_survive(Fibers& fibers) {
#if defined(__x86_64__)
  register uint64_t rbx asm("rbx") = 0x1111, r12 asm("r12") = 0x1212, r13 asm("r13") = 0x1313,
                             r14 asm("r14") = 0x1414, r15 asm("r15") = 0x1515;
  asm volatile("" : "+r"(rbx), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15));
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  asm volatile("" : "+r"(rbx), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15));
  return rbx == 0x1111 && r12 == 0x1212 && r13 == 0x1313 && r14 == 0x1414 && r15 == 0x1515;
#elif defined(__aarch64__)
  register uint64_t x19 asm("x19") = 19, x20 asm("x20") = 20, x21 asm("x21") = 21, x22 asm("x22") = 22,
                    x23 asm("x23") = 23, x24 asm("x24") = 24, x25 asm("x25") = 25, x26 asm("x26") = 26,
                    x27 asm("x27") = 27, x28 asm("x28") = 28;
  register double d8 asm("d8") = 8, d9 asm("d9") = 9, d10 asm("d10") = 10, d11 asm("d11") = 11,
                  d12 asm("d12") = 12, d13 asm("d13") = 13, d14 asm("d14") = 14, d15 asm("d15") = 15;
  asm volatile("" : "+r"(x19), "+r"(x20), "+r"(x21), "+r"(x22), "+r"(x23), "+r"(x24), "+r"(x25),
               "+r"(x26), "+r"(x27), "+r"(x28));
  asm volatile("" : "+w"(d8), "+w"(d9), "+w"(d10), "+w"(d11), "+w"(d12), "+w"(d13), "+w"(d14), "+w"(d15));
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  asm volatile("" : "+r"(x19), "+r"(x20), "+r"(x21), "+r"(x22), "+r"(x23), "+r"(x24), "+r"(x25),
               "+r"(x26), "+r"(x27), "+r"(x28));
  asm volatile("" : "+w"(d8), "+w"(d9), "+w"(d10), "+w"(d11), "+w"(d12), "+w"(d13), "+w"(d14), "+w"(d15));
  return x19 == 19 && x20 == 20 && x21 == 21 && x22 == 22 && x23 == 23 && x24 == 24 && x25 == 25 &&
         x26 == 26 && x27 == 27 && x28 == 28 && d8 == 8 && d9 == 9 && d10 == 10 && d11 == 11 &&
         d12 == 12 && d13 == 13 && d14 == 14 && d15 == 15;
#endif
}

TEST_CASE("fibers: integer and floating-point values live across a switch survive it", "[fiber]") {
  Fibers fibers(1);
  Clobber c{&fibers, 101};  // (the last switch: callee_saved_registers_survive's)
  fibers.contexts[0].start(fibers.stack(0), &clobber_entry, &c);
  volatile long seed = 7;
  volatile double seed_f = 1.5;
  long a = seed, b = seed * 3, d = seed * 5, e = seed * 11, g = seed * 13, h = seed * 17;
  double x = seed_f, y = seed_f * 2, z = seed_f * 4, w = seed_f * 8, u = seed_f * 16, v = seed_f * 32;
  for (int i = 0; i < c.switches - 1; ++i) {
    fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
    a += 1; b += 2; d += 3; e += 4; g += 5; h += 6;
    x += 1; y += 2; z += 3; w += 4; u += 5; v += 6;
  }
  CHECK(callee_saved_registers_survive(fibers));
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));  // its end
  const long n = c.switches - 1;
  CHECK(a == 7 + n);
  CHECK(b == 21 + 2 * n);
  CHECK(d == 35 + 3 * n);
  CHECK(e == 77 + 4 * n);
  CHECK(g == 91 + 5 * n);
  CHECK(h == 119 + 6 * n);
  CHECK(x == 1.5 + n);
  CHECK(y == 3.0 + 2 * n);
  CHECK(z == 6.0 + 3 * n);
  CHECK(w == 12.0 + 4 * n);
  CHECK(u == 24.0 + 5 * n);
  CHECK(v == 48.0 + 6 * n);
}

// A new fiber's first call sees the stack alignment the ABI promises (16 bytes on both), and each
// context keeps its own rounding mode across switches.
struct Environment {
  Fibers* fibers;
  uintptr_t misalignment = 1;
  int rounding_before = -1, rounding_after = -1;
  double third_after = 0;  // 1/3 in the fiber after a switch: rounded up
};
// 1/3 as the running context's rounding mode gives it (SSE on x86-64: MXCSR; fegetround reads the
// x87 control word there).
__attribute__((noinline)) double one_third() {
  volatile double one = 1, three = 3;
  return one / three;
}
__attribute__((noinline)) uintptr_t stack_misalignment() {
  alignas(16) unsigned char buffer[16] = {};
  volatile uintptr_t address = reinterpret_cast<uintptr_t>(buffer);
  return address % 16 + buffer[0];
}
void environment_entry(void* argument) {
  Environment& e = *static_cast<Environment*>(argument);
  e.fibers->host_stack = encrt::fiber::arrived();
  e.misalignment = stack_misalignment();
  std::fesetround(FE_UPWARD);
  e.rounding_before = std::fegetround();
  e.fibers->contexts[0].switch_to(e.fibers->host, e.fibers->host_stack);
  e.rounding_after = std::fegetround();
  e.third_after = one_third();
  std::fesetround(FE_TONEAREST);
  Context::leave_for_good(e.fibers->host, e.fibers->host_stack);
}

TEST_CASE("fibers: a new fiber's stack is 16-byte aligned, and each context keeps its rounding mode", "[fiber]") {
  Fibers fibers(1);
  Environment e{&fibers};
  REQUIRE(std::fegetround() == FE_TONEAREST);
  fibers.contexts[0].start(fibers.stack(0), &environment_entry, &e);
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  const double third_nearest = 1.0 / 3.0;
  CHECK(e.misalignment == 0);
  CHECK(e.rounding_before == FE_UPWARD);
  CHECK(std::fegetround() == FE_TONEAREST);  // the host's own, back with it
  CHECK(one_third() == third_nearest);
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  CHECK(e.rounding_after == FE_UPWARD);
  CHECK(e.third_after > third_nearest);
  CHECK(std::fegetround() == FE_TONEAREST);
  CHECK(one_third() == third_nearest);
}

// A fiber that leaves for good with a local array still in scope, its address taken: under
// AddressSanitizer its redzones may stay poisoned on the stack (the frame never returns), where
// the next start of that stack lays the new fiber's first frame.
struct Leaver {
  Fibers* fibers;
  int started = 0;
};
__attribute__((noinline)) void touch(volatile unsigned char* bytes, size_t count) {
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<unsigned char>(i);
}
void leaver_entry(void* argument) {
  Leaver& l = *static_cast<Leaver*>(argument);
  l.fibers->host_stack = encrt::fiber::arrived();
  ++l.started;
  volatile unsigned char bytes[200];
  touch(bytes, sizeof bytes);
  Context::leave_for_good(l.fibers->host, l.fibers->host_stack);
}

TEST_CASE("fibers: a stack starts again after its fiber left for good with locals in scope", "[fiber]") {
  Fibers fibers(1);
  Leaver l{&fibers};
  for (int i = 0; i < 3; ++i) {
    fibers.contexts[0].start(fibers.stack(0), &leaver_entry, &l);
#if ENCRT_FIBER_ASAN
    // With GCC's AddressSanitizer the ended fiber's frames left their redzones poisoned on the
    // stack (the first Context::start after them tripped on it before start cleared the shadow);
    // clang's clears them itself before the fiber's last switch (__asan_handle_no_return).
    CHECK(__asan_region_is_poisoned(fibers.stacks[0].get(), kStackBytes) == nullptr);
#endif
    fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  }
  CHECK(l.started == 3);
}

// A million switches back and forth, as the emulator makes in a test case.
struct PingPong {
  Fibers* fibers;
  long count = 0;
};
void ping_pong_entry(void* argument) {
  PingPong& p = *static_cast<PingPong*>(argument);
  p.fibers->host_stack = encrt::fiber::arrived();
  for (long i = 0; i < 500000; ++i) {
    ++p.count;
    p.fibers->contexts[0].switch_to(p.fibers->host, p.fibers->host_stack);
  }
  Context::leave_for_good(p.fibers->host, p.fibers->host_stack);
}

TEST_CASE("fibers: a million switches", "[fiber]") {
  Fibers fibers(1);
  PingPong p{&fibers};
  fibers.contexts[0].start(fibers.stack(0), &ping_pong_entry, &p);
  long seen = 0;
  for (long i = 0; i <= 500000; ++i) {
    fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
    seen += p.count == i + 1 || (i == 500000 && p.count == 500000);
  }
  CHECK(seen == 500001);
  CHECK(p.count == 500000);
}

}  // namespace

namespace {

// Hidden ([.fiber_asan]): a write past a stack array of a fiber, which AddressSanitizer must report
// as a stack-buffer-overflow with the fiber's frames (scripts/test_sanitizers.sh requires it): the
// switches' annotations keep its view of which stack runs right.
struct Overflow {
  Fibers* fibers;
  int index;
};
__attribute__((noinline)) int write_past(int index) {
  volatile int array[4] = {};
  volatile int* element = array;  // (through a pointer: UBSan's bounds check does not see it, ASan does)
  element[index] = 1;
  return array[0];
}
void overflow_entry(void* argument) {
  Overflow& o = *static_cast<Overflow*>(argument);
  o.fibers->host_stack = encrt::fiber::arrived();
  o.fibers->contexts[0].switch_to(o.fibers->host, o.fibers->host_stack);
  (void)write_past(o.index);
  Context::leave_for_good(o.fibers->host, o.fibers->host_stack);
}

TEST_CASE("fibers: a stack buffer overflow in a fiber", "[.fiber_asan]") {
  Fibers fibers(1);
  volatile int index = 4;
  Overflow o{&fibers, index};
  fibers.contexts[0].start(fibers.stack(0), &overflow_entry, &o);
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
  fibers.host.switch_to(fibers.contexts[0], fibers.stack(0));
}

}  // namespace
