// Fuzz target: the input as a .encrt model file. Model::from_buffer must accept it or refuse it
// with a Status; a model it accepts must plan a session at batch 1 and run a tiny input (ids in
// range, a padded token, token types), give every output, refuse an id outside the vocabulary,
// and, when the file carries a vocabulary, tokenize a text into ids the session runs.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "fuzz/fuzz_check.h"

namespace {

using encrt::fuzz::require;

// Models whose arena at batch 1 x 3 tokens would exceed this are skipped (not run) so that the
// fuzzer stays within its memory limit; the runtime's own bound is far larger.
constexpr size_t kMaxArenaBytes = size_t{64} << 20;

void run_outputs(encrt::Session& session) {
  for (const std::string& name : session.output_names()) {
    encrt::OutputInfo info;
    const encrt::Status s = session.output(name, &info);
    require(s.is_ok(), "every output of a run can be described", s.message().c_str());
    std::vector<unsigned char> host(info.bytes);
    const encrt::Status c = session.copy_output(name, host.data(), host.size());
    require(c.is_ok(), "every output of a run can be copied", c.message().c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const encrt::fuzz::AlignedCopy file(data, size);
  if (!file.data()) return 0;
  std::unique_ptr<encrt::Model> model;
  if (!encrt::Model::from_buffer(file.data(), file.size(), &model)) return 0;

  // What inspect shows: every accessor over the file's tables.
  (void)model->tensors();
  (void)model->metadata();
  encrt::HeadInfo head;
  (void)model->head(&head);
  const encrt::ModelConfig& c = model->config();

  encrt::SessionOptions opt;
  opt.max_batch = 1;
  opt.max_seq = std::min(3, c.max_seq_len);
  opt.threads = 1;
  opt.backend = "cpu";
  size_t arena = 0;
  const encrt::Status planned = encrt::Session::arena_size(*model, opt, &arena);
  require(planned.is_ok(), "a model that loads plans an arena at batch 1", planned.message().c_str());
  if (arena > kMaxArenaBytes) return 0;
  std::unique_ptr<encrt::Session> session;
  const encrt::Status created = encrt::Session::create(*model, opt, &session);
  require(created.is_ok(), "a model that loads gets a session at batch 1", created.message().c_str());

  const int seq = opt.max_seq;
  std::vector<int32_t> ids(static_cast<size_t>(seq)), mask(ids.size(), 1), types(ids.size(), 0);
  for (int i = 0; i < seq; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>((size + 7919u * i) % c.vocab_size);
  if (seq > 1) mask.back() = 0;  // one padded token
  if (c.type_vocab_size > 1) types.back() = 1;
  encrt::Inputs in;
  in.batch = 1;
  in.seq = seq;
  in.input_ids = ids.data();
  in.attention_mask = mask.data();
  in.token_type_ids = types.data();
  const encrt::Status ran = session->run(in);
  require(ran.is_ok(), "a model that loads runs ids in range", ran.message().c_str());
  run_outputs(*session);

  for (int32_t bad : {c.vocab_size, -1}) {
    ids.front() = bad;
    const encrt::Status refused = session->run(in);
    require(!refused.is_ok() && refused.code() == encrt::StatusCode::kInvalidArgument,
            "an id outside the vocabulary is refused", refused.message().c_str());
  }

  std::unique_ptr<encrt::Tokenizer> tokenizer;
  if (model->vocabulary().empty() || !encrt::Tokenizer::create(*model, &tokenizer)) return 0;
  encrt::EncodeOptions eo;
  eo.max_length = std::max(2, seq);
  encrt::Encoding enc;
  if (!tokenizer->encode("Hello, w\xc3\xb6rld! \xe4\xbd\xa0 [SEP] x", eo, &enc)) return 0;
  if (enc.size() > static_cast<size_t>(seq)) return 0;  // a max_seq of 1 leaves no room for [CLS] [SEP]
  in.seq = static_cast<int>(enc.size());
  in.input_ids = enc.ids.data();
  in.attention_mask = enc.attention_mask.data();
  in.token_type_ids = nullptr;
  const encrt::Status text = session->run(in);
  require(text.is_ok(), "the model's own tokenizer gives ids its session runs", text.message().c_str());
  return 0;
}
