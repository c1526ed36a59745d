// What `encrt bench` says it ran on (core/host_info.h): CPU names from x86 and ARM /proc/cpuinfo
// texts (as Linux prints them), a virtual machine from x86's hypervisor flag, and user-mode
// emulation from a CPU family that is not the binary's or from qemu's own process name. The live
// detection is checked against what the test scripts know: scripts/test_aarch64.sh and
// scripts/test_armv7.sh run this suite under qemu with ENCRT_EXPECT_EMULATED=1.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "core/host_info.h"

namespace {

using namespace encrt::host;

// This repository's CI machine, as Linux 6.1 prints it (cut to what matters).
const char* const kX86VmCpuinfo =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n"
    "flags\t\t: fpu vme de pse tsc msr pae sse sse2 ht syscall nx lm avx f16c rdrand hypervisor lahf_lm avx2\n\n"
    "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"
    "flags\t\t: fpu vme de pse tsc msr pae sse sse2 ht syscall nx lm avx f16c rdrand hypervisor lahf_lm avx2\n\n";

const char* const kX86MetalCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz\n"
    "flags\t\t: fpu vme de pse tsc msr pae mce cx8 sse sse2 avx avx2\n\n";

// A Raspberry Pi 4 on a 64-bit kernel: four Cortex-A72 (implementer 0x41, part 0xd08).
std::string arm64_block(int n, const char* part) {
  return "processor\t: " + std::to_string(n) +
         "\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\n"
         "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: " + part + "\nCPU revision\t: 3\n\n";
}

HostProbe native(const std::string& cpuinfo) {
  HostProbe p;
  p.cpuinfo = cpuinfo;
  p.status_name = "encrt";
  p.exe_path = "/usr/local/bin/encrt";
  return p;
}

}  // namespace

TEST_CASE("host info: x86 virtual machine and bare metal", "[host_info]") {
  const HostInfo vm = describe_host(native(kX86VmCpuinfo), CpuFamily::kX86);
  CHECK(vm.cpu_model == "AMD EPYC");
  CHECK(vm.cpuinfo_family == CpuFamily::kX86);
  CHECK(vm.cpus == 2);
  CHECK(vm.virtual_machine);
  CHECK_FALSE(vm.emulated);

  const HostInfo metal = describe_host(native(kX86MetalCpuinfo), CpuFamily::kX86);
  CHECK(metal.cpu_model == "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz");
  CHECK(metal.cpus == 1);
  CHECK_FALSE(metal.virtual_machine);
  CHECK_FALSE(metal.emulated);
}

TEST_CASE("host info: an ARM binary that sees an x86 /proc/cpuinfo is emulated", "[host_info]") {
  // qemu-user 7.2 (Debian 12), started directly: its process is named after qemu.
  HostProbe qemu = native(kX86VmCpuinfo);
  qemu.status_name = "qemu-arm";
  qemu.exe_path = "/work/build-armv7/bin/encrt";
  const HostInfo a = describe_host(qemu, CpuFamily::kArm);
  CHECK(a.emulated);
  CHECK(a.emulator == "qemu-user");
  CHECK(a.emulation_reason.find("sees an x86 CPU in /proc/cpuinfo") != std::string::npos);
  CHECK(a.cpu_model == "AMD EPYC");  // the host's CPU, which the emulator runs on
  CHECK(a.virtual_machine);          // and the host's hypervisor flag

  // Through binfmt_misc the process is named after the binary: the CPU family alone shows it.
  const HostInfo b = describe_host(native(kX86VmCpuinfo), CpuFamily::kArm);
  CHECK(b.emulated);
  CHECK(b.emulator == "a user-mode emulator");

  // And an x86 binary on an ARM machine (a translator that passes the host's cpuinfo through).
  const HostInfo c = describe_host(native(arm64_block(0, "0xd08")), CpuFamily::kX86);
  CHECK(c.emulated);
  CHECK(c.emulation_reason.find("sees an ARM CPU") != std::string::npos);
}

TEST_CASE("host info: qemu's own process name shows emulation where cpuinfo is made up", "[host_info]") {
  // qemu 8.1+ prints an ARM /proc/cpuinfo for ARM guests; started directly, the process is still
  // qemu's while /proc/self/exe (rewritten by qemu) is the guest program.
  HostProbe p = native(arm64_block(0, "0xd07"));
  p.status_name = "qemu-aarch64";
  p.exe_path = "/work/build-aarch64/bin/encrt_runtime_tests";
  const HostInfo h = describe_host(p, CpuFamily::kArm);
  CHECK(h.emulated);
  CHECK(h.emulator == "qemu-user");
  CHECK(h.emulation_reason == "the process is qemu-aarch64 running encrt_runtime_tests");

  // qemu itself (its name and its executable agree) is a native program; so is one whose name
  // the kernel cut to 15 characters.
  p.exe_path = "/usr/bin/qemu-aarch64";
  CHECK_FALSE(describe_host(p, CpuFamily::kArm).emulated);
  p.status_name = "encrt_runtime_t";
  p.exe_path = "/work/build/bin/encrt_runtime_tests";
  CHECK_FALSE(describe_host(p, CpuFamily::kArm).emulated);
}

TEST_CASE("host info: ARM cores named from their MIDR fields", "[host_info]") {
  std::string pi4;
  for (int i = 0; i < 4; ++i) pi4 += arm64_block(i, "0xd08");
  pi4 += "Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
  const HostInfo h = describe_host(native(pi4), CpuFamily::kArm);
  CHECK(h.cpu_model == "ARM Cortex-A72 (BCM2835)");
  CHECK(h.cpuinfo_family == CpuFamily::kArm);
  CHECK(h.cpus == 4);
  CHECK_FALSE(h.emulated);
  CHECK_FALSE(h.virtual_machine);

  // A phone's big.LITTLE clusters, counted per kind in the order cpuinfo lists them.
  std::string phone;
  for (int i = 0; i < 4; ++i) phone += arm64_block(i, "0xd05");
  for (int i = 4; i < 7; ++i) phone += arm64_block(i, "0xd0b");
  phone += arm64_block(7, "0xd44");
  CHECK(describe_host(native(phone), CpuFamily::kArm).cpu_model ==
        "ARM Cortex-A55 x4 + ARM Cortex-A76 x3 + ARM Cortex-X1 x1");

  // A 32-bit kernel of a Raspberry Pi 2 (Cortex-A7), as a 32-bit binary sees it: ARM on both sides.
  const std::string pi2 =
      "processor\t: 0\nmodel name\t: ARMv7 Processor rev 5 (v7l)\nBogoMIPS\t: 38.40\n"
      "Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm\n"
      "CPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xc07\nCPU revision\t: 5\n\n"
      "Hardware\t: BCM2709\n";
  const HostInfo v7 = describe_host(native(pi2), CpuFamily::kArm);
  CHECK(v7.cpu_model == "ARM Cortex-A7 (BCM2709)");
  CHECK_FALSE(v7.emulated);

  // An old 32-bit kernel without MIDR fields: its one "Processor" line and the board.
  const HostInfo old = describe_host(
      native("Processor\t: ARMv7 Processor rev 2 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 996.14\n"
             "CPU architecture: 7\nHardware\t: Freescale i.MX 6Quad\n"),
      CpuFamily::kArm);
  CHECK(old.cpu_model == "ARMv7 Processor rev 2 (v7l) (Freescale i.MX 6Quad)");

  CHECK(arm_core_name(0x41, 0xd03) == "ARM Cortex-A53");
  CHECK(arm_core_name(0x4e, 0x004) == "NVIDIA Carmel");
  CHECK(arm_core_name(0x41, 0xdff) == "ARM part 0xdff");
  CHECK(arm_core_name(0x99, 0x123) == "implementer 0x99 part 0x123");
}

TEST_CASE("host info: nothing known decides nothing", "[host_info]") {
  const HostInfo none = describe_host(HostProbe{}, CpuFamily::kArm);
  CHECK(none.cpu_model.empty());
  CHECK(none.cpuinfo_family == CpuFamily::kUnknown);
  CHECK(none.cpus == 0);
  CHECK_FALSE(none.emulated);
  CHECK_FALSE(none.virtual_machine);
  // A RISC-V or POWER cpuinfo is no x86 and no ARM: an ARM binary is not called emulated there.
  const HostInfo riscv = describe_host(native("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\n"), CpuFamily::kArm);
  CHECK(riscv.cpuinfo_family == CpuFamily::kUnknown);
  CHECK_FALSE(riscv.emulated);
  CHECK(describe_host(native(kX86VmCpuinfo), CpuFamily::kUnknown).emulated == false);
}

TEST_CASE("host info: this process", "[host_info]") {
  const HostInfo h = detect_host();
  const char* expect = std::getenv("ENCRT_EXPECT_EMULATED");
  INFO("binary " << binary_arch() << ", cpu '" << h.cpu_model << "', emulated " << h.emulated << " ("
                 << h.emulation_reason << "), virtual machine " << h.virtual_machine);
  if (expect && std::string(expect) == "1") {
    // The qemu runs of test_aarch64.sh / test_armv7.sh.
    CHECK(h.emulated);
    CHECK(h.emulator == "qemu-user");
  } else if (expect && std::string(expect) == "0") {
    CHECK_FALSE(h.emulated);
  } else if (binary_cpu_family() == CpuFamily::kX86) {
    CHECK_FALSE(h.emulated);  // x86 suites run natively here
  } else {
    WARN("ENCRT_EXPECT_EMULATED is not set: the live detection is reported, not checked (" << binary_arch()
         << ", emulated: " << h.emulated << ")");
  }
#if defined(__linux__)
  if (binary_cpu_family() == CpuFamily::kUnknown) return;  // cpuinfo of neither x86 nor ARM
  CHECK(h.cpus >= 1);
  CHECK(h.cpuinfo_family != CpuFamily::kUnknown);
  CHECK_FALSE(h.cpu_model.empty());
#endif
}
