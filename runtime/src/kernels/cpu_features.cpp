#include "kernels/cpu_features.h"

#if defined(ENCRT_ARCH_X86)
#include <cpuid.h>
#include <cstdint>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(ENCRT_ARCH_ARM64)
#include <sys/auxv.h>
#elif defined(__arm__) && defined(__linux__)
#include <sys/auxv.h>
#endif

// The AArch64 kernels are built only for a 64-bit target: a 32-bit ARM build defining
// ENCRT_ARCH_ARM64 would read the AArch64 HWCAP bits from a 32-bit auxiliary vector, whose bits
// mean other things (bit 1 is HWCAP_HALF there, not ASIMD).
#if defined(ENCRT_ARCH_ARM64) && !defined(__aarch64__)
#error "ENCRT_ARCH_ARM64 is for AArch64 targets only"
#endif

namespace encrt::kernels {

namespace {

#if defined(ENCRT_ARCH_X86)
// Linux (5.16 and later) enables AMX's tile data per process, on request: XCR0 has XTILEDATA, but
// the kernel arms XFD so that a tile instruction of a process that has not asked for it faults
// (SIGILL). The permission is process-wide (every thread, present and future) and is asked for
// once, here, before any tile instruction can run (the kernel's Documentation/arch/x86/xstate.rst).
// Elsewhere we do not know how the OS treats the tile state, and AMX counts as absent.
bool request_tile_data() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM (asm/prctl.h)
  constexpr long kXfeatureXtiledata = 18;     // XFEATURE_XTILEDATA, XCR0 bit 18
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(ENCRT_ARCH_X86)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return f;
  const bool amd = ebx == 0x68747541 && edx == 0x69746e65 && ecx == 0x444d4163;  // "AuthenticAMD"
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  // Display family and model (the extended fields count from family 0Fh).
  const unsigned base_family = (eax >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
  const unsigned model = base_family == 0xf ? (((eax >> 16) & 0xf) << 4) | ((eax >> 4) & 0xf) : (eax >> 4) & 0xf;
  f.amd_zen3 = amd && family == 0x19 && (model <= 0x0f || (model >= 0x20 && model <= 0x5f));
  const bool osxsave = (ecx >> 27) & 1;
  f.fma = (ecx >> 12) & 1;
  f.f16c = (ecx >> 29) & 1;
  if (osxsave) {
    uint32_t xcr0_lo, xcr0_hi;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    f.os_saves_ymm = (xcr0_lo & 0x6) == 0x6;            // SSE + AVX state
    f.os_saves_zmm = (xcr0_lo & 0xe6) == 0xe6;          // + opmask, ZMM_Hi256, Hi16_ZMM
    f.os_saves_tiles = (xcr0_lo & 0x60000) == 0x60000;  // XTILECFG (bit 17), XTILEDATA (bit 18)
  }
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    f.avx2 = (ebx >> 5) & 1;
    f.avx512f = (ebx >> 16) & 1;
    f.avx512dq = (ebx >> 17) & 1;
    f.avx512bw = (ebx >> 30) & 1;
    f.avx512vl = (ebx >> 31) & 1;
    f.avx512vnni = (ecx >> 11) & 1;
    f.avx512fp16 = (edx >> 23) & 1;
    f.amx_tile = (edx >> 24) & 1;
    f.amx_int8 = (edx >> 25) & 1;
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    f.avx_vnni = (eax >> 4) & 1;
  }
  // Asked only of a CPU and OS that have the tile state: nothing changes for the others.
  if (f.amx_tile && f.amx_int8 && f.os_saves_tiles) f.tile_data_permitted = request_tile_data();
#elif defined(ENCRT_ARCH_ARM64)
  // Linux reports the CPU's features in the auxiliary vector (HWCAP bits of asm/hwcap.h).
  constexpr unsigned long kHwcapAsimd = 1ul << 1, kHwcapFphp = 1ul << 9, kHwcapAsimdHp = 1ul << 10,
                          kHwcapAsimdDp = 1ul << 20;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.neon = (hwcap & kHwcapAsimd) != 0;
  f.neon_dotprod = f.neon && (hwcap & kHwcapAsimdDp) != 0;
  f.neon_fp16 = f.neon && (hwcap & kHwcapFphp) != 0 && (hwcap & kHwcapAsimdHp) != 0;
  constexpr unsigned long kHwcap2I8mm = 1ul << 13;
  f.neon_i8mm = f.neon && (getauxval(AT_HWCAP2) & kHwcap2I8mm) != 0;
#elif defined(__arm__) && defined(__linux__)
  // 32-bit ARM: the 32-bit kernel ABI's HWCAP bits (arch/arm/include/uapi/asm/hwcap.h), which an
  // AArch64 kernel also reports to 32-bit processes. None of them is an AArch64 feature: the
  // kernel lists have no 32-bit entries, so these are reported (encrt bench), never dispatched on.
  constexpr unsigned long kHwcapNeon = 1ul << 12, kHwcapVfpv4 = 1ul << 16, kHwcapIdiva = 1ul << 17;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.arm32_neon = (hwcap & kHwcapNeon) != 0;
  f.arm32_vfpv4 = (hwcap & kHwcapVfpv4) != 0;
  f.arm32_idiv = (hwcap & kHwcapIdiva) != 0;
#endif
  return f;
}
}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace encrt::kernels
