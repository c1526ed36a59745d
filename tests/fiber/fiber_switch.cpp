// encrt_fiber_switch for x86-64 (System V) and aarch64 (AAPCS64), and the frame Context::start
// lays on a new stack so that the first switch to it "returns" into encrt_fiber_start, which calls
// the fiber's entry. Each switch pushes the registers a callee must keep, then the floating-point
// control state, saves the stack pointer, loads the other one and pops the same frame from there:
//
//   x86-64 (72 bytes, then the return address):  x87 control word | MXCSR | r15 r14 r13 r12 rbx rbp
//   aarch64 (176 bytes; x30 is the return address): x19..x28 | x29 x30 | d8..d15 | FPCR | (pad)
//
// A new fiber's frame holds its entry in r13 / x20 and the entry's argument in r12 / x19, a zero
// frame pointer (so that backtraces end there) and the calling thread's floating-point control
// state; the stack pointer that encrt_fiber_start finds is 16-byte aligned, as a call needs.
#include "fiber/fiber_switch.h"

#include <cstdint>

#if ENCRT_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if defined(__x86_64__)
asm(R"(
  .text
  .globl encrt_fiber_switch
  .type encrt_fiber_switch, @function
  .p2align 4
encrt_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  fnstcw (%rsp)
  stmxcsr 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size encrt_fiber_switch, .-encrt_fiber_switch

  .globl encrt_fiber_start
  .type encrt_fiber_start, @function
  .p2align 4
encrt_fiber_start:
  .cfi_startproc
  .cfi_undefined %rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size encrt_fiber_start, .-encrt_fiber_start
  .section .note.GNU-stack, "", %progbits
  .text
)");
#elif defined(__aarch64__)
asm(R"(
  .text
  .globl encrt_fiber_switch
  .type encrt_fiber_switch, %function
  .p2align 4
encrt_fiber_switch:
  sub sp, sp, #176
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mrs x9, fpcr
  str x9, [sp, #160]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  ldr x9, [sp, #160]
  msr fpcr, x9
  add sp, sp, #176
  ret
  .size encrt_fiber_switch, .-encrt_fiber_switch

  .globl encrt_fiber_start
  .type encrt_fiber_start, %function
  .p2align 4
encrt_fiber_start:
  .cfi_startproc
  .cfi_undefined x30
  mov x0, x19
  blr x20
  brk #1
  .cfi_endproc
  .size encrt_fiber_start, .-encrt_fiber_start
  .section .note.GNU-stack, "", %progbits
  .text
)");
#else
#error "encrt's fiber switch is written for x86-64 and aarch64 (tests/fiber/fiber_switch.cpp)"
#endif

extern "C" void encrt_fiber_start();

namespace encrt::fiber {

void Context::start(Stack stack, void (*entry)(void*), void* argument) {
#if ENCRT_FIBER_ASAN
  // A fiber that ended left for good from inside its frames: where those kept their locals on the
  // real stack (GCC, or without detect_stack_use_after_return), their redzones are still poisoned,
  // and would trip the next fiber started here. Its shadow starts clean, as a new thread's does.
  __asan_unpoison_memory_region(stack.bottom, stack.bytes);
#endif
  const uintptr_t top = (reinterpret_cast<uintptr_t>(stack.bottom) + stack.bytes) & ~uintptr_t{15};
#if defined(__x86_64__)
  uint64_t* frame = reinterpret_cast<uint64_t*>(top - 16 - 72);  // 16 bytes above it unused
  uint16_t control_word = 0;
  uint32_t mxcsr = 0;
  asm volatile("fnstcw %0" : "=m"(control_word));
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  frame[0] = control_word;
  frame[1] = mxcsr;
  frame[2] = frame[3] = 0;                                   // r15, r14
  frame[4] = reinterpret_cast<uintptr_t>(entry);             // r13
  frame[5] = reinterpret_cast<uintptr_t>(argument);          // r12
  frame[6] = frame[7] = 0;                                   // rbx, rbp
  frame[8] = reinterpret_cast<uintptr_t>(&encrt_fiber_start);  // where the switch returns to
#else
  uint64_t* frame = reinterpret_cast<uint64_t*>(top - 176);
  uint64_t fpcr = 0;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  for (int i = 0; i < 22; ++i) frame[i] = 0;                // x19..x30, d8..d15, FPCR, pad
  frame[0] = reinterpret_cast<uintptr_t>(argument);          // x19
  frame[1] = reinterpret_cast<uintptr_t>(entry);             // x20
  frame[11] = reinterpret_cast<uintptr_t>(&encrt_fiber_start);  // x30: where the switch returns to
  frame[20] = fpcr;
#endif
  sp_ = frame;
}

}  // namespace encrt::fiber
