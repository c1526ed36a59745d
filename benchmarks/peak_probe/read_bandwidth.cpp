#include "read_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/isa.h"
#include "peak_probe_arm.h"
#include "peak_probe_x86.h"

namespace encrt::bench {

namespace {

// Elsewhere: 8 independent 64-bit sums per line, plain C++.
[[maybe_unused]] void read_lines_portable(const void* p, long lines) {
  const auto* w = static_cast<const uint64_t*>(p);
  uint64_t s[8] = {};
  for (long i = 0; i < lines; ++i, w += 8)
    for (int k = 0; k < 8; ++k) s[k] += w[k];
  volatile uint64_t sink = s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4] ^ s[5] ^ s[6] ^ s[7];
  (void)sink;
}

// The widest loads this CPU has (the probes' files hold them).
using ReadFn = void (*)(const void*, long);
ReadFn read_lines_fn() {
#if defined(__x86_64__)
  if (kernels::isa_supported(kernels::kIsaAvx2 | kernels::kIsaAvx512)) return read_lines_zmm;
  if (kernels::isa_supported(kernels::kIsaAvx2)) return read_lines_ymm;
#elif defined(__aarch64__)
  if (kernels::isa_supported(kernels::kIsaNeon)) return read_lines_neon;
#endif
  return read_lines_portable;
}

}  // namespace

double measure_read_bandwidth(size_t bytes) {
  bytes = std::max<size_t>(bytes, 64 * 1024) / 256 * 256;  // whole 4-line steps of the loops
  void* buffer = std::aligned_alloc(64, bytes);
  if (!buffer) return 0;
  std::memset(buffer, 1, bytes);  // every page backed before the clock starts
  const ReadFn read = read_lines_fn();
  const long lines = static_cast<long>(bytes / 64);
  read(buffer, lines);  // warm-up
  const size_t passes = std::max<size_t>(4, std::min<size_t>(4096, (size_t{256} << 20) / bytes));
  double best = 0;
  for (size_t pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    read(buffer, lines);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, static_cast<double>(bytes) / s);
  }
  std::free(buffer);
  return best;
}

}  // namespace encrt::bench
