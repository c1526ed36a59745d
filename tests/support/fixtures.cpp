#include "support/fixtures.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace encrt::test {

namespace {
// The folders compiled in, unless the environment moves them (a test binary carried to another
// machine: scripts/device_check.sh).
std::string fixtures_dir() {
  const char* env = std::getenv("ENCRT_FIXTURES_DIR");
  return env && *env ? env : ENCRT_FIXTURES_DIR;
}
std::string tmp_dir() {
  const char* env = std::getenv("ENCRT_TEST_TMP_DIR");
  return env && *env ? env : ENCRT_TEST_TMP_DIR;
}
}  // namespace

std::string tmp_path(const std::string& file) { return tmp_dir() + "/" + file; }

std::string bert_plain_with_vocab(const std::string& name, const std::vector<std::string>& vocab,
                                  const std::string& tokenizer_config) {
  return checkpoint_with_vocab("bert_plain", name, vocab, tokenizer_config);
}

std::string checkpoint_with_vocab(const std::string& fixture, const std::string& name,
                                  const std::vector<std::string>& vocab, const std::string& tokenizer_config) {
  namespace fs = std::filesystem;
  // One folder per process: ctest runs each test case as its own process, in parallel, and two
  // of them must not rewrite the vocabulary another one's converter is reading.
  const fs::path dir = tmp_path(name + "." + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path src = std::string(ENCRT_FIXTURES_DIR) + "/" + fixture;
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  {
    std::ofstream out(dir / "vocab.txt");
    for (const std::string& t : vocab) out << t << "\n";
  }
  std::ofstream(dir / "tokenizer_config.json") << tokenizer_config;
  converter::ConvertOptions opt;
  opt.source_dir = dir.string();
  opt.output_path = (dir / "model.encrt").string();
  const Status s = converter::convert(opt);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return opt.output_path;
}

std::vector<std::string> fixture_names() {
  std::ifstream in(fixtures_dir() + "/manifest.json");
  REQUIRE(in.good());
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::vector<std::string> names;
  for (const auto& f : manifest.at("fixtures")) names.push_back(f.at("name").get<std::string>());
  REQUIRE(!names.empty());
  return names;
}

Fixture load_fixture(const std::string& name) {
  Fixture f;
  f.name = name;
  f.dir = fixtures_dir() + "/" + name;
  auto path = [&](const char* file) { return f.dir + "/" + file; };
  auto exists = [&](const char* file) { return std::ifstream(path(file)).good(); };
  REQUIRE(npy::read_int32(path("ids.npy"), &f.ids).is_ok());
  REQUIRE(npy::read_int32(path("mask.npy"), &f.mask).is_ok());
  REQUIRE(npy::read_float32(path("hidden.npy"), &f.hidden_state).is_ok());
  REQUIRE(npy::read_float32(path("pooled.npy"), &f.pooled).is_ok());
  REQUIRE(f.ids.shape.size() == 2);
  REQUIRE(f.hidden_state.shape.size() == 3);
  f.batch = static_cast<int>(f.ids.shape[0]);
  f.seq = static_cast<int>(f.ids.shape[1]);
  f.hidden = static_cast<int>(f.hidden_state.shape[2]);
  if ((f.has_token_types = exists("token_type_ids.npy")))
    REQUIRE(npy::read_int32(path("token_type_ids.npy"), &f.token_types).is_ok());
  if ((f.has_pooler = exists("pooler.npy"))) REQUIRE(npy::read_float32(path("pooler.npy"), &f.pooler).is_ok());
  if ((f.has_probs = exists("attention_probs_layer1.npy"))) {
    REQUIRE(npy::read_float32(path("attention_probs_layer1.npy"), &f.probs_layer1).is_ok());
    f.heads = static_cast<int>(f.probs_layer1.shape[1]);
  }
  return f;
}

std::string convert_fixture(const Fixture& f, converter::WeightType type, const std::string& pooling,
                            const std::string& suffix) {
  converter::ConvertOptions opt;
  opt.source_dir = f.dir;
  opt.weight_type = type;
  opt.pooling = pooling;
  opt.output_path = tmp_path(f.name + "." + converter::weight_type_name(type) + (pooling.empty() ? "" : "." + pooling) +
                             suffix + ".encrt");
  const Status s = converter::convert(opt);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return opt.output_path;
}

Inputs fixture_inputs(const Fixture& f) {
  Inputs in;
  in.batch = f.batch;
  in.seq = f.seq;
  in.input_ids = f.ids.data.data();
  in.attention_mask = f.mask.data.data();
  in.token_type_ids = f.has_token_types ? f.token_types.data.data() : nullptr;
  return in;
}

std::unique_ptr<Session> run_fixture(const Model& model, const Fixture& f, const SessionOptions& options) {
  std::unique_ptr<Session> session;
  Status s = Session::create(model, options, &session);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  s = session->run(fixture_inputs(f));
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return session;
}

double rms_on_real_tokens(const float* x, const Fixture& f, int width) {
  double sum = 0;
  size_t n = 0;
  for (int t = 0; t < f.batch * f.seq; ++t) {
    if (f.mask.data[static_cast<size_t>(t)] == 0) continue;
    for (int i = 0; i < width; ++i) sum += static_cast<double>(x[static_cast<size_t>(t) * width + i]) * x[static_cast<size_t>(t) * width + i];
    n += static_cast<size_t>(width);
  }
  return std::sqrt(sum / static_cast<double>(n));
}

double max_abs_diff_on_real_tokens(const float* a, const float* b, const Fixture& f, int width) {
  double worst = 0;
  for (int t = 0; t < f.batch * f.seq; ++t) {
    if (f.mask.data[static_cast<size_t>(t)] == 0) continue;
    for (int i = 0; i < width; ++i) {
      const size_t k = static_cast<size_t>(t) * width + i;
      worst = std::max(worst, std::fabs(static_cast<double>(a[k]) - b[k]));
    }
  }
  return worst;
}

double cosine(const float* a, const float* b, int width) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < width; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace encrt::test
