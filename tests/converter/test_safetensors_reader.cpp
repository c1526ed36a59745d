// The safetensors reader on hand-made file images: good files decode exactly; every kind of
// corruption is reported as a Status, never a crash or an out-of-bounds read.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "converter/safetensors_reader.h"
#include "converter/converter_test_util.h"

using encrt::StatusCode;
using encrt::converter::SafetensorsDType;
using encrt::converter::SafetensorsFile;
using namespace encrt::test;

namespace {

encrt::Status parse(const std::string& image, SafetensorsFile* file) {
  return file->parse(image.data(), image.size(), "test.safetensors");
}

std::string good_image() {
  return safetensors_bytes({st_f32("w", {2, 3}, {1, 2, 3, 4, 5, -6}),
                            st_f16("h", {2}, {0.5f, -2.0f}),
                            st_bf16("b", {3}, {1.0f, -0.15625f, 3.0f}),
                            st_i64("ids", {1, 4}, {0, 1, 2, 3}),
                            st_f32("scalar", {}, {7.0f}),
                            st_f32("empty", {0, 4}, {})},
                           {{"format", "pt"}});
}

}  // namespace

TEST_CASE("safetensors: a well-formed file decodes", "[converter][safetensors]") {
  const std::string image = good_image();
  SafetensorsFile file;
  const encrt::Status st = parse(image, &file);
  REQUIRE(st.is_ok());
  REQUIRE(file.tensors().size() == 6);
  CHECK(file.metadata().at("format") == "pt");

  const auto* w = file.find("w");
  REQUIRE(w != nullptr);
  CHECK(w->dtype == SafetensorsDType::kF32);
  CHECK(w->shape == std::vector<int64_t>{2, 3});
  std::vector<float> v;
  REQUIRE(file.read_float(*w, &v).is_ok());
  CHECK(v == std::vector<float>{1, 2, 3, 4, 5, -6});

  REQUIRE(file.read_float(*file.find("h"), &v).is_ok());
  CHECK(v == std::vector<float>{0.5f, -2.0f});
  REQUIRE(file.read_float(*file.find("b"), &v).is_ok());
  CHECK(v == std::vector<float>{1.0f, -0.15625f, 3.0f});
  REQUIRE(file.read_float(*file.find("scalar"), &v).is_ok());
  CHECK(v == std::vector<float>{7.0f});
  CHECK(file.find("scalar")->shape.empty());
  REQUIRE(file.read_float(*file.find("empty"), &v).is_ok());
  CHECK(v.empty());

  // Integer tensors are listed (checkpoints hold position_ids) but are not weights.
  const auto* ids = file.find("ids");
  REQUIRE(ids != nullptr);
  CHECK(ids->dtype == SafetensorsDType::kI64);
  const encrt::Status ist = file.read_float(*ids, &v);
  CHECK(ist.code() == StatusCode::kUnsupported);
  CHECK_THAT(ist.message(), Catch::Contains("ids") && Catch::Contains("I64"));

  CHECK(file.find("missing") == nullptr);
}

TEST_CASE("safetensors: open() reads a file from disk", "[converter][safetensors]") {
  const std::string dir = scratch_dir("safetensors_open");
  write_text(dir + "/m.safetensors", good_image());
  SafetensorsFile file;
  REQUIRE(file.open(dir + "/m.safetensors").is_ok());
  std::vector<float> v;
  REQUIRE(file.read_float(*file.find("w"), &v).is_ok());
  CHECK(v[5] == -6.0f);

  SafetensorsFile missing;
  const encrt::Status st = missing.open(dir + "/nope.safetensors");
  CHECK(st.code() == StatusCode::kIoError);
  CHECK_THAT(st.message(), Catch::Contains("nope.safetensors"));
}

TEST_CASE("safetensors: corrupt headers are errors", "[converter][safetensors]") {
  SafetensorsFile file;
  auto expect_error = [&](const std::string& image, const std::string& fragment) {
    const encrt::Status st = parse(image, &file);
    INFO("expected an error containing: " << fragment);
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.code() == StatusCode::kInvalidModel);
    CHECK_THAT(st.message(), Catch::Contains(fragment));
    CHECK(file.tensors().empty());
  };
  const std::string data(24, '\0');
  const std::string ok_entry = R"("t":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})";

  SECTION("shorter than the length field") { expect_error(std::string(5, '\0'), "too short"); }
  SECTION("header length beyond the file") {
    const std::string header = "{" + ok_entry + "}";
    expect_error(safetensors_raw(header, data, 1u << 20), "exceeds the file");
    expect_error(safetensors_raw(header, "", ~0ull), "exceeds the file");
  }
  SECTION("truncated header") {
    const std::string header = "{" + ok_entry + "}";
    expect_error(safetensors_raw(header.substr(0, 20), "", header.size()), "exceeds the file");
  }
  SECTION("non-JSON header") { expect_error(safetensors_raw("{not json", data, 9), "not valid JSON"); }
  SECTION("JSON that is not an object") { expect_error(safetensors_raw("[1,2]", data, 5), "not a JSON object"); }
  SECTION("empty header") { expect_error(safetensors_raw("", data, 0), "empty"); }
  SECTION("unknown dtype") {
    const std::string h = R"({"t":{"dtype":"F17","shape":[2,3],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(h, data, h.size()), "unknown dtype 'F17'");
  }
  SECTION("missing fields") {
    const std::string h1 = R"({"t":{"shape":[2,3],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(h1, data, h1.size()), "dtype");
    const std::string h2 = R"({"t":{"dtype":"F32","data_offsets":[0,24]}})";
    expect_error(safetensors_raw(h2, data, h2.size()), "shape");
    const std::string h3 = R"({"t":{"dtype":"F32","shape":[2,3]}})";
    expect_error(safetensors_raw(h3, data, h3.size()), "data_offsets");
    const std::string h4 = R"({"t":{"dtype":"F32","shape":[2,3],"data_offsets":[0]}})";
    expect_error(safetensors_raw(h4, data, h4.size()), "data_offsets");
    const std::string h5 = R"({"t":7})";
    expect_error(safetensors_raw(h5, data, h5.size()), "not a JSON object");
  }
  SECTION("offsets out of range") {
    const std::string h = R"({"t":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]}})";
    expect_error(safetensors_raw(h, data, h.size()), "within the data section");
    const std::string neg = R"({"t":{"dtype":"F32","shape":[2,3],"data_offsets":[-4,20]}})";
    expect_error(safetensors_raw(neg, data, neg.size()), "within the data section");
    const std::string rev = R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})";
    expect_error(safetensors_raw(rev, data, rev.size()), "end before they begin");
  }
  SECTION("shape and byte size disagree") {
    const std::string h = R"({"t":{"dtype":"F32","shape":[2,2],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(h, data, h.size()), "needs 16");
    const std::string f16 = R"({"t":{"dtype":"F16","shape":[2,3],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(f16, data, f16.size()), "needs 12");
  }
  SECTION("shape entries") {
    const std::string neg = R"({"t":{"dtype":"F32","shape":[-2,3],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(neg, data, neg.size()), "non-negative integer");
    const std::string fl = R"({"t":{"dtype":"F32","shape":[2.5,3],"data_offsets":[0,24]}})";
    expect_error(safetensors_raw(fl, data, fl.size()), "non-negative integer");
    // The element count overflows 64 bits: must be caught, not wrapped to a small number.
    const std::string big =
        R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,0]}})";
    expect_error(safetensors_raw(big, data, big.size()), "needs more than");
    const std::string wrap =
        R"({"t":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})";
    expect_error(safetensors_raw(wrap, data, wrap.size()), "needs more than");
  }
  SECTION("metadata must map strings to strings") {
    const std::string h = R"({"__metadata__":{"format":1}})";
    expect_error(safetensors_raw(h, "", h.size()), "__metadata__");
  }
}

TEST_CASE("safetensors: every truncation and byte flip is handled", "[converter][safetensors]") {
  const std::string image = good_image();
  SafetensorsFile file;
  // Truncated anywhere: an error unless the cut leaves the file complete.
  for (size_t len = 0; len < image.size(); ++len) {
    const std::string cut = image.substr(0, len);
    const encrt::Status st = parse(cut, &file);
    INFO("length " << len);
    CHECK_FALSE(st.is_ok());
  }
  // Corrupted header bytes: either an error, or a header that still validates against the file
  // (every tensor's byte range inside the data section).
  for (size_t i = 0; i < image.size(); ++i) {
    std::string bad = image;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    const encrt::Status st = parse(bad, &file);
    if (st.is_ok()) {
      for (const auto& t : file.tensors()) {
        CHECK(t.begin <= t.end);
        CHECK(file.bytes(t) + (t.end - t.begin) <= reinterpret_cast<const uint8_t*>(bad.data()) + bad.size());
      }
    }
  }
}
