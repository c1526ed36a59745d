// Sizes that a 32-bit process cannot hold: a session's arena is planned in size_t, so on 32-bit
// ARM (toolchains/armv7-linux-gnueabihf.cmake) a shape whose buffers would pass 2^32 bytes must be
// refused with a clear error, not wrap into a small arena; on 64-bit the same shape plans an arena
// of its true size.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "support/fixtures.h"

using namespace encrt;

TEST_CASE("an arena larger than the address space allows is refused, not wrapped", "[session][bad-input]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kF32, "", "address_space"), &model));
  SessionOptions opt;
  opt.max_batch = 1 << 20;  // x max_seq 40: about 2.7e10 bytes of activations (hidden 32, ffn 64)
  opt.max_seq = 40;
  size_t bytes = 0;
  const Status s = Session::arena_size(*model, opt, &bytes);
  if (sizeof(size_t) < 8) {
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == "max_batch x max_seq is too large to plan an arena for");
  } else {
    REQUIRE(s.is_ok());
    CHECK(static_cast<uint64_t>(bytes) > (uint64_t{1} << 32));
  }
  // A shape this build can hold plans as before.
  opt.max_batch = 4;
  REQUIRE(Session::arena_size(*model, opt, &bytes).is_ok());
  CHECK(bytes > 0);
}

TEST_CASE("a .npy dimension beyond size_t is refused, not truncated", "[npy][bad-input]") {
  // shape (2^32 + 1,): as a 32-bit size_t that is 1, which the file's one element would satisfy.
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967297,), }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict.push_back('\n');
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(dict.size() & 0xff));
  bytes.push_back(static_cast<char>(dict.size() >> 8));
  bytes += dict;
  bytes.append(4, '\0');  // one int32
  const std::string path = test::tmp_path("huge_dimension.npy");
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  npy::Int32Array a;
  const Status s = npy::read_int32(path, &a);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK((s.message().find("shape too large") != std::string::npos ||
         s.message().find("fewer elements than its shape says") != std::string::npos));
  if (sizeof(size_t) < 8) CHECK(s.message().find("shape too large") != std::string::npos);
}
