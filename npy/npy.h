// NumPy .npy files (format versions 1.0-3.0, C order): the CLI's and the tests' array exchange.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "encrt/status.hpp"

namespace encrt::npy {

struct Int32Array {
  std::vector<int64_t> shape;
  std::vector<int32_t> data;
};
struct Float32Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Reads an integer array (int32 or int64, little-endian, or one-byte bool / uint8 / int8, any
// dims); int64 values must fit int32.
Status read_int32(const std::string& path, Int32Array* out);
// The array's NumPy dtype string ("<f4", "|b1", ...), from the header alone.
Status read_descr(const std::string& path, std::string* descr);
// Reads a float32 (or float64, converted) array.
Status read_float32(const std::string& path, Float32Array* out);
// The same three over a file image in memory (`size` bytes at `data`); `origin` names it in messages.
Status parse_int32(const void* data, size_t size, const std::string& origin, Int32Array* out);
Status parse_descr(const void* data, size_t size, const std::string& origin, std::string* descr);
Status parse_float32(const void* data, size_t size, const std::string& origin, Float32Array* out);
Status write_float32(const std::string& path, const std::vector<int64_t>& shape, const float* data);
Status write_int32(const std::string& path, const std::vector<int64_t>& shape, const int32_t* data);

}  // namespace encrt::npy
