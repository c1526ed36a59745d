// `encrt attention` end to end: the CLI binary on the bert_plain fixture with a small vocabulary.
// Its PNG equals, pixel for pixel, the figure drawn from a session's own attention probabilities;
// its SVG has a cell per head and token pair; --json gives the probabilities; bad requests are
// errors that name what is wrong.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/heatmap/attention_figure.h"
#include "cli/heatmap/canvas.h"
#include "cli/heatmap/png_writer.h"
#include "converter/convert.h"
#include "heatmap/heatmap_test_util.h"
#include "support/fixtures.h"

using namespace encrt;
namespace fs = std::filesystem;

namespace {

const char* const kText = "The cat sat on the mat <&> \xE4\xB8\xAD";  // 中: a CJK character, its own token

// bert_plain (vocab_size 120) converted with a vocabulary of its size; the model's path.
const std::string& model_with_vocab() {
  static const std::string path = [] {
    // One folder per process: ctest runs the test cases in parallel processes.
    const fs::path dir = encrt::test::tmp_path("cli_attention_model." + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path src = std::string(ENCRT_FIXTURES_DIR) + "/bert_plain";
    for (const char* f : {"config.json", "model.safetensors"})
      fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
    std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on",
                                      "mat", "<", "&", ">", "\xE4\xB8\xAD"};
    while (vocab.size() < 120) vocab.push_back("w" + std::to_string(vocab.size()));
    std::ofstream out(dir / "vocab.txt");
    for (const std::string& t : vocab) out << t << "\n";
    out.close();
    converter::ConvertOptions opt;
    opt.source_dir = dir.string();
    opt.output_path = (dir / "model.encrt").string();
    const Status s = converter::convert(opt);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    return opt.output_path;
  }();
  return path;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Run {
  int exit_code = -1;
  std::string out, err;
};

Run run_cli(const std::vector<std::string>& args) {
  std::string cmd = quote(ENCRT_CLI) + " attention";
  for (const std::string& a : args) cmd += " " + quote(a);
  const std::string tag = std::to_string(::getpid());
  const std::string out = encrt::test::tmp_path("cli_attention.stdout." + tag);
  const std::string err = encrt::test::tmp_path("cli_attention.stderr." + tag);
  const int status = std::system((cmd + " >" + quote(out) + " 2>" + quote(err)).c_str());
  Run r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// What the CLI should draw: the session's layer probabilities and the model's word pieces.
struct Reference {
  std::vector<std::string> tokens;
  std::vector<float> probs;  // [heads, seq, seq]
  int heads = 0, seq = 0;
};

Reference reference(int layer) {
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(model_with_vocab(), &model).is_ok());
  std::unique_ptr<Tokenizer> tokenizer;
  REQUIRE(Tokenizer::create(*model, &tokenizer).is_ok());
  std::vector<int32_t> ids;
  REQUIRE(tokenizer->encode(kText, 64, &ids).is_ok());
  Reference r;
  r.seq = static_cast<int>(ids.size());
  r.heads = model->config().num_heads;
  for (int32_t id : ids) r.tokens.push_back(model->vocabulary()[static_cast<size_t>(id)]);
  SessionOptions opt;
  opt.max_seq = r.seq;
  opt.attention_layer = layer;
  std::unique_ptr<Session> session;
  REQUIRE(Session::create(*model, opt, &session).is_ok());
  Inputs in;
  in.batch = 1;
  in.seq = r.seq;
  in.input_ids = ids.data();
  const Status s = session->run(in);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  r.probs.assign(session->attention_probs(), session->attention_probs() + static_cast<size_t>(r.heads) * r.seq * r.seq);
  return r;
}

}  // namespace

TEST_CASE("cli attention: the PNG is the figure of the session's probabilities", "[heatmap][cli]") {
  if (!heatmap::png_available()) {
    WARN("SKIPPED: this build has no libpng");
    return;
  }
  const std::string png = encrt::test::tmp_path(std::to_string(::getpid()) + ".cli_attention.png");
  fs::remove(png);
  const Run r = run_cli({model_with_vocab(), kText, "--layer", "1", "--head", "2", "-o", png});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Reference ref = reference(1);
  REQUIRE(ref.tokens.size() == 12);  // [CLS] the cat sat on the mat < & > 中 [SEP]
  CHECK(ref.tokens.front() == "[CLS]");
  CHECK(ref.tokens.back() == "[SEP]");

  heatmap::AttentionFigure f;
  f.title = "model.encrt  layer 1  head 2";
  f.tokens = ref.tokens;
  const size_t per_head = static_cast<size_t>(ref.seq) * ref.seq;
  f.maps.emplace_back(ref.probs.begin() + static_cast<ptrdiff_t>(2 * per_head),
                      ref.probs.begin() + static_cast<ptrdiff_t>(3 * per_head));
  f.vmin = 0.0f;
  heatmap::Scene scene;
  REQUIRE(heatmap::layout_attention(f, &scene).is_ok());
  const heatmap::Canvas expected = heatmap::rasterize(scene);

  heatmap_test::DecodedPng image;
  REQUIRE(heatmap_test::decode_png(png, &image) == "");
  CHECK(r.out.find("wrote " + png + " (" + std::to_string(image.width) + " x " + std::to_string(image.height)) !=
        std::string::npos);
  REQUIRE(image.width == expected.width());
  REQUIRE(image.height == expected.height());
  CHECK(std::equal(image.rgb.begin(), image.rgb.end(), expected.rgb()));
  CHECK(fs::file_size(png) < 200 * 1024);
}

TEST_CASE("cli attention: the SVG of all heads and the JSON of the probabilities", "[heatmap][cli]") {
  const std::string svg_path = encrt::test::tmp_path(std::to_string(::getpid()) + ".cli_attention.svg");
  const Run r = run_cli({model_with_vocab(), kText, "--layer", "0", "--all-heads", "-o", svg_path, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Reference ref = reference(0);
  const std::string svg = slurp(svg_path);
  CHECK(heatmap_test::xml_problem(svg) == "");
  size_t cells = 0;
  for (size_t at = svg.find("<rect class=\"cell\""); at != std::string::npos; at = svg.find("<rect class=\"cell\"", at + 1))
    ++cells;
  CHECK(cells == static_cast<size_t>(ref.heads) * ref.seq * ref.seq);
  CHECK(svg.find(">\xE4\xB8\xAD</text>") != std::string::npos);
  CHECK(svg.find(">&lt;</text>") != std::string::npos);
  CHECK(svg.find(">&amp;</text>") != std::string::npos);
  CHECK(svg.find(">head 3</text>") != std::string::npos);
  CHECK(svg.find(">model.encrt  layer 0  all 4 heads</text>") != std::string::npos);
  CHECK(r.err.find("wrote " + svg_path) != std::string::npos);  // stdout is the JSON's

  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["layer"] == 0);
  CHECK(j["heads"] == std::vector<int>{0, 1, 2, 3});
  CHECK(j["tokens"] == ref.tokens);
  REQUIRE(j["attention"].size() == static_cast<size_t>(ref.heads));
  for (int h = 0; h < ref.heads; ++h)
    for (int q = 0; q < ref.seq; ++q) {
      double sum = 0;
      for (int k = 0; k < ref.seq; ++k) {
        const double v = j["attention"][static_cast<size_t>(h)][static_cast<size_t>(q)][static_cast<size_t>(k)];
        CHECK(v == Approx(ref.probs[(static_cast<size_t>(h) * ref.seq + q) * ref.seq + k]).margin(1e-7));
        sum += v;
      }
      CHECK(sum == Approx(1.0).margin(1e-5));  // each query's row is a distribution
    }
}

TEST_CASE("cli attention: bad requests are errors that name the problem", "[heatmap][cli][bad_input]") {
  const std::string m = model_with_vocab(), svg = encrt::test::tmp_path(std::to_string(::getpid()) + ".cli_attention_bad.svg");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{m, kText, "--layer", "2", "-o", svg}, "--layer 2 is not a layer of this model (0..1)"},
      {{m, kText, "--layer", "-1", "-o", svg}, "(0..1)"},
      {{m, kText, "--head", "4", "-o", svg}, "--head 4 is not a head of this model (0..3)"},
      {{m, kText, "--head", "1", "--all-heads", "-o", svg}, "not both"},
      {{m, kText, "-o", encrt::test::tmp_path("map.jpg")}, "unknown image type '.jpg'"},
      {{m, kText, "-o", "/nonexistent-encrt-dir/map.svg"}, "cannot write '/nonexistent-encrt-dir/map.svg'"},
      {{m, "", "-o", svg}, "the text is empty"},
      {{m, "   ", "-o", svg}, "the text is empty"},
      {{m, kText, "--max-length", "41", "-o", svg}, "outside 3..40"},
      {{m, kText, "--vmin", "0.5", "--vmax", "0.2", "-o", svg}, "--vmin < --vmax"},
      {{m, kText, "--colour", "red", "-o", svg}, "unknown option --colour"},
      {{encrt::test::tmp_path("no_such_model.encrt"), kText, "-o", svg}, "no_such_model.encrt"},
  };
  for (const Case& c : cases) {
    const Run r = run_cli(c.args);
    INFO(c.args[1] << " " << (c.args.size() > 2 ? c.args[2] : "") << ": " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
  const Run usage = run_cli({m});
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("usage: encrt attention") != std::string::npos);
  if (!heatmap::png_available()) {
    const Run r = run_cli({m, kText, "-o", encrt::test::tmp_path(std::to_string(::getpid()) + ".map.png")});
    CHECK(r.err.find("no libpng") != std::string::npos);
  }
}

TEST_CASE("cli attention: a model without a vocabulary, and truncation", "[heatmap][cli][bad_input]") {
  const encrt::test::Fixture f = encrt::test::load_fixture("torch_post_relu");  // no vocab.txt
  const std::string torch_model = encrt::test::convert_fixture(f, converter::WeightType::kF32);
  const std::string svg = encrt::test::tmp_path(std::to_string(::getpid()) + ".cli_attention_trunc.svg");
  Run r = run_cli({torch_model, kText, "-o", svg});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot turn text into tokens") != std::string::npos);

  r = run_cli({model_with_vocab(), kText, "--max-length", "5", "-o", svg, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("the text has 12 tokens; the map shows the first 5") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["tokens"] == std::vector<std::string>{"[CLS]", "the", "cat", "sat", "[SEP]"});
  CHECK(j["layer"] == 1);  // the default: the last layer
  CHECK(j["heads"] == std::vector<int>{0});
}
