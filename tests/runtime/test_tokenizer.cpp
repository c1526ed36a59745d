// The C++ tokenizer on a small hand-made vocabulary, with expectations worked out by hand: the
// normalization steps, special tokens in the text, WordPiece splits and [UNK], truncation, the
// file's settings (lowercasing, accent stripping), bad UTF-8, and the C API. Agreement with
// Hugging Face on a real vocabulary and thousands of texts is tests/e2e/tokenizer_check.py.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "encrt/encrt.h"
#include "encrt/encrt.hpp"
#include "support/fixtures.h"

using namespace encrt;

namespace {

const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "un", "##aff", "##able",
    "naive", "你", "a", "##a", "'", "t", "don", "cafe", "Hello"};
enum : int32_t { kPad, kUnk, kCls, kSep, kMask, kHello, kWorld, kComma, kBang, kUn, kAff, kAble, kNaive, kNi,
                 kA, kSubA, kQuote, kT, kDon, kCafe, kHelloCased };

// Converts the bert_plain fixture with kVocab and the given tokenizer_config.json; returns its path.
std::string model_with_vocab(const std::string& name, const std::string& tokenizer_config) {
  namespace fs = std::filesystem;
  const fs::path dir = test::tmp_path("tokenizer_" + name);
  fs::create_directories(dir);
  const fs::path src = std::string(ENCRT_FIXTURES_DIR) + "/bert_plain";
  for (const char* f : {"config.json", "model.safetensors"})
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  std::ofstream(dir / "vocab.txt") << [] {
    std::string s;
    for (const std::string& t : kVocab) s += t + "\n";
    return s;
  }();
  std::ofstream(dir / "tokenizer_config.json") << tokenizer_config;
  converter::ConvertOptions opt;
  opt.source_dir = dir.string();
  opt.output_path = (dir / "model.encrt").string();
  const Status s = converter::convert(opt);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return opt.output_path;
}

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

Loaded load(const std::string& path) {
  Loaded l;
  REQUIRE(Model::load(path, &l.model).is_ok());
  const Status s = Tokenizer::create(*l.model, &l.tokenizer);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return l;
}

std::vector<int32_t> encode(const Tokenizer& t, const std::string& text, int max_length = 64) {
  std::vector<int32_t> ids;
  const Status s = t.encode(text, max_length, &ids);
  INFO(text << ": " << s.to_string());
  REQUIRE(s.is_ok());
  return ids;
}

}  // namespace

TEST_CASE("tokenizer: normalization, special tokens, word pieces and [UNK]", "[tokenizer]") {
  const Loaded l = load(model_with_vocab("uncased", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  using V = std::vector<int32_t>;
  CHECK(encode(t, "Hello, World!") == V{kCls, kHello, kComma, kWorld, kBang, kSep});
  CHECK(encode(t, "unaffable") == V{kCls, kUn, kAff, kAble, kSep});
  CHECK(encode(t, "NAÏVE Café") == V{kCls, kNaive, kCafe, kSep});             // stripped and lowercased
  CHECK(encode(t, "你好") == V{kCls, kNi, kUnk, kSep});                        // CJK: one word per character
  CHECK(encode(t, "hello[MASK]world") == V{kCls, kHello, kMask, kWorld, kSep});  // special token in the text
  CHECK(encode(t, "[mask]") == V{kCls, kUnk, kUnk, kUnk, kSep});  // specials match exactly: "[", "mask", "]"
  CHECK(encode(t, "\x01hello\tworld\xC2\xA0!") == V{kCls, kHello, kWorld, kBang, kSep});  // control, tab, nbsp
  CHECK(encode(t, "don't") == V{kCls, kDon, kQuote, kT, kSep});
  CHECK(encode(t, "unaffablex") == V{kCls, kUnk, kSep});                      // no split for the tail: [UNK]
  CHECK(encode(t, std::string(100, 'a'), 128) == [] {
    V v{kCls, kA};
    v.insert(v.end(), 99, kSubA);
    v.push_back(kSep);
    return v;
  }());
  CHECK(encode(t, std::string(101, 'a')) == V{kCls, kUnk, kSep});             // over 100 characters
  CHECK(encode(t, "") == V{kCls, kSep});
  CHECK(encode(t, " \t ") == V{kCls, kSep});
}

TEST_CASE("tokenizer: truncation and max_length", "[tokenizer]") {
  const Loaded l = load(model_with_vocab("truncation", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  CHECK(encode(t, "hello world hello", 4) == std::vector<int32_t>{kCls, kHello, kWorld, kSep});
  CHECK(encode(t, "hello world hello", 3) == std::vector<int32_t>{kCls, kHello, kSep});
  std::vector<int32_t> ids;
  const Status s = t.encode("hello", 2, &ids);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("max_length") != std::string::npos);
  std::vector<int32_t> pieces;
  REQUIRE(t.tokenize("hello world", &pieces).is_ok());
  CHECK(pieces == std::vector<int32_t>{kHello, kWorld});
  CHECK(t.pad_id() == kPad);
}

TEST_CASE("tokenizer: the file's settings: cased, accents kept", "[tokenizer]") {
  const Loaded cased = load(model_with_vocab("cased", R"({"do_lower_case": false})"));
  CHECK(encode(*cased.tokenizer, "Hello hello") == std::vector<int32_t>{kCls, kHelloCased, kHello, kSep});
  // strip_accents null follows do_lower_case: a cased tokenizer keeps accents.
  CHECK(encode(*cased.tokenizer, "naïve") == std::vector<int32_t>{kCls, kUnk, kSep});
  const Loaded keep = load(model_with_vocab("keep_accents", R"({"do_lower_case": true, "strip_accents": false})"));
  CHECK(encode(*keep.tokenizer, "NAÏVE naive") == std::vector<int32_t>{kCls, kUnk, kNaive, kSep});
  const Loaded strip = load(model_with_vocab("strip_cased", R"({"do_lower_case": false, "strip_accents": true})"));
  CHECK(encode(*strip.tokenizer, "naïve") == std::vector<int32_t>{kCls, kNaive, kSep});
  const Loaded no_cjk = load(model_with_vocab("no_cjk", R"({"tokenize_chinese_chars": false})"));
  CHECK(encode(*no_cjk.tokenizer, "你你") == std::vector<int32_t>{kCls, kUnk, kSep});  // one word, no pieces
}

TEST_CASE("tokenizer: invalid UTF-8 is an error naming the offset", "[tokenizer][bad_input]") {
  const Loaded l = load(model_with_vocab("utf8", "{}"));
  for (const std::string& bad : {std::string("ab\xff"), std::string("\xC3"), std::string("\xC0\x80"),
                                 std::string("\xED\xA0\x80"), std::string("\xF4\x90\x80\x80"), std::string("a\x80")}) {
    std::vector<int32_t> ids;
    const Status s = l.tokenizer->encode(bad, 16, &ids);
    INFO(s.to_string());
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("UTF-8") != std::string::npos);
  }
  std::vector<int32_t> ids;
  CHECK(l.tokenizer->encode("ok", 16, nullptr).code() == StatusCode::kInvalidArgument);
  CHECK(l.tokenizer->tokenize("ok", nullptr).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("tokenizer: a model without a vocabulary says so", "[tokenizer][bad_input]") {
  const test::Fixture f = test::load_fixture("torch_post_relu");  // torch_encoder checkpoints have no vocab.txt
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kF32), &model).is_ok());
  std::unique_ptr<Tokenizer> tokenizer;
  const Status s = Tokenizer::create(*model, &tokenizer);
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message().find("vocabulary") != std::string::npos);
  CHECK(tokenizer == nullptr);
}

TEST_CASE("tokenizer C API: encode, capacity and NULLs", "[tokenizer][c_api]") {
  const std::string path = model_with_vocab("c_api", "{}");
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  encrt_tokenizer* tok = nullptr;
  CHECK(encrt_tokenizer_create(nullptr, &tok) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_create(model, nullptr) == ENCRT_INVALID_ARGUMENT);
  REQUIRE(encrt_tokenizer_create(model, &tok) == ENCRT_OK);
  int32_t ids[8];
  size_t count = 99;
  REQUIRE(encrt_tokenizer_encode(tok, "Hello, World!", 64, ids, 8, &count) == ENCRT_OK);
  CHECK(std::vector<int32_t>(ids, ids + count) == std::vector<int32_t>{kCls, kHello, kComma, kWorld, kBang, kSep});
  CHECK(encrt_tokenizer_encode(tok, "Hello, World!", 64, ids, 3, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(count == 6);  // how many are needed
  CHECK(std::string(encrt_last_error()).find("capacity") != std::string::npos);
  CHECK(encrt_tokenizer_encode(tok, nullptr, 64, ids, 8, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode(nullptr, "x", 64, ids, 8, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode(tok, "x", 64, nullptr, 8, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode(tok, "x", 64, ids, 8, nullptr) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode(tok, "\xff", 64, ids, 8, &count) == ENCRT_INVALID_ARGUMENT);
  encrt_tokenizer_free(tok);
  encrt_tokenizer_free(nullptr);
  encrt_model_free(model);
}

TEST_CASE("tokenizer: random bytes give ids or a UTF-8 error, never a crash", "[tokenizer][bad_input]") {
  const Loaded l = load(model_with_vocab("random_bytes", "{}"));
  std::mt19937 rng(7);
  int ok = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text(rng() % 64, '\0');
    // Half the texts from all bytes, half from bytes that often form valid multi-byte characters.
    for (char& c : text) c = static_cast<char>(i % 2 ? rng() % 256 : 0xC0 + rng() % 0x40 - (rng() % 2) * 0x80);
    std::vector<int32_t> ids;
    const Status s = l.tokenizer->encode(text, 128, &ids);
    if (s.is_ok()) {
      ++ok;
      REQUIRE(ids.size() >= 2);
      REQUIRE(ids.size() <= 128);
      for (int32_t id : ids) REQUIRE((id >= 0 && id < static_cast<int32_t>(kVocab.size())));
    } else {
      ++rejected;
      REQUIRE(s.code() == StatusCode::kInvalidArgument);
    }
  }
  INFO(ok << " encoded, " << rejected << " rejected");
  CHECK(ok > 0);
  CHECK(rejected > 0);
}
