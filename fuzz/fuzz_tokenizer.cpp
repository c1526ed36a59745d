// Fuzz target: the tokenizer on arbitrary bytes, as single texts, pairs and padded batches, with
// the truncation strategy, truncation on/off and max_length taken from the first two bytes, over
// four small vocabularies (cased and uncased, accents kept or stripped, CJK splitting on or off,
// one without [CLS], [SEP] and [PAD]). The models are built once, in memory, by the converter.
// Besides "no crash", every encoding must be consistent: arrays of one length, ids in the
// vocabulary, tokens spelling their ids, offsets inside their text, the length limit kept, and an
// untruncated encoding equal to [CLS] + tokenize(text) + [SEP].
//
// Input: byte 0 = variant (bits 0-1), mode (bits 2-3: text, pair, batch of texts, batch of pairs),
// truncation strategy (bits 4-5; 3 is no strategy and must be refused), truncation off (bit 6);
// byte 1 = max_length (0: the model's max_seq_len; 250..255: -6..-1, which must be refused); the
// rest = the texts, split at NUL bytes (a pair at the first; a batch at each, at most 8 texts).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "converter/convert.h"
#include "encrt/encrt.hpp"
#include "fuzz/fuzz_check.h"

namespace {

using encrt::fuzz::require;

constexpr int kMaxSeqLen = 64;
constexpr size_t kMaxBatch = 8;

// Word pieces that meet the normalizer's cases: accents (composed "é" and its stripped "e"),
// CJK, punctuation, a cased word, continuation pieces, an empty line and a duplicate (both can
// come from a vocab.txt).
const std::vector<std::string> kWords = {
    "hello", "world", "Hello", "##s", "##ing", "un", "##aff", "##able", "a", "##a", "caf", "##e", "##\xc3\xa9",
    "\xc3\xa9", "na\xc3\xafve", "naive", "\xc3\xbc" "ber", "uber", "\xe4\xbd\xa0", "\xe5\xa5\xbd", "!", ",", ".",
    "'", "-", "x", "##x", "[unused0]", "", "hello", "\xce\xb1\xce\xb2", "##\xe2\x80\x8d"};

struct Variant {
  bool do_lower_case;
  encrt::converter::Vocabulary::StripAccents strip;
  bool chinese_chars;
  bool specials;  // [PAD] [UNK] [CLS] [SEP] [MASK] in the vocabulary
};

constexpr Variant kVariants[4] = {
    {true, encrt::converter::Vocabulary::StripAccents::kFollowLowerCase, true, true},
    {false, encrt::converter::Vocabulary::StripAccents::kKeep, true, true},
    {true, encrt::converter::Vocabulary::StripAccents::kKeep, false, true},
    {false, encrt::converter::Vocabulary::StripAccents::kStrip, true, false},
};

// A one-layer BERT with hidden 8 over the variant's vocabulary, in a .encrt buffer.
std::vector<uint8_t> build_model(const Variant& v) {
  using namespace encrt::converter;
  SourceModel src;
  Vocabulary vocab;
  if (v.specials) vocab.tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  vocab.tokens.insert(vocab.tokens.end(), kWords.begin(), kWords.end());
  auto id_of = [&](const char* t) {
    auto it = std::find(vocab.tokens.begin(), vocab.tokens.end(), t);
    return it == vocab.tokens.end() ? -1 : static_cast<int32_t>(it - vocab.tokens.begin());
  };
  vocab.pad_id = id_of("[PAD]"), vocab.unk_id = id_of("[UNK]"), vocab.cls_id = id_of("[CLS]");
  vocab.sep_id = id_of("[SEP]"), vocab.mask_id = id_of("[MASK]");
  vocab.do_lower_case = v.do_lower_case;
  vocab.strip_accents = v.strip;
  vocab.tokenize_chinese_chars = v.chinese_chars;
  SourceConfig& c = src.config;
  c.architecture = Architecture::kBert;
  c.vocab_size = static_cast<int>(vocab.tokens.size());
  c.hidden_size = 8, c.num_heads = 2, c.num_layers = 1, c.ffn_size = 16;
  c.max_seq_len = kMaxSeqLen, c.type_vocab_size = 2, c.embedding_norm = true;
  for (const auto& [name, shape] : expected_tensor_shapes(c)) {
    FloatTensor& t = src.tensors[name];
    t.shape = shape;
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    t.data.resize(n);
    for (size_t i = 0; i < n; ++i) t.data[i] = 0.01f * static_cast<float>(static_cast<int>(i % 17) - 8);
  }
  src.vocabulary = std::move(vocab);
  ConvertOptions opt;
  opt.output_path = "in-memory.encrt";  // build_model writes nothing; the path names the result
  std::vector<uint8_t> bytes;
  const encrt::Status s = encrt::converter::build_model(src, opt, &bytes);
  require(s.is_ok(), "the tokenizer fuzzer's model builds", s.message().c_str());
  return bytes;
}

struct Loaded {
  std::unique_ptr<encrt::fuzz::AlignedCopy> file;
  std::unique_ptr<encrt::Model> model;
  std::unique_ptr<encrt::Tokenizer> tokenizer;
};

const Loaded& tokenizer_for(int variant) {
  static Loaded loaded[4];
  Loaded& l = loaded[variant];
  if (!l.tokenizer) {
    const std::vector<uint8_t> bytes = build_model(kVariants[variant]);
    l.file = std::make_unique<encrt::fuzz::AlignedCopy>(bytes.data(), bytes.size());
    encrt::Status s = encrt::Model::from_buffer(l.file->data(), l.file->size(), &l.model);
    require(s.is_ok(), "the tokenizer fuzzer's model loads", s.message().c_str());
    s = encrt::Tokenizer::create(*l.model, &l.tokenizer);
    require(s.is_ok(), "the tokenizer fuzzer's model has a tokenizer", s.message().c_str());
  }
  return l;
}

// The length an encoding may have: max_length, or the model's when it is 0.
size_t length_limit(const encrt::EncodeOptions& o) {
  return static_cast<size_t>(o.max_length == 0 ? kMaxSeqLen : o.max_length);
}

// One text's or pair's encoding (before padding: `padded` tokens at its end are [PAD]).
void check_encoding(const encrt::Model& model, const encrt::Encoding& e, const std::string& first,
                    const std::string* second, const encrt::EncodeOptions& o, size_t padded) {
  const std::vector<std::string>& vocab = model.vocabulary();
  const size_t n = e.ids.size();
  require(e.token_type_ids.size() == n && e.attention_mask.size() == n && e.special_tokens_mask.size() == n &&
              e.offsets.size() == n && e.word_ids.size() == n && e.sequence_ids.size() == n && e.tokens.size() == n,
          "an encoding's arrays have one entry per token");
  require(n >= padded, "padding is at most the row");
  if (o.truncate) require(n - padded <= length_limit(o), "an encoding keeps max_length");
  for (size_t i = 0; i < n; ++i) {
    require(e.ids[i] >= 0 && static_cast<size_t>(e.ids[i]) < vocab.size(), "ids are in the vocabulary");
    require(e.tokens[i] == vocab[static_cast<size_t>(e.ids[i])], "tokens spell their ids");
    const int32_t seq = e.sequence_ids[i];
    require(seq >= -1 && seq <= (second ? 1 : 0), "sequence ids name the texts");
    const std::string& text = seq == 1 ? *second : first;
    require(e.offsets[i].start <= e.offsets[i].end && e.offsets[i].end <= text.size(), "offsets lie in their text");
    require(e.attention_mask[i] == (i < n - padded ? 1 : 0), "the mask marks the tokens");
  }
}

// [CLS] + pieces + [SEP] when the vocabulary has them (ids 2 and 3), else the pieces alone.
std::vector<int32_t> with_specials(bool specials, const std::vector<int32_t>& pieces) {
  std::vector<int32_t> ids;
  if (specials) ids.push_back(2);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  if (specials) ids.push_back(3);
  return ids;
}

void single(const Loaded& l, bool specials, const std::string& text, const encrt::EncodeOptions& o) {
  encrt::Encoding e;
  if (!l.tokenizer->encode(text, o, &e)) return;
  check_encoding(*l.model, e, text, nullptr, o, 0);
  std::vector<int32_t> pieces;
  const encrt::Status t = l.tokenizer->tokenize(text, &pieces);
  require(t.is_ok(), "a text that encodes tokenizes", t.message().c_str());
  if (e.size() < length_limit(o) || !o.truncate)
    require(e.ids == with_specials(specials, pieces), "an uncut encoding is [CLS] + tokenize(text) + [SEP]");
  std::vector<int32_t> ids;
  if (l.tokenizer->encode(text, o.max_length == 0 ? kMaxSeqLen : o.max_length, &ids).is_ok() && o.truncate &&
      o.truncation == encrt::Truncation::kLongestFirst)
    require(ids == e.ids, "encode(text, max_length) gives the ids of encode(text, options)");
}

void pair(const Loaded& l, const std::string& a, const std::string& b, const encrt::EncodeOptions& o) {
  encrt::Encoding e;
  if (!l.tokenizer->encode_pair(a, b, o, &e)) return;
  check_encoding(*l.model, e, a, &b, o, 0);
}

void batch(const Loaded& l, const std::vector<std::string>& texts, bool pairs, const encrt::EncodeOptions& o) {
  encrt::BatchEncoding be;
  std::vector<std::pair<std::string, std::string>> pair_list;
  for (size_t i = 0; i + 1 < texts.size(); i += 2) pair_list.emplace_back(texts[i], texts[i + 1]);
  if (pairs && pair_list.empty()) return;
  const encrt::Status s = pairs ? l.tokenizer->encode_pair_batch(pair_list, o, &be) : l.tokenizer->encode_batch(texts, o, &be);
  if (!s) return;
  const size_t rows = pairs ? pair_list.size() : texts.size();
  require(be.batch == static_cast<int>(rows) && be.rows.size() == rows, "a batch has a row per text");
  const size_t cells = rows * static_cast<size_t>(be.seq);
  require(be.input_ids.size() == cells && be.attention_mask.size() == cells && be.token_type_ids.size() == cells,
          "a batch's arrays are [batch, seq]");
  for (size_t r = 0; r < rows; ++r) {
    const encrt::Encoding& e = be.rows[r];
    require(e.size() == static_cast<size_t>(be.seq), "every row is padded to seq");
    size_t padded = 0;
    while (padded < e.size() && e.attention_mask[e.size() - 1 - padded] == 0) ++padded;
    if (pairs) check_encoding(*l.model, e, pair_list[r].first, &pair_list[r].second, o, padded);
    else check_encoding(*l.model, e, texts[r], nullptr, o, padded);
    require(std::equal(e.ids.begin(), e.ids.end(), be.input_ids.begin() + static_cast<long>(r * be.seq)),
            "input_ids hold the rows' ids");
  }
  // The tokenizer's ids run in a session of the model (the run checks every id).
  encrt::SessionOptions so;
  so.max_batch = be.batch;
  so.max_seq = be.seq;
  so.backend = "cpu";
  std::unique_ptr<encrt::Session> session;
  if (be.seq > kMaxSeqLen || !encrt::Session::create(*l.model, so, &session)) return;
  const encrt::Status ran = session->run(be.inputs());
  require(ran.is_ok(), "a batch encoding runs", ran.message().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int variant = data[0] & 3;
  const Loaded& l = tokenizer_for(variant);
  const int mode = (data[0] >> 2) & 3;
  encrt::EncodeOptions o;
  o.truncation = static_cast<encrt::Truncation>((data[0] >> 4) & 3);
  o.truncate = (data[0] & 0x40) == 0;
  o.max_length = data[1] < 250 ? data[1] : data[1] - 256;
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);

  if (o.max_length < 0 || static_cast<uint8_t>(o.truncation) > 2) {
    encrt::Encoding e;
    require(!l.tokenizer->encode(rest, o, &e).is_ok(), "a negative max_length or an unknown strategy is refused");
    return 0;
  }
  if (mode == 0) {
    single(l, kVariants[variant].specials, rest, o);
    return 0;
  }
  if (mode == 1) {
    const size_t cut = rest.find('\0');
    if (cut == std::string::npos) pair(l, rest, "", o);
    else pair(l, rest.substr(0, cut), rest.substr(cut + 1), o);
    return 0;
  }
  std::vector<std::string> texts;
  size_t start = 0;
  while (texts.size() < kMaxBatch) {
    const size_t cut = rest.find('\0', start);
    texts.push_back(rest.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos) break;
    start = cut + 1;
  }
  batch(l, texts, mode == 3, o);
  return 0;
}
