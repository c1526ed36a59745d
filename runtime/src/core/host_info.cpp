#include "core/host_info.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

namespace encrt::host {

namespace {

struct ArmPart {
  unsigned implementer, part;
  const char* name;
};

// MIDR implementer and part numbers as the cores' technical reference manuals give them (and
// Linux's arch/arm64/include/asm/cputype.h), for the cores encrt's users are likely to bench on.
constexpr ArmPart kArmParts[] = {
    {0x41, 0xb76, "ARM1176"},          {0x41, 0xc05, "Cortex-A5"},        {0x41, 0xc07, "Cortex-A7"},
    {0x41, 0xc08, "Cortex-A8"},        {0x41, 0xc09, "Cortex-A9"},        {0x41, 0xc0e, "Cortex-A17"},
    {0x41, 0xc0f, "Cortex-A15"},       {0x41, 0xd01, "Cortex-A32"},       {0x41, 0xd03, "Cortex-A53"},
    {0x41, 0xd04, "Cortex-A35"},       {0x41, 0xd05, "Cortex-A55"},       {0x41, 0xd06, "Cortex-A65"},
    {0x41, 0xd07, "Cortex-A57"},       {0x41, 0xd08, "Cortex-A72"},       {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},       {0x41, 0xd0b, "Cortex-A76"},       {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd0d, "Cortex-A77"},       {0x41, 0xd0e, "Cortex-A76AE"},     {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd41, "Cortex-A78"},       {0x41, 0xd42, "Cortex-A78AE"},     {0x41, 0xd44, "Cortex-X1"},
    {0x41, 0xd46, "Cortex-A510"},      {0x41, 0xd47, "Cortex-A710"},      {0x41, 0xd48, "Cortex-X2"},
    {0x41, 0xd49, "Neoverse-N2"},      {0x41, 0xd4b, "Cortex-A78C"},      {0x41, 0xd4d, "Cortex-A715"},
    {0x41, 0xd4e, "Cortex-X3"},        {0x41, 0xd4f, "Neoverse-V2"},      {0x41, 0xd80, "Cortex-A520"},
    {0x41, 0xd81, "Cortex-A720"},      {0x41, 0xd82, "Cortex-X4"},        {0x43, 0x0af, "ThunderX2"},
    {0x48, 0xd01, "TaiShan-v110"},     {0x4e, 0x003, "Denver 2"},         {0x4e, 0x004, "Carmel"},
    {0x51, 0xc00, "Falkor"},           {0x61, 0x022, "M1 Icestorm"},      {0x61, 0x023, "M1 Firestorm"},
    {0xc0, 0xac3, "Ampere-1"},
};

const char* arm_implementer_name(unsigned implementer) {
  switch (implementer) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x53: return "Samsung";
    case 0x56: return "Marvell";
    case 0x61: return "Apple";
    case 0x69: return "Intel";
    case 0xc0: return "Ampere";
  }
  return nullptr;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return std::string();
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// "0x41", "65": strtoul with base 0; false for anything else.
bool parse_number(const std::string& s, unsigned* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const unsigned long v = std::strtoul(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0' || v > 0xffffu) return false;
  *out = static_cast<unsigned>(v);
  return true;
}

bool has_word(const std::string& words, const char* word) {
  std::istringstream in(words);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

// One processor's block of /proc/cpuinfo, as far as the detection needs it.
struct CpuBlock {
  std::string model_name;
  unsigned implementer = 0, part = 0;
  bool has_implementer = false, has_part = false;
};

const char* family_name(CpuFamily f) {
  switch (f) {
    case CpuFamily::kX86: return "an x86";
    case CpuFamily::kArm: return "an ARM";
    case CpuFamily::kUnknown: break;
  }
  return "an unknown";
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();
  // /proc files report size 0: read to the end rather than by size.
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

const char* binary_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__i386__)
  return "x86";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7
  return "armv7";
#elif defined(__arm__)
  return "arm";
#else
  return "unknown";
#endif
}

CpuFamily binary_cpu_family() {
#if defined(__x86_64__) || defined(__i386__)
  return CpuFamily::kX86;
#elif defined(__aarch64__) || defined(__arm__)
  return CpuFamily::kArm;
#else
  return CpuFamily::kUnknown;
#endif
}

std::string arm_core_name(unsigned implementer, unsigned part) {
  const char* vendor = arm_implementer_name(implementer);
  for (const ArmPart& p : kArmParts)
    if (p.implementer == implementer && p.part == part) return std::string(vendor ? vendor : "") + " " + p.name;
  char buf[64];
  if (vendor)
    std::snprintf(buf, sizeof buf, "%s part 0x%03x", vendor, part);
  else
    std::snprintf(buf, sizeof buf, "implementer 0x%02x part 0x%03x", implementer, part);
  return buf;
}

HostInfo describe_host(const HostProbe& probe, CpuFamily binary) {
  HostInfo info;
  std::vector<CpuBlock> cpus;
  std::string hardware, processor_line, flags;
  bool arm_fields = false;
  std::istringstream in(probe.cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "processor") {  // a new processor's block (x86, arm64, newer arm kernels)
      cpus.emplace_back();
      continue;
    }
    if (key == "Hardware") hardware = value;        // the board or SoC (arm kernels)
    if (key == "Processor") processor_line = value;  // older 32-bit arm kernels' one CPU line
    if (key == "flags" && flags.empty()) flags = value;
    if (key == "CPU implementer" || key == "CPU architecture" || key == "CPU part") arm_fields = true;
    if (cpus.empty()) continue;
    CpuBlock& b = cpus.back();
    if (key == "model name") b.model_name = value;
    if (key == "CPU implementer") b.has_implementer = parse_number(value, &b.implementer);
    if (key == "CPU part") b.has_part = parse_number(value, &b.part);
  }
  info.cpus = static_cast<int>(cpus.size());
  // Every x86 kernel's flags start with the x87 FPU's "fpu"; ARM kernels list "Features" instead.
  if (has_word(flags, "fpu"))
    info.cpuinfo_family = CpuFamily::kX86;
  else if (arm_fields)
    info.cpuinfo_family = CpuFamily::kArm;
  info.virtual_machine = info.cpuinfo_family == CpuFamily::kX86 && has_word(flags, "hypervisor");

  // The name: x86 and some arm kernels give "model name"; ARM cores are named from their MIDR
  // fields, counted per kind (big.LITTLE: "ARM Cortex-A76 x4 + ARM Cortex-A55 x4").
  if (info.cpuinfo_family == CpuFamily::kArm) {
    std::vector<std::pair<std::string, int>> kinds;
    for (const CpuBlock& b : cpus) {
      if (!b.has_implementer || !b.has_part) continue;
      const std::string name = arm_core_name(b.implementer, b.part);
      bool found = false;
      for (auto& k : kinds)
        if (k.first == name) ++k.second, found = true;
      if (!found) kinds.emplace_back(name, 1);
    }
    for (size_t i = 0; i < kinds.size(); ++i)
      info.cpu_model += (i ? " + " : "") + kinds[i].first +
                        (kinds.size() > 1 ? " x" + std::to_string(kinds[i].second) : std::string());
  }
  if (info.cpu_model.empty())
    for (const CpuBlock& b : cpus)
      if (!b.model_name.empty()) {
        info.cpu_model = b.model_name;
        break;
      }
  if (info.cpu_model.empty()) info.cpu_model = processor_line;
  if (!hardware.empty()) info.cpu_model += info.cpu_model.empty() ? hardware : " (" + hardware + ")";

  const bool qemu_named = probe.status_name.rfind("qemu-", 0) == 0;
  // The kernel keeps 15 characters of a program's name.
  const bool runs_another_program =
      !probe.exe_path.empty() && base_name(probe.exe_path).substr(0, 15) != probe.status_name;
  if (binary != CpuFamily::kUnknown && info.cpuinfo_family != CpuFamily::kUnknown &&
      binary != info.cpuinfo_family) {
    info.emulated = true;
    info.emulator = qemu_named ? "qemu-user" : "a user-mode emulator";
    info.emulation_reason = std::string("this ") + binary_arch() + " binary sees " +
                            family_name(info.cpuinfo_family) + " CPU in /proc/cpuinfo";
  } else if (qemu_named && runs_another_program) {
    info.emulated = true;
    info.emulator = "qemu-user";
    info.emulation_reason = "the process is " + probe.status_name + " running " + base_name(probe.exe_path);
  }
  return info;
}

HostInfo detect_host() {
  HostProbe probe;
  probe.cpuinfo = read_file("/proc/cpuinfo");
  std::istringstream status(read_file("/proc/self/status"));
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Name:", 0) == 0) {
      probe.status_name = trim(line.substr(5));
      break;
    }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) probe.exe_path.assign(exe, static_cast<size_t>(n));
  return describe_host(probe, binary_cpu_family());
}

}  // namespace encrt::host
