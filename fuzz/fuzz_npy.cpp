// Fuzz target: the .npy parser (npy/): the input as a file image through parse_descr,
// parse_int32 and parse_float32. Each must accept it or refuse it with a Status; an array it
// accepts has as many values as its shape says, and the dtype it was read as is the header's.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "npy/npy.h"

namespace {

using encrt::fuzz::require;

// The element count of a shape: 0 when any dimension is 0 (however large the others: NumPy
// allows (2^32, 2^32, 0)), else the product, or -1 when it does not fit.
int64_t element_count(const std::vector<int64_t>& shape) {
  for (int64_t d : shape) {
    require(d >= 0, "a parsed shape has no negative dimension");
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string descr;
  const bool has_descr = encrt::npy::parse_descr(data, size, "fuzz.npy", &descr).is_ok();

  encrt::npy::Int32Array ints;
  if (encrt::npy::parse_int32(data, size, "fuzz.npy", &ints)) {
    require(has_descr, "an array that parses has a header that parses");
    require(descr == "<i4" || descr == "<i8" || descr == "|b1" || descr == "|u1" || descr == "|i1",
            "an int32 array was stored as an integer or bool dtype", descr.c_str());
    require(element_count(ints.shape) == static_cast<int64_t>(ints.data.size()), "an int32 array fills its shape");
  }
  encrt::npy::Float32Array floats;
  if (encrt::npy::parse_float32(data, size, "fuzz.npy", &floats)) {
    require(has_descr, "an array that parses has a header that parses");
    require(descr == "<f4" || descr == "<f8", "a float32 array was stored as a float dtype", descr.c_str());
    require(element_count(floats.shape) == static_cast<int64_t>(floats.data.size()), "a float32 array fills its shape");
  }
  return 0;
}
