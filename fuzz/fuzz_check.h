// What the fuzz targets share: a property check that ends the process (libFuzzer then saves the
// input as a crash; the replay test fails), and a 64-byte aligned copy of an input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace encrt::fuzz {

// A property every input must keep (not a check of the input itself: bad input is a Status).
inline void require(bool holds, const char* property, const char* detail = "") {
  if (holds) return;
  std::fprintf(stderr, "fuzz property violated: %s %s\n", property, detail);
  std::abort();
}

// The input copied into memory of exactly its size with 64-byte alignment (Model::from_buffer's
// requirement): AddressSanitizer then sees a read one byte past the end, which libFuzzer's own
// buffer (also exact-size, but only 8-byte aligned) could not be given to the loader.
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* data, size_t size) : size_(size) {
    if (posix_memalign(&data_, 64, size > 0 ? size : 1) != 0) data_ = nullptr;
    if (data_ && size > 0) std::memcpy(data_, data, size);
  }
  ~AlignedCopy() { std::free(data_); }
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace encrt::fuzz
