// nearest(): exact top-k by dot product over unit rows, a partial sort of (score, index).
#include <algorithm>

#include "encrt/tasks.hpp"

namespace encrt {

Status nearest(const float* corpus, size_t count, int dim, const float* query, size_t k, std::vector<SearchHit>* hits) {
  if (!hits) return invalid_argument("nearest: hits is null");
  hits->clear();
  if (dim < 1) return invalid_argument("nearest: dim must be >= 1");
  if (count > 0 && (!corpus || !query)) return invalid_argument("nearest: corpus or query is null");
  std::vector<SearchHit> all(count);
  for (size_t i = 0; i < count; ++i) {
    const float* row = corpus + i * static_cast<size_t>(dim);
    double dot = 0.0;
    for (int d = 0; d < dim; ++d) dot += static_cast<double>(row[d]) * query[d];
    all[i] = SearchHit{i, static_cast<float>(dot)};
  }
  const size_t keep = std::min(k, count);
  auto better = [](const SearchHit& a, const SearchHit& b) {
    return a.score != b.score ? a.score > b.score : a.index < b.index;
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), better);
  all.resize(keep);
  *hits = std::move(all);
  return Status::ok();
}

}  // namespace encrt
