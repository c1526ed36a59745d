// Helpers for the converter tests: a minimal safetensors writer, deterministic tensor values,
// scratch directories under ENCRT_TEST_TMP_DIR and reading back a written .encrt file.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/half.h"
#include "encrt_generated.h"

namespace encrt::test {

// One tensor of a safetensors file, already encoded as little-endian bytes.
struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

inline StTensor st_f32(const std::string& name, std::vector<int64_t> shape,
                       const std::vector<float>& values) {
  StTensor t{name, "F32", std::move(shape), std::vector<uint8_t>(values.size() * 4)};
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

inline StTensor st_f16(const std::string& name, std::vector<int64_t> shape,
                       const std::vector<float>& values) {
  StTensor t{name, "F16", std::move(shape), std::vector<uint8_t>(values.size() * 2)};
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = float_to_half(values[i]);
    std::memcpy(t.bytes.data() + 2 * i, &h, 2);
  }
  return t;
}

// BF16 by truncation (the values used in tests are exactly representable or near enough).
inline StTensor st_bf16(const std::string& name, std::vector<int64_t> shape,
                        const std::vector<float>& values) {
  StTensor t{name, "BF16", std::move(shape), std::vector<uint8_t>(values.size() * 2)};
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    const uint16_t h = static_cast<uint16_t>(bits >> 16);
    std::memcpy(t.bytes.data() + 2 * i, &h, 2);
  }
  return t;
}

inline StTensor st_i64(const std::string& name, std::vector<int64_t> shape,
                       const std::vector<int64_t>& values) {
  StTensor t{name, "I64", std::move(shape), std::vector<uint8_t>(values.size() * 8)};
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// Serializes tensors (data in the given order) with an optional __metadata__ map. The header is
// padded with spaces to a multiple of 8 bytes, as the reference implementation does.
inline std::string safetensors_bytes(const std::vector<StTensor>& tensors,
                                     const std::map<std::string, std::string>& metadata = {}) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string data;
  for (const StTensor& t : tensors) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');
  std::string out(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + text + data;
}

// A file image from a raw header string and data section (for malformed-header tests).
inline std::string safetensors_raw(const std::string& header, const std::string& data,
                                   uint64_t declared_length) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((declared_length >> (8 * i)) & 0xff);
  return out + header + data;
}

inline void write_text(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

// The scratch root: the environment's ENCRT_TEST_TMP_DIR when set (two runs of the suite side by
// side, as scripts/test_sanitizers.sh runs them, each get their own), else the folder compiled in.
inline std::string test_tmp_root() {
  const char* env = std::getenv("ENCRT_TEST_TMP_DIR");
  return env && *env ? env : ENCRT_TEST_TMP_DIR;
}

// A fresh, empty directory <scratch root>/converter/<name>.
inline std::string scratch_dir(const std::string& name) {
  const std::string tmp = test_tmp_root();
  const std::string root = tmp + "/converter";
  ::mkdir(tmp.c_str(), 0777);
  ::mkdir(root.c_str(), 0777);
  const std::string dir = root + "/" + name;
  const std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) return dir;
  ::mkdir(dir.c_str(), 0777);
  return dir;
}

// Deterministic pseudo-random values in [-scale, scale).
inline std::vector<float> random_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A written .encrt file held in a 64-byte-aligned buffer, as the runtime maps it.
class LoadedModel {
 public:
  explicit LoadedModel(const std::string& path) {
    const std::string bytes = read_text(path);
    size_ = bytes.size();
    buffer_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (size_ + 63) / 64 * 64 + 64)));
    if (size_) std::memcpy(buffer_.get(), bytes.data(), size_);
  }
  size_t size() const { return size_; }
  const uint8_t* data() const { return buffer_.get(); }
  bool verifies() const {
    if (size_ < 8) return false;
    flatbuffers::Verifier v(buffer_.get(), size_, 64, 1000000, true);
    return fb::ModelBufferHasIdentifier(buffer_.get()) && fb::VerifyModelBuffer(v);
  }
  const fb::Model* model() const { return fb::GetModel(buffer_.get()); }
  const fb::Tensor* tensor(const std::string& name) const {
    return model()->tensors() ? model()->tensors()->LookupByKey(name.c_str()) : nullptr;
  }
  std::string metadata(const std::string& key) const {
    const auto* kv = model()->metadata() ? model()->metadata()->LookupByKey(key.c_str()) : nullptr;
    return kv && kv->value() ? kv->value()->str() : std::string("<absent>");
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> buffer_;
  size_t size_ = 0;
};

inline std::vector<int64_t> shape_of(const fb::Tensor& t) {
  std::vector<int64_t> s;
  if (t.shape())
    for (int64_t d : *t.shape()) s.push_back(d);
  return s;
}

template <typename T>
std::vector<T> data_as(const fb::Tensor& t) {
  std::vector<T> v(t.data() ? t.data()->size() / sizeof(T) : 0);
  if (!v.empty()) std::memcpy(v.data(), t.data()->data(), v.size() * sizeof(T));
  return v;
}

}  // namespace encrt::test
