#include "npy/npy.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

namespace encrt::npy {

namespace {

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};

// Finds `'key':` in the header dict and returns the text after the colon.
bool find_value(const std::string& dict, const std::string& key, std::string* rest) {
  const size_t pos = dict.find("'" + key + "'");
  if (pos == std::string::npos) return false;
  const size_t colon = dict.find(':', pos);
  if (colon == std::string::npos) return false;
  *rest = dict.substr(colon + 1);
  return true;
}

Status parse_header(const std::string& path, std::string_view bytes, Header* h) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return invalid_argument(path + ": not a .npy file (bad magic)");
  const unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, prefix;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(path + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    prefix = 12;
  } else {
    return invalid_argument(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (prefix + header_len > bytes.size()) return invalid_argument(path + ": truncated .npy header");
  const std::string dict(bytes.substr(prefix, header_len));
  std::string v;
  if (!find_value(dict, "descr", &v)) return invalid_argument(path + ": .npy header has no descr");
  const size_t q1 = v.find('\''), q2 = v.find('\'', q1 + 1);
  if (q1 == std::string::npos || q2 == std::string::npos) return invalid_argument(path + ": bad descr");
  h->descr = v.substr(q1 + 1, q2 - q1 - 1);
  if (!find_value(dict, "fortran_order", &v)) return invalid_argument(path + ": no fortran_order");
  h->fortran_order = v.find("True") < v.find(',');
  if (!find_value(dict, "shape", &v)) return invalid_argument(path + ": no shape");
  const size_t open = v.find('('), close = v.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return invalid_argument(path + ": bad shape");
  std::stringstream dims(v.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(dims, item, ',')) {
    const size_t first = item.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str() + first, &end, 10);
    if (d < 0 || end == item.c_str() + first) return invalid_argument(path + ": bad shape entry '" + item + "'");
    h->shape.push_back(d);
  }
  h->data_offset = prefix + header_len;
  return Status::ok();
}

Status read_file(const std::string& path, std::string* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  *bytes = ss.str();
  return Status::ok();
}

Status element_count(const std::string& path, const Header& h, size_t item, size_t available, size_t* count) {
  size_t n = 1;
  for (int64_t d : h.shape) {
    // Compared in 64 bits first: on 32-bit ARM a dimension of 2^32 + 1 would become 1 as a size_t.
    if (static_cast<uint64_t>(d) > std::numeric_limits<size_t>::max() ||
        (d != 0 && n > std::numeric_limits<size_t>::max() / static_cast<size_t>(d)))
      return invalid_argument(path + ": shape too large");
    n *= static_cast<size_t>(d);
  }
  if (h.fortran_order) return unsupported(path + ": Fortran-order arrays are not supported");
  if (n > available / item) return invalid_argument(path + ": file holds fewer elements than its shape says");
  *count = n;
  return Status::ok();
}

Status write_array(const std::string& path, const char* descr, const std::vector<int64_t>& shape,
                   const void* data, size_t bytes) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";  // NumPy writes a 1-tuple as "(n,)"
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error("cannot write '" + path + "'");
  const uint16_t len = static_cast<uint16_t>(dict.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) return io_error("failed writing '" + path + "'");
  return Status::ok();
}

}  // namespace

Status parse_descr(const void* data, size_t size, const std::string& path, std::string* descr) {
  if (!data && size > 0) return invalid_argument(path + ": data is null");
  const std::string_view bytes(static_cast<const char*>(data), data ? size : 0);
  Header h;
  if (Status s = parse_header(path, bytes, &h); !s) return s;
  *descr = h.descr;
  return Status::ok();
}

Status parse_int32(const void* data, size_t size, const std::string& path, Int32Array* out) {
  if (!data && size > 0) return invalid_argument(path + ": data is null");
  const std::string_view bytes(static_cast<const char*>(data), data ? size : 0);
  Header h;
  if (Status s = parse_header(path, bytes, &h); !s) return s;
  const bool is64 = h.descr == "<i8", is32 = h.descr == "<i4";
  // NumPy's bool and one-byte integers (e.g. a bool attention mask) widen exactly.
  const bool is8 = h.descr == "|b1" || h.descr == "|u1" || h.descr == "|i1";
  if (!is64 && !is32 && !is8)
    return invalid_argument(path + ": expected int32, int64, int8, uint8 or bool data, found dtype '" + h.descr + "'");
  size_t n;
  if (Status s = element_count(path, h, is64 ? 8 : is32 ? 4 : 1, bytes.size() - h.data_offset, &n); !s) return s;
  out->shape = h.shape;
  out->data.resize(n);
  const char* p = bytes.data() + h.data_offset;
  for (size_t i = 0; i < n; ++i) {
    if (is8) {
      out->data[i] = h.descr == "|i1" ? static_cast<int32_t>(static_cast<int8_t>(p[i]))
                                      : static_cast<int32_t>(static_cast<uint8_t>(p[i]));
    } else if (is64) {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        return invalid_argument(path + ": value " + std::to_string(v) + " at index " + std::to_string(i) +
                                " does not fit int32");
      out->data[i] = static_cast<int32_t>(v);
    } else {
      std::memcpy(&out->data[i], p + 4 * i, 4);
    }
  }
  return Status::ok();
}

Status parse_float32(const void* data, size_t size, const std::string& path, Float32Array* out) {
  if (!data && size > 0) return invalid_argument(path + ": data is null");
  const std::string_view bytes(static_cast<const char*>(data), data ? size : 0);
  Header h;
  if (Status s = parse_header(path, bytes, &h); !s) return s;
  const bool is64 = h.descr == "<f8", is32 = h.descr == "<f4";
  if (!is64 && !is32) return invalid_argument(path + ": expected float32 data, found dtype '" + h.descr + "'");
  size_t n;
  if (Status s = element_count(path, h, is64 ? 8 : 4, bytes.size() - h.data_offset, &n); !s) return s;
  out->shape = h.shape;
  out->data.resize(n);
  const char* p = bytes.data() + h.data_offset;
  for (size_t i = 0; i < n; ++i) {
    if (is64) {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      out->data[i] = static_cast<float>(v);
    } else {
      std::memcpy(&out->data[i], p + 4 * i, 4);
    }
  }
  return Status::ok();
}

Status read_descr(const std::string& path, std::string* descr) {
  std::string bytes;
  if (Status s = read_file(path, &bytes); !s) return s;
  return parse_descr(bytes.data(), bytes.size(), path, descr);
}

Status read_int32(const std::string& path, Int32Array* out) {
  std::string bytes;
  if (Status s = read_file(path, &bytes); !s) return s;
  return parse_int32(bytes.data(), bytes.size(), path, out);
}

Status read_float32(const std::string& path, Float32Array* out) {
  std::string bytes;
  if (Status s = read_file(path, &bytes); !s) return s;
  return parse_float32(bytes.data(), bytes.size(), path, out);
}

Status write_float32(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return write_array(path, "<f4", shape, data, n * sizeof(float));
}

Status write_int32(const std::string& path, const std::vector<int64_t>& shape, const int32_t* data) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return write_array(path, "<i4", shape, data, n * sizeof(int32_t));
}

}  // namespace encrt::npy
