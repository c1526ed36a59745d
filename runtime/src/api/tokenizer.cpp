#include "encrt/encrt.hpp"
#include "model/model_impl.h"
#include "text/bert_tokenizer.h"

namespace encrt {

struct Tokenizer::Impl {
  text::BertTokenizer wordpiece;
  int32_t pad_id;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Status Tokenizer::create(const Model& model, std::unique_ptr<Tokenizer>* out) {
  if (out == nullptr) return invalid_argument("Tokenizer::create: out is null");
  out->reset();
  const detail::ModelImpl& m = *model.impl_;
  if (m.vocabulary.empty())
    return Status(StatusCode::kUnsupported,
                  "this model file has no vocabulary (convert a checkpoint folder that has vocab.txt)");
  out->reset(new Tokenizer(std::make_unique<Impl>(Impl{text::BertTokenizer(m.vocabulary, m.tokenizer), m.tokenizer.pad_id})));
  return Status::ok();
}

Status Tokenizer::encode(const std::string& text, int max_length, std::vector<int32_t>* ids) const {
  return impl_->wordpiece.encode(text, max_length, ids);
}

Status Tokenizer::tokenize(const std::string& text, std::vector<int32_t>* ids) const {
  return impl_->wordpiece.tokenize(text, ids);
}

int32_t Tokenizer::pad_id() const { return impl_->pad_id; }

}  // namespace encrt
