// Reader for the safetensors format (https://github.com/huggingface/safetensors):
//   [8 bytes: little-endian u64 header length N][N bytes: JSON header][data section]
// The header maps tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (byte offsets
// into the data section) plus an optional "__metadata__" string map. Everything in the header is
// validated against the file before any tensor is read, so a corrupt or truncated file yields a
// Status error and never an out-of-bounds read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "encrt/status.hpp"

namespace encrt {
class MappedFile;
}

namespace encrt::converter {

enum class SafetensorsDType {
  kBool, kU8, kI8, kF8E4M3, kF8E5M2, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64,
};

struct SafetensorsTensor {
  std::string name;
  SafetensorsDType dtype = SafetensorsDType::kF32;
  std::string dtype_name;      // as spelled in the header, e.g. "BF16"
  std::vector<int64_t> shape;  // empty = scalar
  size_t begin = 0;            // byte range in the data section
  size_t end = 0;
  int64_t numel() const;
};

class SafetensorsFile {
 public:
  SafetensorsFile();
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  // Maps `path` and validates its header.
  Status open(const std::string& path);
  // Validates an in-memory file image; `data` must outlive this object (it is not copied).
  // `origin` names the buffer in error messages.
  Status parse(const void* data, size_t size, const std::string& origin);

  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }  // sorted by name
  const SafetensorsTensor* find(const std::string& name) const;                 // null if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& origin() const { return origin_; }

  // Raw little-endian bytes of a tensor (end - begin of them); no alignment guarantee.
  const uint8_t* bytes(const SafetensorsTensor& tensor) const;
  // Converts an F32, F16, BF16 or F64 tensor to fp32; other dtypes are an Unsupported error.
  Status read_float(const SafetensorsTensor& tensor, std::vector<float>* out) const;

 private:
  Status parse_header();

  std::unique_ptr<MappedFile> file_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t data_start_ = 0;  // offset of the data section in the file
  std::string origin_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Byte size of one element (kF32 -> 4).
size_t safetensors_dtype_size(SafetensorsDType dtype);

}  // namespace encrt::converter
