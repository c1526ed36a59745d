// The C API: the fixture through C calls gives the C++ results; NULLs and bad values are errors.
#include <catch2/catch.hpp>
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
