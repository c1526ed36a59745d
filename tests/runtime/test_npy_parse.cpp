// npy::parse_*: the .npy reader over a file image in memory gives what read_* gives from the
// file, and refuses malformed images with a Status (the fuzz target fuzz/fuzz_npy.cpp checks the
// same properties on arbitrary bytes).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "npy/npy.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("npy: parse_* over memory equals read_* over the file", "[npy]") {
  const std::string ints_path = test::tmp_path("npy_parse_ints.npy");
  const std::string floats_path = test::tmp_path("npy_parse_floats.npy");
  const std::vector<int32_t> ints = {1, -2, 3, 40000, 5, 6};
  const std::vector<float> floats = {0.5f, -1.25f, 3e10f};
  REQUIRE(npy::write_int32(ints_path, {2, 3}, ints.data()).is_ok());
  REQUIRE(npy::write_float32(floats_path, {3}, floats.data()).is_ok());

  const std::string ib = file_bytes(ints_path), fb = file_bytes(floats_path);
  npy::Int32Array a;
  REQUIRE(npy::parse_int32(ib.data(), ib.size(), "ints", &a).is_ok());
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(a.data == ints);
  npy::Float32Array f;
  REQUIRE(npy::parse_float32(fb.data(), fb.size(), "floats", &f).is_ok());
  CHECK(f.shape == std::vector<int64_t>{3});
  CHECK(f.data == floats);
  std::string descr;
  REQUIRE(npy::parse_descr(fb.data(), fb.size(), "floats", &descr).is_ok());
  CHECK(descr == "<f4");

  // Malformed images: each a Status that names the origin, never a read past the image.
  for (size_t cut : {size_t{0}, size_t{5}, size_t{9}, size_t{40}, ib.size() - 1}) {
    INFO("cut at " << cut);
    const std::vector<char> part(ib.begin(), ib.begin() + static_cast<long>(cut));
    const encrt::Status s = npy::parse_int32(part.data(), part.size(), "cut.npy", &a);
    CHECK_FALSE(s.is_ok());
    CHECK_THAT(s.message(), Catch::Contains("cut.npy"));
  }
  CHECK_FALSE(npy::parse_int32(nullptr, 16, "null", &a).is_ok());
  CHECK_FALSE(npy::parse_float32(ib.data(), ib.size(), "ints as floats", &f).is_ok());
}
