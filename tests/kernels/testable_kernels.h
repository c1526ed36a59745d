// The entries of a kernel list (kernel_lists.h) that this CPU can run, for the kernel tests; the
// others are reported (WARN) as not tested, with the features the CPU lacks.
#pragma once

#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

#include "kernels/isa.h"
#include "kernels/kernel_lists.h"

namespace encrt::kernels::test {

// Whether this CPU can run kernel `k` (an entry of a kernel list); WARNs when it cannot.
template <typename Entry>
bool can_test(const Entry& k) {
  if (isa_supported(k.features)) return true;
  WARN("kernel " << k.name << " not tested: this CPU lacks " << isa_features_name(k.features & ~cpu_isa_features()));
  return false;
}

// Every entry of `list` this CPU can run, the reference included.
template <typename Entry, size_t N>
std::vector<const Entry*> testable_kernels(const Entry (&list)[N]) {
  std::vector<const Entry*> kernels;
  for (const Entry& k : list)
    if (can_test(k)) kernels.push_back(&k);
  return kernels;
}

// The same without the reference (the first entry, features 0): the SIMD kernels, which the
// tests hold to the reference.
template <typename Entry, size_t N>
std::vector<const Entry*> testable_simd_kernels(const Entry (&list)[N]) {
  std::vector<const Entry*> kernels;
  for (size_t i = 1; i < N; ++i)
    if (can_test(list[i])) kernels.push_back(&list[i]);
  return kernels;
}

}  // namespace encrt::kernels::test
