// Semantic search in C++ alone: embed the lines of a file once, then answer queries with the
// sentences nearest in meaning (cosine similarity of sentence embeddings).
//
//   encrt_semantic_search MODEL.encrt CORPUS.txt QUERY [QUERY ...] [-k K]
//
// With all-MiniLM-L6-v2 (fp32, fp16 or int8) a query finds the lines that say the same thing in
// other words.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"

namespace {

int fail(const encrt::Status& s) {
  std::fprintf(stderr, "encrt_semantic_search: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> queries;
  size_t k = 3;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-k") && i + 1 < argc) {
      k = static_cast<size_t>(std::atoi(argv[++i]));
    } else {
      queries.emplace_back(argv[i]);
    }
  }
  if (argc < 4 || queries.empty() || k == 0) {
    std::fprintf(stderr, "usage: encrt_semantic_search MODEL.encrt CORPUS.txt QUERY [QUERY ...] [-k K]\n");
    return 2;
  }
  std::vector<std::string> corpus;
  std::ifstream file(argv[2]);
  if (!file) return fail(encrt::Status(encrt::StatusCode::kIoError, std::string("cannot open ") + argv[2]));
  for (std::string line; std::getline(file, line);)
    if (!line.empty()) corpus.push_back(line);

  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(argv[1], &model); !s) return fail(s);
  encrt::TaskOptions options;  // batches of 16 texts, the model's max_seq_len, longer texts cut
  std::unique_ptr<encrt::TextEmbedder> embedder;
  if (encrt::Status s = encrt::TextEmbedder::create(*model, options, &embedder); !s) return fail(s);
  std::unique_ptr<encrt::SemanticIndex> index;
  if (encrt::Status s = encrt::SemanticIndex::create(embedder.get(), corpus, &index); !s) return fail(s);
  std::printf("%zu sentences embedded in %.1f ms\n", index->size(), embedder->last_timings().run_ms);

  std::vector<encrt::SearchHit> hits;
  for (const std::string& query : queries) {
    if (encrt::Status s = index->search(query, k, &hits); !s) return fail(s);
    std::printf("\n%s\n", query.c_str());
    for (const encrt::SearchHit& hit : hits) std::printf("  %.4f  %s\n", hit.score, index->sentence(hit.index).c_str());
  }
  return 0;
}
