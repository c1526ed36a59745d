// The C API: the fixture through C calls gives the C++ results; NULLs and bad values are errors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "encrt/encrt.h"
#include "support/fixtures.h"

TEST_CASE("C API runs a model and reports outputs", "[c-api]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  int hidden = 0;
  REQUIRE(encrt_model_dims(model, nullptr, &hidden, nullptr, nullptr, nullptr) == ENCRT_OK);
  CHECK(hidden == f.hidden);
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  opt.attention_layer = 1;
  encrt_session* session = nullptr;
  REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);
  const float* out = nullptr;
  CHECK(encrt_session_output(session, ENCRT_OUTPUT_HIDDEN, &out, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  REQUIRE(encrt_session_run(session, f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr) == ENCRT_OK);
  int64_t shape[4];
  int rank = 0;
  REQUIRE(encrt_session_output(session, ENCRT_OUTPUT_HIDDEN, &out, shape, &rank) == ENCRT_OK);
  CHECK(rank == 3);
  CHECK(shape[0] == f.batch);
  CHECK(shape[2] == f.hidden);
  const double rms = encrt::test::rms_on_real_tokens(f.hidden_state.data.data(), f, f.hidden);
  CHECK(encrt::test::max_abs_diff_on_real_tokens(out, f.hidden_state.data.data(), f, f.hidden) <= 1e-4 * rms);
  REQUIRE(encrt_session_output(session, ENCRT_OUTPUT_ATTENTION, &out, shape, &rank) == ENCRT_OK);
  CHECK(rank == 4);
  CHECK(shape[3] == f.seq);
  encrt_session_free(session);
  encrt_model_free(model);
}

TEST_CASE("C API refuses NULLs and bad values without crashing", "[c-api]") {
  encrt_model* model = reinterpret_cast<encrt_model*>(0x1);
  CHECK(encrt_model_load(nullptr, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(model == nullptr);
  CHECK(std::strstr(encrt_last_error(), "path") != nullptr);
  CHECK(encrt_model_load("x", nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_load("/nonexistent/model.encrt", &model) == ENCRT_IO_ERROR);
  CHECK(encrt_session_create(nullptr, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_session* session = nullptr;
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  CHECK(encrt_session_create(nullptr, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_run(nullptr, 1, 1, nullptr, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_output(nullptr, ENCRT_OUTPUT_HIDDEN, nullptr, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_session_options_init(nullptr);
  encrt_model_free(nullptr);
  encrt_session_free(nullptr);

  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  opt.struct_size = 3;
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  encrt_session_options_init(&opt);
  opt.max_seq = 8;
  REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);
  CHECK(encrt_session_run(session, 1, 8, nullptr, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  const int32_t ids[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(encrt_session_run(session, 1, 9, ids, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "max_seq") != nullptr);
  const int32_t bad[2] = {1, 100000};
  CHECK(encrt_session_run(session, 1, 2, bad, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "100000") != nullptr);
  encrt_session_free(session);
  encrt_model_free(model);
}

TEST_CASE("C API: outputs by name, copies, backend and backend options", "[c-api]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  encrt_session* session = nullptr;

  opt.backend = "tpu";
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "tpu") != nullptr);
  opt.backend = "cuda";
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_UNSUPPORTED);
  opt.backend = "cpu";
  opt.backend_options = "isa";
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  opt.backend_options = "colour=blue";
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "colour") != nullptr);
  opt.backend_options = "isa=scalar";
  REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);

  size_t count = 0;
  REQUIRE(encrt_session_output_count(session, &count) == ENCRT_OK);
  REQUIRE(count == 2);
  const char* name = nullptr;
  REQUIRE(encrt_session_output_name(session, 0, &name) == ENCRT_OK);
  CHECK(std::string(name) == "hidden");
  CHECK(encrt_session_output_name(session, 2, &name) == ENCRT_INVALID_ARGUMENT);
  encrt_tensor_info info;
  info.struct_size = sizeof(info);
  CHECK(encrt_session_output_info(session, "hidden", &info) == ENCRT_INVALID_ARGUMENT);  // no run yet
  REQUIRE(encrt_session_run(session, f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr) == ENCRT_OK);
  REQUIRE(encrt_session_output_info(session, "pooled", &info) == ENCRT_OK);
  CHECK(std::string(info.name) == "pooled");
  CHECK(info.dtype == ENCRT_DTYPE_F32);
  CHECK(info.rank == 2);
  CHECK(info.shape[0] == f.batch);
  CHECK(info.shape[1] == f.hidden);
  CHECK(std::string(info.device) == "host");
  CHECK(info.bytes == static_cast<size_t>(f.batch) * f.hidden * sizeof(float));
  std::vector<float> pooled(info.bytes / sizeof(float));
  REQUIRE(encrt_session_copy_output(session, "pooled", pooled.data(), info.bytes) == ENCRT_OK);
  CHECK(std::memcmp(pooled.data(), info.data, info.bytes) == 0);
  CHECK(encrt_session_copy_output(session, "pooled", pooled.data(), 4) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_copy_output(session, "logits", pooled.data(), info.bytes) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_output_info(session, "logits", &info) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_output_info(session, nullptr, &info) == ENCRT_INVALID_ARGUMENT);
  info.struct_size = 8;
  CHECK(encrt_session_output_info(session, "pooled", &info) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_output_count(nullptr, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_copy_output(session, "pooled", nullptr, 0) == ENCRT_INVALID_ARGUMENT);
  encrt_session_free(session);
  encrt_model_free(model);
}

TEST_CASE("C API: src masks through encrt_run_inputs, as the C++ API gives them", "[c-api][src_mask]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  encrt_session* plain = nullptr;
  encrt_session* masked = nullptr;
  REQUIRE(encrt_session_create(model, &opt, &plain) == ENCRT_OK);
  opt.src_mask = 1;
  REQUIRE(encrt_session_create(model, &opt, &masked) == ENCRT_OK);

  const int S = f.seq;
  std::vector<uint8_t> causal(static_cast<size_t>(S) * S);
  for (int i = 0; i < S; ++i)
    for (int j = 0; j < S; ++j) causal[static_cast<size_t>(i) * S + j] = j > i;
  encrt_run_inputs in;
  encrt_run_inputs_init(&in);
  CHECK(in.struct_size == sizeof(encrt_run_inputs));
  CHECK(in.src_mask_bool == nullptr);
  in.batch = f.batch;
  in.seq = S;
  in.input_ids = f.ids.data.data();
  in.attention_mask = f.mask.data.data();
  in.src_mask_bool = causal.data();
  REQUIRE(encrt_session_run_inputs(masked, &in) == ENCRT_OK);

  // The same through the C++ API.
  std::unique_ptr<encrt::Model> cpp_model;
  REQUIRE(encrt::Model::load(path, &cpp_model).is_ok());
  encrt::SessionOptions cpp_opt;
  cpp_opt.max_batch = f.batch;
  cpp_opt.max_seq = S;
  cpp_opt.src_mask = true;
  std::unique_ptr<encrt::Session> cpp;
  REQUIRE(encrt::Session::create(*cpp_model, cpp_opt, &cpp).is_ok());
  encrt::Inputs cin{f.batch, S, f.ids.data.data(), f.mask.data.data(), nullptr};
  cin.src_mask_bool = causal.data();
  REQUIRE(cpp->run(cin).is_ok());
  const float* data = nullptr;
  int64_t shape[4];
  int rank = 0;
  REQUIRE(encrt_session_output(masked, ENCRT_OUTPUT_HIDDEN, &data, shape, &rank) == ENCRT_OK);
  const size_t n = static_cast<size_t>(f.batch) * S * f.hidden;
  CHECK(std::equal(data, data + n, cpp->last_hidden_state()));

  // Errors: NULLs, a too small struct_size, a session not planned for a mask, NaN in a float mask.
  CHECK(encrt_session_run_inputs(nullptr, &in) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_run_inputs(masked, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_run_inputs_init(nullptr);
  encrt_run_inputs small = in;
  small.struct_size = 8;
  CHECK(encrt_session_run_inputs(masked, &small) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_session_run_inputs(plain, &in) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "src_mask") != nullptr);
  std::vector<float> bias(static_cast<size_t>(S) * S, 0.0f);
  bias[3] = NAN;
  in.src_mask_bool = nullptr;
  in.src_mask_float = bias.data();
  CHECK(encrt_session_run_inputs(masked, &in) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "NaN") != nullptr);
  // A struct of the first version (no src mask fields) runs as encrt_session_run.
  small = in;
  small.struct_size = offsetof(encrt_run_inputs, token_type_ids) + sizeof(const int32_t*);
  CHECK(encrt_session_run_inputs(plain, &small) == ENCRT_OK);

  encrt_session_free(plain);
  encrt_session_free(masked);
  encrt_model_free(model);
}

TEST_CASE("C API: model metadata by key, with the buffer's size checked", "[c-api]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF16);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  char value[16];
  size_t length = 99;
  REQUIRE(encrt_model_metadata(model, "weight_type", value, sizeof value, &length) == ENCRT_OK);
  CHECK(std::string(value) == "f16");
  CHECK(length == 3);
  // Too small (the NUL needs room too): untouched, and the length is still told.
  std::memset(value, 'x', sizeof value);
  length = 0;
  CHECK(encrt_model_metadata(model, "weight_type", value, 3, &length) == ENCRT_INVALID_ARGUMENT);
  CHECK(length == 3);
  CHECK(value[0] == 'x');
  CHECK(encrt_model_metadata(model, "weight_type", nullptr, 0, &length) == ENCRT_INVALID_ARGUMENT);
  CHECK(length == 3);
  CHECK(encrt_model_metadata(model, "no_such_key", value, sizeof value, &length) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "no_such_key") != nullptr);
  CHECK(encrt_model_metadata(nullptr, "weight_type", value, sizeof value, &length) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_metadata(model, nullptr, value, sizeof value, &length) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_metadata(model, "weight_type", value, sizeof value, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_metadata(model, "weight_type", nullptr, 8, &length) == ENCRT_INVALID_ARGUMENT);
  encrt_model_free(model);
}

namespace {
// The bytes of a file, in a 64-byte-aligned buffer with `offset` bytes before them (0: aligned).
struct FileInMemory {
  FileInMemory(const std::string& path, size_t offset) {
    FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::fseek(f, 0, SEEK_END);
    size = static_cast<size_t>(std::ftell(f));
    std::fseek(f, 0, SEEK_SET);
    block = static_cast<unsigned char*>(std::aligned_alloc(64, (size + offset + 63) / 64 * 64));
    data = block + offset;
    REQUIRE(std::fread(data, 1, size, f) == size);
    std::fclose(f);
  }
  ~FileInMemory() { std::free(block); }
  FileInMemory(const FileInMemory&) = delete;
  FileInMemory& operator=(const FileInMemory&) = delete;
  unsigned char* block = nullptr;
  unsigned char* data = nullptr;
  size_t size = 0;
};

// The pooled output of a run of the fixture on `model`.
std::vector<float> pooled_of(const encrt_model* model, const encrt::test::Fixture& f) {
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  encrt_session* session = nullptr;
  REQUIRE(encrt_session_create(model, &opt, &session) == ENCRT_OK);
  REQUIRE(encrt_session_run(session, f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr) == ENCRT_OK);
  const float* out = nullptr;
  int64_t shape[4];
  int rank = 0;
  REQUIRE(encrt_session_output(session, ENCRT_OUTPUT_POOLED, &out, shape, &rank) == ENCRT_OK);
  std::vector<float> pooled(out, out + shape[0] * shape[1]);
  encrt_session_free(session);
  return pooled;
}
}  // namespace

TEST_CASE("C API loads a model from the caller's memory, in place", "[c-api][load-options]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  encrt_model* from_file = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &from_file) == ENCRT_OK);
  FileInMemory memory(path, 0);
  encrt_model* from_memory = nullptr;
  REQUIRE(encrt_model_load_from_memory(memory.data, memory.size, nullptr, &from_memory) == ENCRT_OK);
  CHECK(pooled_of(from_memory, f) == pooled_of(from_file, f));

  // With verification, and through encrt_model_load_ex.
  encrt_load_options options;
  encrt_load_options_init(&options);
  CHECK(options.struct_size == sizeof(encrt_load_options));
  CHECK(options.verify_checksums == 0);
  options.verify_checksums = 1;
  encrt_model* verified = nullptr;
  REQUIRE(encrt_model_load_from_memory(memory.data, memory.size, &options, &verified) == ENCRT_OK);
  CHECK(pooled_of(verified, f) == pooled_of(from_file, f));
  encrt_model_free(verified);
  REQUIRE(encrt_model_load_ex(path.c_str(), &options, &verified) == ENCRT_OK);
  encrt_model_free(verified);
  REQUIRE(encrt_model_load_ex(path.c_str(), nullptr, &verified) == ENCRT_OK);
  encrt_model_free(verified);

  // A changed byte in the caller's memory (the file's middle: inside a weight, or else in the
  // structure) fails verification.
  encrt_model_free(from_memory);
  memory.data[memory.size / 2] ^= 0x20;
  CHECK(encrt_model_load_from_memory(memory.data, memory.size, &options, &from_memory) == ENCRT_INVALID_MODEL);
  CHECK(std::strstr(encrt_last_error(), "does not match its checksum") != nullptr);
  CHECK(from_memory == nullptr);
  encrt_model_free(from_file);
}

TEST_CASE("C API: load from memory and load options refuse bad arguments", "[c-api][load-options]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kF32);
  encrt_model* model = reinterpret_cast<encrt_model*>(0x1);
  FileInMemory aligned(path, 0);
  CHECK(encrt_model_load_from_memory(nullptr, aligned.size, nullptr, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(model == nullptr);
  CHECK(std::strstr(encrt_last_error(), "data") != nullptr);
  CHECK(encrt_model_load_from_memory(aligned.data, 0, nullptr, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "size is 0") != nullptr);
  CHECK(encrt_model_load_from_memory(aligned.data, aligned.size, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_load_from_memory(aligned.data, 7, nullptr, &model) == ENCRT_INVALID_MODEL);
  CHECK(encrt_model_load_from_memory(aligned.data, aligned.size / 2, nullptr, &model) == ENCRT_INVALID_MODEL);

  // The same bytes 8 bytes past an alignment boundary: refused, not misread.
  FileInMemory misaligned(path, 8);
  CHECK(encrt_model_load_from_memory(misaligned.data, misaligned.size, nullptr, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "64-byte aligned") != nullptr);
  CHECK(model == nullptr);

  encrt_load_options options;
  encrt_load_options_init(&options);
  options.struct_size = 1;
  CHECK(encrt_model_load_from_memory(aligned.data, aligned.size, &options, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(std::strstr(encrt_last_error(), "struct_size") != nullptr);
  CHECK(encrt_model_load_ex(path.c_str(), &options, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_load_ex(nullptr, nullptr, &model) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_model_load_ex(path.c_str(), nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_load_options_init(nullptr);

  // Any nonzero value asks for verification.
  options.struct_size = sizeof(encrt_load_options);
  options.verify_checksums = 7;
  aligned.data[aligned.size / 2] ^= 0x01;
  CHECK(encrt_model_load_from_memory(aligned.data, aligned.size, &options, &model) == ENCRT_INVALID_MODEL);
  CHECK(std::strstr(encrt_last_error(), "does not match its checksum") != nullptr);
}

TEST_CASE("C API: tuning returns backend options a session takes; short buffers and NULLs are errors",
          "[c-api][tuning]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");
  const std::string path = encrt::test::convert_fixture(f, encrt::converter::WeightType::kI8);
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  encrt_session_options opt;
  encrt_session_options_init(&opt);
  opt.backend = "cpu";
  opt.backend_options = "int8_linears=f16";  // a start the tuner may leave or undo
  char text[256];
  size_t length = 0;
  double default_ms = -1, tuned_ms = -1;
  REQUIRE(encrt_tune_backend_options(model, &opt, f.batch, f.seq, text, sizeof text, &length, &default_ms, &tuned_ms) ==
          ENCRT_OK);
  INFO("options: " << text);
  CHECK(std::strlen(text) == length);
  CHECK(std::string(text).find("int8_linears=") != std::string::npos);  // the start's option is kept or changed
  CHECK(default_ms > 0);
  CHECK(tuned_ms > 0);
  opt.backend_options = text;
  opt.max_batch = f.batch;
  opt.max_seq = f.seq;
  encrt_session* session = nullptr;
  CHECK(encrt_session_create(model, &opt, &session) == ENCRT_OK);
  encrt_session_free(session);

  opt.backend_options = "int8_linears=f16";
  size_t needed = 0;
  CHECK(encrt_tune_backend_options(model, &opt, f.batch, f.seq, text, 3, &needed, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  CHECK(needed >= 3);  // "int8_linears=..." does not fit in 3 bytes: the length needed is still given
  CHECK(std::string(encrt_last_error()).find("out_options holds 3 bytes") != std::string::npos);
  CHECK(encrt_tune_backend_options(nullptr, &opt, 1, 8, text, sizeof text, &length, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tune_backend_options(model, nullptr, 1, 8, text, sizeof text, &length, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tune_backend_options(model, &opt, 1, 8, text, sizeof text, nullptr, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tune_backend_options(model, &opt, 1, 8, nullptr, 16, &length, nullptr, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tune_backend_options(model, &opt, 0, 8, text, sizeof text, &length, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  opt.backend_options = "no_such_option=1";
  CHECK(encrt_tune_backend_options(model, &opt, 1, 8, text, sizeof text, &length, nullptr, nullptr) ==
        ENCRT_INVALID_ARGUMENT);
  encrt_model_free(model);
}
