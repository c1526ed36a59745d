#include "encrt/encrt.hpp"

namespace encrt {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
  }
  return "unknown";
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: return 2;
    case DType::kI8: case DType::kU8: return 1;
  }
  return 0;
}

}  // namespace encrt
