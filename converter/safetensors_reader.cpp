#include "converter/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/half.h"
#include "model/mapped_file.h"

namespace encrt::converter {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this reader copies it as-is");

namespace {

using nlohmann::json;

struct DTypeName {
  const char* name;
  SafetensorsDType dtype;
  size_t size;
};

constexpr DTypeName kDTypes[] = {
    {"BOOL", SafetensorsDType::kBool, 1},       {"U8", SafetensorsDType::kU8, 1},
    {"I8", SafetensorsDType::kI8, 1},           {"F8_E4M3", SafetensorsDType::kF8E4M3, 1},
    {"F8_E5M2", SafetensorsDType::kF8E5M2, 1},  {"I16", SafetensorsDType::kI16, 2},
    {"U16", SafetensorsDType::kU16, 2},         {"F16", SafetensorsDType::kF16, 2},
    {"BF16", SafetensorsDType::kBF16, 2},       {"I32", SafetensorsDType::kI32, 4},
    {"U32", SafetensorsDType::kU32, 4},         {"F32", SafetensorsDType::kF32, 4},
    {"F64", SafetensorsDType::kF64, 8},         {"I64", SafetensorsDType::kI64, 8},
    {"U64", SafetensorsDType::kU64, 8},
};

const DTypeName* find_dtype(const std::string& name) {
  for (const DTypeName& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A JSON value that is a non-negative integer fitting `limit`.
bool as_unsigned(const json& v, uint64_t limit, uint64_t* out) {
  if (!v.is_number_integer()) return false;  // true for both signed and unsigned integers
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
  } else {
    const int64_t s = v.get<int64_t>();
    if (s < 0) return false;
    *out = static_cast<uint64_t>(s);
  }
  return *out <= limit;
}

}  // namespace

int64_t SafetensorsTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t safetensors_dtype_size(SafetensorsDType dtype) {
  for (const DTypeName& d : kDTypes)
    if (d.dtype == dtype) return d.size;
  return 0;
}

SafetensorsFile::SafetensorsFile() = default;
SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

Status SafetensorsFile::open(const std::string& path) {
  auto file = std::make_unique<MappedFile>();
  Status st = file->open(path);
  if (!st) return st;
  const uint8_t* data = file->data();
  const size_t size = file->size();
  file_ = std::move(file);
  return parse(data, size, path);
}

Status SafetensorsFile::parse(const void* data, size_t size, const std::string& origin) {
  data_ = static_cast<const uint8_t*>(data);
  size_ = size;
  origin_ = origin;
  tensors_.clear();
  metadata_.clear();
  Status st;
  try {
    st = parse_header();
  } catch (const std::exception& e) {  // defensive: nlohmann accessors throw on misuse
    st = invalid_model(origin_ + ": malformed safetensors header: " + e.what());
  }
  if (!st) {
    tensors_.clear();
    metadata_.clear();
  }
  return st;
}

Status SafetensorsFile::parse_header() {
  const std::string where = origin_ + ": ";
  if (data_ == nullptr || size_ < 8)
    return invalid_model(where + "file of " + std::to_string(size_) +
                         " bytes is too short for a safetensors header (needs at least 8)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data_[i];
  if (header_len > size_ - 8)
    return invalid_model(where + "safetensors header length " + std::to_string(header_len) +
                         " exceeds the file (" + std::to_string(size_ - 8) +
                         " bytes after the length field)");
  if (header_len == 0) return invalid_model(where + "safetensors header is empty");
  const char* text = reinterpret_cast<const char*>(data_ + 8);
  const json header = json::parse(text, text + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return invalid_model(where + "safetensors header is not valid JSON");
  if (!header.is_object()) return invalid_model(where + "safetensors header is not a JSON object");

  data_start_ = 8 + static_cast<size_t>(header_len);
  const uint64_t data_size = size_ - data_start_;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object())
        return invalid_model(where + "safetensors '__metadata__' is not a JSON object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return invalid_model(where + "safetensors '__metadata__' value of '" + m.key() +
                               "' is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string tw = where + "tensor '" + name + "': ";
    if (!entry.is_object()) return invalid_model(tw + "header entry is not a JSON object");
    const auto dtype_it = entry.find("dtype");
    const auto shape_it = entry.find("shape");
    const auto offsets_it = entry.find("data_offsets");
    if (dtype_it == entry.end() || !dtype_it->is_string())
      return invalid_model(tw + "missing or non-string 'dtype'");
    if (shape_it == entry.end() || !shape_it->is_array())
      return invalid_model(tw + "missing or non-array 'shape'");
    if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2)
      return invalid_model(tw + "'data_offsets' must be an array [begin, end]");

    SafetensorsTensor t;
    t.name = name;
    t.dtype_name = dtype_it->get<std::string>();
    const DTypeName* dt = find_dtype(t.dtype_name);
    if (dt == nullptr) return invalid_model(tw + "unknown dtype '" + t.dtype_name + "'");
    t.dtype = dt->dtype;

    // Element count and byte size, saturating at kTooBig on overflow.
    constexpr uint64_t kTooBig = std::numeric_limits<uint64_t>::max();
    uint64_t numel = 1;
    for (const json& d : *shape_it) {
      uint64_t dim = 0;
      if (!as_unsigned(d, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), &dim))
        return invalid_model(tw + "shape has an entry that is not a non-negative integer");
      t.shape.push_back(static_cast<int64_t>(dim));
      if (__builtin_mul_overflow(numel, dim, &numel)) numel = kTooBig;
    }
    uint64_t begin = 0, end = 0;
    if (!as_unsigned((*offsets_it)[0], data_size, &begin) ||
        !as_unsigned((*offsets_it)[1], data_size, &end))
      return invalid_model(tw + "data_offsets " + (*offsets_it).dump() +
                           " are not integers within the data section of " +
                           std::to_string(data_size) + " bytes");
    if (begin > end)
      return invalid_model(tw + "data_offsets " + (*offsets_it).dump() + " end before they begin");
    uint64_t expected_bytes = 0;
    if (numel == kTooBig || __builtin_mul_overflow(numel, dt->size, &expected_bytes))
      expected_bytes = kTooBig;
    if (end - begin != expected_bytes)
      return invalid_model(tw + "data_offsets " + (*offsets_it).dump() + " span " +
                           std::to_string(end - begin) + " bytes but shape " +
                           shape_string(t.shape) + " of " + t.dtype_name + " needs " +
                           (expected_bytes == kTooBig ? std::string("more than 2^64")
                                                      : std::to_string(expected_bytes)));
    t.begin = static_cast<size_t>(begin);
    t.end = static_cast<size_t>(end);
    tensors_.push_back(std::move(t));
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.name < b.name; });
  return Status::ok();
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(
      tensors_.begin(), tensors_.end(), name,
      [](const SafetensorsTensor& t, const std::string& n) { return t.name < n; });
  if (it == tensors_.end() || it->name != name) return nullptr;
  return &*it;
}

const uint8_t* SafetensorsFile::bytes(const SafetensorsTensor& tensor) const {
  return data_ + data_start_ + tensor.begin;
}

Status SafetensorsFile::read_float(const SafetensorsTensor& tensor, std::vector<float>* out) const {
  const size_t n = static_cast<size_t>(tensor.numel());
  const uint8_t* src = bytes(tensor);
  out->resize(n);
  float* dst = out->data();
  switch (tensor.dtype) {
    case SafetensorsDType::kF32:
      if (n) std::memcpy(dst, src, n * sizeof(float));
      return Status::ok();
    case SafetensorsDType::kF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = half_to_float(h);
      }
      return Status::ok();
    case SafetensorsDType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        const uint32_t bits = static_cast<uint32_t>(h) << 16;
        std::memcpy(dst + i, &bits, 4);
      }
      return Status::ok();
    case SafetensorsDType::kF64:
      for (size_t i = 0; i < n; ++i) {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        dst[i] = static_cast<float>(d);
      }
      return Status::ok();
    default:
      out->clear();
      return unsupported(origin_ + ": tensor '" + tensor.name + "' has dtype " + tensor.dtype_name +
                         "; only F32, F16, BF16 and F64 weights can be converted");
  }
}

}  // namespace encrt::converter
