// The C++ tokenizer on a small hand-made vocabulary, with expectations worked out by hand: the
// normalization steps, special tokens in the text, WordPiece splits and [UNK], truncation, the
// file's settings (lowercasing, accent stripping), bad UTF-8, pairs, truncation strategies, offsets,
// word ids, batches and the C API. Agreement with Hugging Face on a real vocabulary and thousands of
// texts and pairs is tests/e2e/tokenizer_check.py and tests/e2e/tokenizer_pairs_check.py.
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
#include "text/truncation.h"

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

namespace {

Encoding encode_full(const Tokenizer& t, const std::string& text, EncodeOptions opt = {}) {
  Encoding e;
  const Status s = t.encode(text, opt, &e);
  INFO(text << ": " << s.to_string());
  REQUIRE(s.is_ok());
  return e;
}

Encoding encode_pair(const Tokenizer& t, const std::string& a, const std::string& b, EncodeOptions opt = {}) {
  Encoding e;
  const Status s = t.encode_pair(a, b, opt, &e);
  INFO(a << " / " << b << ": " << s.to_string());
  REQUIRE(s.is_ok());
  return e;
}

std::vector<std::pair<size_t, size_t>> spans(const Encoding& e) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const TextSpan& s : e.offsets) out.emplace_back(s.start, s.end);
  return out;
}

EncodeOptions limit(int max_length, Truncation truncation = Truncation::kLongestFirst) {
  EncodeOptions opt;
  opt.max_length = max_length;
  opt.truncation = truncation;
  return opt;
}

using V = std::vector<int32_t>;
using Spans = std::vector<std::pair<size_t, size_t>>;

}  // namespace

TEST_CASE("tokenizer: offsets are UTF-8 byte spans of the original text, with word ids", "[tokenizer][offsets]") {
  const Loaded l = load(model_with_vocab("offsets", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  const std::string text = "Hello, unaffable NAÏVE!";  // Ï is two bytes
  const Encoding e = encode_full(t, text);
  CHECK(e.ids == V{kCls, kHello, kComma, kUn, kAff, kAble, kNaive, kBang, kSep});
  CHECK(spans(e) == Spans{{0, 0}, {0, 5}, {5, 6}, {7, 9}, {9, 12}, {12, 16}, {17, 23}, {23, 24}, {0, 0}});
  CHECK(text.substr(17, 23 - 17) == "NAÏVE");
  CHECK(e.word_ids == V{-1, 0, 1, 2, 2, 2, 3, 4, -1});
  CHECK(e.sequence_ids == V{-1, 0, 0, 0, 0, 0, 0, 0, -1});
  CHECK(e.token_type_ids == V(9, 0));
  CHECK(e.attention_mask == V(9, 1));
  CHECK(e.special_tokens_mask == V{1, 0, 0, 0, 0, 0, 0, 0, 1});
  CHECK(e.tokens == std::vector<std::string>{"[CLS]", "hello", ",", "un", "##aff", "##able", "naive", "!", "[SEP]"});

  // A removed control character inside a word stays inside the word's span; CJK characters are
  // words of their own (three bytes each); a special token written in the text is a word of its
  // own with its real span and is not an added special token.
  const Encoding ctrl = encode_full(t, "hel\x01lo");
  CHECK(ctrl.ids == V{kCls, kHello, kSep});
  CHECK(spans(ctrl)[1] == std::pair<size_t, size_t>{0, 6});
  const Encoding cjk = encode_full(t, "你好");
  CHECK(cjk.ids == V{kCls, kNi, kUnk, kSep});
  CHECK(spans(cjk) == Spans{{0, 0}, {0, 3}, {3, 6}, {0, 0}});
  CHECK(cjk.word_ids == V{-1, 0, 1, -1});
  const Encoding mask = encode_full(t, "a[MASK]a");
  CHECK(mask.ids == V{kCls, kA, kMask, kA, kSep});
  CHECK(spans(mask) == Spans{{0, 0}, {0, 1}, {1, 7}, {7, 8}, {0, 0}});
  CHECK(mask.word_ids == V{-1, 0, 1, 2, -1});
  CHECK(mask.special_tokens_mask == V{1, 0, 0, 0, 1});
  // An unknown word spans the whole word; "café" with its two-byte é is five bytes.
  const Encoding unk = encode_full(t, " unaffablex café");
  CHECK(unk.ids == V{kCls, kUnk, kCafe, kSep});
  CHECK(spans(unk) == Spans{{0, 0}, {1, 11}, {12, 17}, {0, 0}});
  // Empty and whitespace-only texts: the special tokens alone.
  for (const char* empty : {"", " \t "}) {
    const Encoding none = encode_full(t, empty);
    CHECK(none.ids == V{kCls, kSep});
    CHECK(none.word_ids == V{-1, -1});
  }
}

TEST_CASE("tokenizer: pairs: [CLS] a [SEP] b [SEP] with token types, offsets into each text", "[tokenizer][pairs]") {
  const Loaded l = load(model_with_vocab("pairs", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  const Encoding e = encode_pair(t, "hello world", "don't");
  CHECK(e.ids == V{kCls, kHello, kWorld, kSep, kDon, kQuote, kT, kSep});
  CHECK(e.token_type_ids == V{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(e.sequence_ids == V{-1, 0, 0, -1, 1, 1, 1, -1});
  CHECK(e.word_ids == V{-1, 0, 1, -1, 0, 1, 2, -1});
  CHECK(e.special_tokens_mask == V{1, 0, 0, 1, 0, 0, 0, 1});
  CHECK(spans(e) == Spans{{0, 0}, {0, 5}, {6, 11}, {0, 0}, {0, 3}, {3, 4}, {4, 5}, {0, 0}});
  // An empty side is no tokens, its [SEP] still there.
  CHECK(encode_pair(t, "", "hello").ids == V{kCls, kSep, kHello, kSep});
  CHECK(encode_pair(t, "", "hello").token_type_ids == V{0, 0, 1, 1});
  CHECK(encode_pair(t, "hello", " ").ids == V{kCls, kHello, kSep, kSep});
  CHECK(encode_pair(t, "", "").ids == V{kCls, kSep, kSep});
}

TEST_CASE("tokenizer: truncation of pairs, Hugging Face's strategies", "[tokenizer][truncation]") {
  const Loaded l = load(model_with_vocab("pair_truncation", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  const std::string five = "a a a a a", two = "hello world";
  // longest_first, max_length 7 (4 for the texts): the shorter (2) fits in half, so it stays whole.
  CHECK(encode_pair(t, five, two, limit(7)).ids == V{kCls, kA, kA, kSep, kHello, kWorld, kSep});
  CHECK(encode_pair(t, two, five, limit(6)).ids == V{kCls, kHello, kSep, kA, kA, kSep});  // halves: 1 + 2
  CHECK(encode_pair(t, five, five, limit(8)).ids == V{kCls, kA, kA, kSep, kA, kA, kA, kSep});  // tie: odd one to the second
  CHECK(encode_pair(t, five, two, limit(100)).size() == 10);  // all fits: nothing cut
  CHECK(encode_pair(t, five, two, limit(7, Truncation::kOnlyFirst)).ids == V{kCls, kA, kA, kSep, kHello, kWorld, kSep});
  CHECK(encode_pair(t, two, five, limit(7, Truncation::kOnlySecond)).ids == V{kCls, kHello, kWorld, kSep, kA, kA, kSep});
  // max_length 3 leaves no room for text: both sides go, whatever the strategy (as Hugging Face).
  for (Truncation s : {Truncation::kLongestFirst, Truncation::kOnlyFirst, Truncation::kOnlySecond})
    CHECK(encode_pair(t, five, two, limit(3, s)).ids == V{kCls, kSep, kSep});

  Encoding e;
  // only_second must take 3 of the second text's 2 tokens: Hugging Face's "too short" error.
  Status s = t.encode_pair(five, two, limit(7, Truncation::kOnlySecond), &e);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("only_second") != std::string::npos);
  CHECK(t.encode_pair(two, five, limit(5, Truncation::kOnlyFirst), &e).code() == StatusCode::kInvalidArgument);
  CHECK(t.encode("hello", limit(8, Truncation::kOnlySecond), &e).code() == StatusCode::kInvalidArgument);
  // Too small for the special tokens: an error naming max_length.
  s = t.encode_pair(five, two, limit(2), &e);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("max_length") != std::string::npos);
  CHECK(t.encode("hello", limit(1), &e).code() == StatusCode::kInvalidArgument);
  CHECK(encode_full(t, "hello", limit(2)).ids == V{kCls, kSep});
  CHECK(t.encode("hello", limit(-1), &e).code() == StatusCode::kInvalidArgument);
  CHECK(t.encode("hello", EncodeOptions(), nullptr).code() == StatusCode::kInvalidArgument);
  CHECK(t.encode_pair("a", "b", EncodeOptions(), nullptr).code() == StatusCode::kInvalidArgument);

  // Single texts cut as encode() always has; truncation off makes a long text an error instead.
  CHECK(encode_full(t, "hello world hello", limit(4)).ids == V{kCls, kHello, kWorld, kSep});
  EncodeOptions strict = limit(4);
  strict.truncate = false;
  s = t.encode("hello world hello", strict, &e);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("5 tokens, over max_length 4") != std::string::npos);
  CHECK(encode_full(t, "hello world", strict).size() == 4);
  // The default max_length is the model's max_seq_len.
  std::string many;
  for (int i = 0; i < l.model->config().max_seq_len + 10; ++i) many += "hello ";
  CHECK(static_cast<int>(encode_full(t, many).size()) == l.model->config().max_seq_len);
}

TEST_CASE("tokenizer: truncated_lengths: the rule itself", "[tokenizer][truncation]") {
  size_t a = 0, b = 0;
  auto kept = [&](size_t first, size_t second, size_t budget, Truncation s, bool pair = true) {
    REQUIRE(text::truncated_lengths(first, second, pair, budget, s, &a, &b).is_ok());
    return std::pair<size_t, size_t>{a, b};
  };
  using P = std::pair<size_t, size_t>;
  CHECK(kept(5, 3, 5, Truncation::kLongestFirst) == P{3, 2});  // halves, the longer gets the odd one
  CHECK(kept(3, 5, 5, Truncation::kLongestFirst) == P{2, 3});
  CHECK(kept(4, 4, 5, Truncation::kLongestFirst) == P{2, 3});  // a tie: the second
  CHECK(kept(2, 9, 6, Truncation::kLongestFirst) == P{2, 4});  // the shorter fits in half: kept whole
  CHECK(kept(9, 2, 6, Truncation::kLongestFirst) == P{4, 2});
  CHECK(kept(9, 7, 4, Truncation::kLongestFirst) == P{2, 2});  // both over the budget
  CHECK(kept(9, 0, 4, Truncation::kLongestFirst, false) == P{4, 0});
  CHECK(kept(9, 2, 6, Truncation::kOnlyFirst) == P{4, 2});
  CHECK(kept(2, 9, 6, Truncation::kOnlySecond) == P{2, 4});
  CHECK(kept(3, 3, 0, Truncation::kOnlySecond) == P{0, 0});
  CHECK(kept(3, 3, 6, Truncation::kOnlySecond) == P{3, 3});
  CHECK(!text::truncated_lengths(2, 9, true, 6, Truncation::kOnlyFirst, &a, &b).is_ok());  // 5 to cut from 2
  CHECK(!text::truncated_lengths(5, 3, true, 5, Truncation::kOnlySecond, &a, &b).is_ok());  // 3 to cut from 3: all
  CHECK(!text::truncated_lengths(5, 0, false, 9, Truncation::kOnlySecond, &a, &b).is_ok());  // no second text
}

TEST_CASE("tokenizer: truncation names", "[tokenizer][truncation]") {
  Truncation t = Truncation::kLongestFirst;
  for (Truncation want : {Truncation::kLongestFirst, Truncation::kOnlyFirst, Truncation::kOnlySecond}) {
    REQUIRE(parse_truncation(truncation_name(want), &t).is_ok());
    CHECK(t == want);
  }
  const Status s = parse_truncation("longest", &t);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("longest_first") != std::string::npos);
  CHECK(parse_truncation("only_first", nullptr).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("tokenizer: batches padded to the longest", "[tokenizer][batch]") {
  const Loaded l = load(model_with_vocab("batch", R"({"do_lower_case": true})"));
  const Tokenizer& t = *l.tokenizer;
  BatchEncoding b;
  REQUIRE(t.encode_batch({"hello", "hello world !", ""}, EncodeOptions(), &b).is_ok());
  REQUIRE(b.batch == 3);
  REQUIRE(b.seq == 5);
  CHECK(b.input_ids == V{kCls, kHello, kSep, kPad, kPad, kCls, kHello, kWorld, kBang, kSep, kCls, kSep, kPad, kPad, kPad});
  CHECK(b.attention_mask == V{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0});
  CHECK(b.token_type_ids == V(15, 0));
  REQUIRE(b.rows.size() == 3);
  CHECK(b.rows[0].special_tokens_mask == V{1, 0, 1, 1, 1});
  CHECK(b.rows[0].word_ids == V{-1, 0, -1, -1, -1});
  CHECK(b.rows[0].tokens[4] == "[PAD]");
  CHECK(b.rows[2].size() == 5);
  const Inputs in = b.inputs();
  CHECK(in.batch == 3);
  CHECK(in.seq == 5);
  CHECK(in.input_ids == b.input_ids.data());
  CHECK(in.attention_mask == b.attention_mask.data());
  CHECK(in.token_type_ids == b.token_type_ids.data());

  REQUIRE(t.encode_pair_batch({{"hello", "world"}, {"a a a", ""}}, limit(5), &b).is_ok());
  CHECK(b.seq == 5);
  CHECK(b.input_ids == V{kCls, kHello, kSep, kWorld, kSep, kCls, kA, kA, kSep, kSep});
  CHECK(b.token_type_ids == V{0, 0, 0, 1, 1, 0, 0, 0, 0, 1});
  CHECK(b.attention_mask == V(10, 1));

  // Errors name the row; an empty batch is an error.
  Status s = t.encode_batch({"ok", "bad \xff"}, EncodeOptions(), &b);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("text 1") != std::string::npos);
  s = t.encode_pair_batch({{"a", "b"}, {"hello world", "world"}}, limit(5, Truncation::kOnlySecond), &b);
  CHECK(s.message().find("pair 1") != std::string::npos);
  CHECK(t.encode_batch({}, EncodeOptions(), &b).code() == StatusCode::kInvalidArgument);
  CHECK(t.encode_pair_batch({}, EncodeOptions(), &b).code() == StatusCode::kInvalidArgument);
  CHECK(t.encode_batch({"a"}, EncodeOptions(), nullptr).code() == StatusCode::kInvalidArgument);
  CHECK(t.unk_id() == kUnk);
}

TEST_CASE("tokenizer C API: texts, pairs and batches with their arrays", "[tokenizer][c_api]") {
  const std::string path = model_with_vocab("c_api_pairs", "{}");
  encrt_model* model = nullptr;
  REQUIRE(encrt_model_load(path.c_str(), &model) == ENCRT_OK);
  encrt_tokenizer* tok = nullptr;
  REQUIRE(encrt_tokenizer_create(model, &tok) == ENCRT_OK);
  encrt_encode_options opt;
  encrt_encode_options_init(&opt);
  CHECK(opt.max_length == 0);
  CHECK(opt.truncate == 1);
  CHECK(opt.truncation == ENCRT_TRUNCATION_LONGEST_FIRST);

  int32_t ids[16], types[16], mask[16], special[16], words[16], seqs[16];
  size_t offsets[32];
  encrt_token_arrays out;
  encrt_token_arrays_init(&out);
  CHECK(out.ids == nullptr);
  out.capacity = 16;
  out.ids = ids;
  out.token_type_ids = types;
  out.attention_mask = mask;
  out.special_tokens_mask = special;
  out.word_ids = words;
  out.sequence_ids = seqs;
  out.offsets = offsets;
  size_t count = 0;
  REQUIRE(encrt_tokenizer_encode_text(tok, "Hello, World", "don't", &opt, &out, &count) == ENCRT_OK);
  REQUIRE(count == 9);
  CHECK(V(ids, ids + count) == V{kCls, kHello, kComma, kWorld, kSep, kDon, kQuote, kT, kSep});
  CHECK(V(types, types + count) == V{0, 0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(V(mask, mask + count) == V(9, 1));
  CHECK(V(words, words + count) == V{-1, 0, 1, 2, -1, 0, 1, 2, -1});
  CHECK(V(seqs, seqs + count) == V{-1, 0, 0, 0, -1, 1, 1, 1, -1});
  CHECK(V(special, special + count) == V{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(std::vector<size_t>(offsets, offsets + 2 * count) ==
        std::vector<size_t>{0, 0, 0, 5, 5, 6, 7, 12, 0, 0, 0, 3, 3, 4, 4, 5, 0, 0});
  // One text, default options; only ids asked for.
  encrt_token_arrays ids_only;
  encrt_token_arrays_init(&ids_only);
  ids_only.capacity = 16;
  ids_only.ids = ids;
  REQUIRE(encrt_tokenizer_encode_text(tok, "hello", nullptr, nullptr, &ids_only, &count) == ENCRT_OK);
  CHECK(V(ids, ids + count) == V{kCls, kHello, kSep});
  // Too small a capacity: the count still says how many are needed.
  ids_only.capacity = 2;
  CHECK(encrt_tokenizer_encode_text(tok, "hello", nullptr, nullptr, &ids_only, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(count == 3);
  CHECK(std::string(encrt_last_error()).find("capacity") != std::string::npos);
  // Truncation through the options, and its errors.
  opt.max_length = 5;
  opt.truncation = ENCRT_TRUNCATION_ONLY_FIRST;
  REQUIRE(encrt_tokenizer_encode_text(tok, "hello world hello", "world", &opt, &out, &count) == ENCRT_OK);
  CHECK(V(ids, ids + count) == V{kCls, kHello, kSep, kWorld, kSep});
  opt.truncation = ENCRT_TRUNCATION_ONLY_SECOND;
  CHECK(encrt_tokenizer_encode_text(tok, "hello world hello", "world", &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  opt.truncation = 7;
  CHECK(encrt_tokenizer_encode_text(tok, "a", nullptr, &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  encrt_encode_options_init(&opt);
  opt.truncate = 0;
  opt.max_length = 3;
  CHECK(encrt_tokenizer_encode_text(tok, "hello world", nullptr, &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  encrt_encode_options_init(&opt);
  opt.struct_size = 4;
  CHECK(encrt_tokenizer_encode_text(tok, "a", nullptr, &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  encrt_encode_options_init(&opt);
  // NULLs.
  CHECK(encrt_tokenizer_encode_text(nullptr, "a", nullptr, &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_text(tok, nullptr, "a", &opt, &out, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_text(tok, "a", nullptr, &opt, nullptr, &count) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_text(tok, "a", nullptr, &opt, &out, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_token_arrays no_ids;
  encrt_token_arrays_init(&no_ids);
  no_ids.capacity = 16;
  CHECK(encrt_tokenizer_encode_text(tok, "a", nullptr, &opt, &no_ids, &count) == ENCRT_INVALID_ARGUMENT);
  encrt_encode_options_init(nullptr);
  encrt_token_arrays_init(nullptr);

  // A batch of pairs, [batch, seq] row-major.
  const char* firsts[] = {"hello", "hello world !"};
  const char* seconds[] = {"world", ""};
  size_t seq = 0;
  REQUIRE(encrt_tokenizer_encode_batch(tok, firsts, seconds, 2, &opt, &out, &seq) == ENCRT_OK);
  REQUIRE(seq == 6);
  CHECK(V(ids, ids + 12) == V{kCls, kHello, kSep, kWorld, kSep, kPad, kCls, kHello, kWorld, kBang, kSep, kSep});
  CHECK(V(mask, mask + 12) == V{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1});
  CHECK(V(types, types + 12) == V{0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1});
  CHECK(offsets[2 * 7] == 0);
  CHECK(offsets[2 * 7 + 1] == 5);
  REQUIRE(encrt_tokenizer_encode_batch(tok, firsts, nullptr, 2, nullptr, &out, &seq) == ENCRT_OK);
  CHECK(seq == 5);
  out.capacity = 9;
  CHECK(encrt_tokenizer_encode_batch(tok, firsts, nullptr, 2, nullptr, &out, &seq) == ENCRT_INVALID_ARGUMENT);
  CHECK(seq == 5);
  const char* with_null[] = {"a", nullptr};
  CHECK(encrt_tokenizer_encode_batch(tok, with_null, nullptr, 2, nullptr, &out, &seq) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_batch(tok, firsts, with_null, 2, nullptr, &out, &seq) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_batch(tok, firsts, nullptr, 0, nullptr, &out, &seq) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_batch(tok, nullptr, nullptr, 2, nullptr, &out, &seq) == ENCRT_INVALID_ARGUMENT);
  CHECK(encrt_tokenizer_encode_batch(tok, firsts, nullptr, 2, nullptr, &out, nullptr) == ENCRT_INVALID_ARGUMENT);
  encrt_tokenizer_free(tok);
  encrt_model_free(model);
}
