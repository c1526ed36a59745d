// What a process runs on, for benchmarks that must not be misread: the CPU's name, whether a
// user-mode emulator (qemu-user) runs this binary, whether the machine is a virtual machine.
// Read from Linux's (and Android's) /proc; elsewhere the fields stay unknown.
//
// Emulation is detected from two signals, either of which is enough:
//  - /proc/cpuinfo describes another CPU family than the one this binary is built for (an ARM
//    binary that sees an x86 CPU). qemu-user up to 8.0 (Debian 12 has 7.2) passes the host's
//    /proc/cpuinfo through to its guests unchanged; so would any translator that does not fake it.
//    Only x86 and ARM are recognised in cpuinfo: anything else is "unknown" and decides nothing
//    (a 32-bit ARM binary on a 64-bit ARM kernel is ARM on both sides: native).
//  - the kernel's name of the running program (/proc/self/status "Name:") is "qemu-*" while the
//    program qemu shows to its guest (/proc/self/exe, which qemu-user rewrites) is another file:
//    qemu started directly (`qemu-arm -L ... prog`, as the test scripts do).
// qemu 8.1 and later make up an ARM /proc/cpuinfo for ARM guests; started through binfmt_misc
// (the kernel runs qemu for the binary, and names the process after the binary) they are not
// detected.
#pragma once

#include <string>

namespace encrt::host {

enum class CpuFamily { kUnknown, kX86, kArm };

struct HostInfo {
  // "AMD EPYC 9R14 96-Core Processor", "ARM Cortex-A72", "ARM Cortex-A76 x4 + ARM Cortex-A55 x4
  // (Qualcomm ...)", or "" when /proc/cpuinfo names none.
  std::string cpu_model;
  CpuFamily cpuinfo_family = CpuFamily::kUnknown;  // the CPU family /proc/cpuinfo describes
  int cpus = 0;                                    // processors listed in /proc/cpuinfo
  bool emulated = false;
  std::string emulator;           // "qemu-user" (or "a user-mode emulator" when it cannot be named)
  std::string emulation_reason;   // what showed it, in words
  bool virtual_machine = false;   // x86's "hypervisor" cpuinfo flag: timings valid, the CPU shared
};

// The inputs of the detection, as read from /proc (or made up by a test).
struct HostProbe {
  std::string cpuinfo;      // /proc/cpuinfo
  std::string status_name;  // /proc/self/status "Name:" (the kernel's name of the program)
  std::string exe_path;     // /proc/self/exe (the program as qemu-user shows it to its guest)
};

// This binary's architecture ("x86_64", "aarch64", "armv7", ...) and CPU family, from the compiler.
const char* binary_arch();
CpuFamily binary_cpu_family();

// The name of an ARM core from /proc/cpuinfo's "CPU implementer" and "CPU part" (the MIDR's
// fields): "ARM Cortex-A53", "NVIDIA Carmel", ...; "implementer 0x.. part 0x..." when unknown.
std::string arm_core_name(unsigned implementer, unsigned part);

// The detection on given inputs, for a binary of `binary` family.
HostInfo describe_host(const HostProbe& probe, CpuFamily binary);
// The detection on this process (reads /proc; nothing there: unknown CPU, not emulated).
HostInfo detect_host();

}  // namespace encrt::host
