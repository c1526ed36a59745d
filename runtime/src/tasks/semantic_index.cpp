// SemanticIndex: the sentences' embeddings once, then one query embedding and a scan per search.
#include "encrt/tasks.hpp"

namespace encrt {

struct SemanticIndex::Impl {
  TextEmbedder* embedder = nullptr;
  std::vector<std::string> sentences;
  std::vector<float> embeddings;
  std::vector<float> query;
};

SemanticIndex::SemanticIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SemanticIndex::~SemanticIndex() = default;

Status SemanticIndex::create(TextEmbedder* embedder, std::vector<std::string> sentences,
                             std::unique_ptr<SemanticIndex>* out) {
  if (!embedder || !out) return invalid_argument("SemanticIndex::create: embedder or out is null");
  out->reset();
  std::vector<float> embeddings;
  if (Status s = embedder->embed(sentences, &embeddings); !s) return s;
  return from_embeddings(embedder, std::move(sentences), std::move(embeddings), out);
}

Status SemanticIndex::from_embeddings(TextEmbedder* embedder, std::vector<std::string> sentences,
                                      std::vector<float> embeddings, std::unique_ptr<SemanticIndex>* out) {
  if (!embedder || !out) return invalid_argument("SemanticIndex::from_embeddings: embedder or out is null");
  out->reset();
  const size_t want = sentences.size() * static_cast<size_t>(embedder->dimension());
  if (embeddings.size() != want) {
    return invalid_argument("SemanticIndex: " + std::to_string(embeddings.size()) + " embedding values for " +
                            std::to_string(sentences.size()) + " sentences of dimension " +
                            std::to_string(embedder->dimension()) + " (want " + std::to_string(want) + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->embedder = embedder;
  impl->sentences = std::move(sentences);
  impl->embeddings = std::move(embeddings);
  out->reset(new SemanticIndex(std::move(impl)));
  return Status::ok();
}

Status SemanticIndex::search(const std::string& query, size_t k, std::vector<SearchHit>* hits) {
  if (!hits) return invalid_argument("SemanticIndex::search: hits is null");
  Impl& m = *impl_;
  if (Status s = m.embedder->embed({query}, &m.query); !s) return s;
  return nearest(m.embeddings.data(), m.sentences.size(), m.embedder->dimension(), m.query.data(), k, hits);
}

size_t SemanticIndex::size() const { return impl_->sentences.size(); }
const std::string& SemanticIndex::sentence(size_t index) const {
  static const std::string kNone;
  return index < impl_->sentences.size() ? impl_->sentences[index] : kNone;
}
const std::vector<float>& SemanticIndex::embeddings() const { return impl_->embeddings; }

}  // namespace encrt
