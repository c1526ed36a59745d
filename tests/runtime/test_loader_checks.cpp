// What the loader checks beyond the FlatBuffers verifier, on files patched the way a corrupt
// download or a crafted file would be: int8 column sums that do not summarize their weights, and a
// shape vector that the verifier accepts 4 bytes off its 8-byte alignment (FlatBuffers 2.0.8
// checks only a vector's length field; reading the int64s would be a misaligned load).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "encrt_generated.h"
#include "support/fixtures.h"

namespace {

using namespace encrt;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Status load_bytes(const std::string& bytes, const std::string& name) {
  const std::string path = test::tmp_path(name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::unique_ptr<Model> model;
  return Model::load(path, &model);
}

const fb::Tensor* tensor(const std::string& bytes, const char* name) {
  const fb::Tensor* t = fb::GetModel(bytes.data())->tensors()->LookupByKey(name);
  REQUIRE(t != nullptr);
  return t;
}

size_t offset_in(const std::string& bytes, const void* p) {
  return static_cast<size_t>(static_cast<const char*>(p) - bytes.data());
}

}  // namespace

TEST_CASE("int8 column sums are checked against the weights they summarize", "[bad-input][loader]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  const std::string path = test::convert_fixture(f, converter::WeightType::kI8);
  const std::string bytes = read_bytes(path);
  REQUIRE(load_bytes(bytes, "sums.unchanged.encrt").is_ok());

  for (const char* name : {"layers.0.attention.qkv.weight", "layers.1.ffn.down.weight"}) {
    const fb::Tensor* t = tensor(bytes, name);
    REQUIRE(t->dtype() == fb::DType::I8);
    INFO(name);
    {
      // A column sum off by one.
      std::string patched = bytes;
      const size_t at = offset_in(bytes, t->column_sums()->data()) + 3 * sizeof(int32_t);
      int32_t sum;
      std::memcpy(&sum, patched.data() + at, sizeof sum);
      sum += 1;
      std::memcpy(patched.data() + at, &sum, sizeof sum);
      const Status s = load_bytes(patched, "sums.patched.encrt");
      CHECK(s.code() == StatusCode::kInvalidModel);
      CHECK(s.message().find(std::string(name) + "': column sum 3 is") != std::string::npos);
    }
    {
      // A column sum that would overflow int32 once multiplied by a zero point.
      std::string patched = bytes;
      const int32_t huge = 0x7fffff00;
      std::memcpy(patched.data() + offset_in(bytes, t->column_sums()->data()), &huge, sizeof huge);
      const Status s = load_bytes(patched, "sums.huge.encrt");
      CHECK(s.code() == StatusCode::kInvalidModel);
      CHECK(s.message().find("column sum 0 is 2147483392") != std::string::npos);
    }
    {
      // A weight byte changed (element (n = 17, k = 1) of PanelN16K4): its column's sum no longer holds.
      std::string patched = bytes;
      const int K = static_cast<int>(t->shape()->Get(1));
      const size_t at = offset_in(bytes, t->data()->data()) + ((1 * ((K + 3) / 4) + 0) * 16 + 1) * 4 + 1;
      patched[at] = static_cast<char>(patched[at] ^ 0x10);
      const Status s = load_bytes(patched, "sums.weight.encrt");
      CHECK(s.code() == StatusCode::kInvalidModel);
      CHECK(s.message().find("column sum 17 is") != std::string::npos);
    }
  }
}

TEST_CASE("a shape vector 4 bytes off its 8-byte alignment is refused before it is read", "[bad-input][loader]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  const std::string bytes = read_bytes(test::convert_fixture(f, converter::WeightType::kF32));
  // A copy of the word embeddings' shape appended at the end with its int64 values at 8k + 4 (the
  // length field, which the verifier checks, at 8k), and the tensor's shape offset pointed at it.
  // The file is mapped page-aligned, so file offsets keep their alignment in memory.
  const fb::Tensor* t = tensor(bytes, "embeddings.word");
  // (fb::Tensor derives privately from flatbuffers::Table, whose vtable lookup this needs.)
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(t);
  const size_t field = offset_in(bytes, t) + table->GetOptionalFieldOffset(fb::Tensor::VT_SHAPE);
  REQUIRE(field > offset_in(bytes, t));
  std::string patched = bytes;
  while (patched.size() % 8 != 0) patched.push_back('\0');
  const size_t vector_at = patched.size();
  const uint32_t n = t->shape()->size();
  patched.append(reinterpret_cast<const char*>(&n), sizeof n);
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t d = t->shape()->Get(i);
    patched.append(reinterpret_cast<const char*>(&d), sizeof d);
  }
  const uint32_t relative = static_cast<uint32_t>(vector_at - field);
  std::memcpy(patched.data() + field, &relative, sizeof relative);
  REQUIRE(fb::GetModel(patched.data())->tensors()->LookupByKey("embeddings.word")->shape()->size() == n);

  const Status s = load_bytes(patched, "shape.misaligned.encrt");
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(s.message().find("'embeddings.word': its shape is not 8-byte aligned") != std::string::npos);

  // The same vector 8 bytes further (aligned) loads: the check is about alignment, not the copy.
  std::string aligned = bytes;
  while (aligned.size() % 8 != 4) aligned.push_back('\0');
  const size_t aligned_at = aligned.size();
  aligned.append(patched, vector_at, patched.size() - vector_at);
  const uint32_t relative_aligned = static_cast<uint32_t>(aligned_at - field);
  std::memcpy(aligned.data() + field, &relative_aligned, sizeof relative_aligned);
  CHECK(load_bytes(aligned, "shape.aligned.encrt").is_ok());
}
