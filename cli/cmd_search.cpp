// encrt search MODEL --corpus FILE (--query TEXT | --queries FILE) [-k K] [--cache FILE.npy]:
// the K sentences of FILE nearest to each query (cosine of sentence embeddings). The corpus is
// embedded once per call, or once for all calls with --cache: its embeddings are written there
// (float32 [sentences, dim], plus FILE.npy.key naming the model, corpus and options they are
// for) and read back while that key still matches.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/commands.h"
#include "cli/task_args.h"
#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"
#include "npy/npy.h"

namespace encrt::cli {

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "encrt search: %s\n", s.to_string().c_str());
  return 1;
}

// FNV-1a, 64 bits: a change detector for the cache key, not a security boundary.
struct Fnv1a {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ull;
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);
  }
};

Status file_hash(const std::string& path, uint64_t* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kIoError, "cannot open '" + path + "'");
  Fnv1a h;
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.add(buf.data(), static_cast<size_t>(f.gcount()));
  }
  *out = h.h;
  return Status::ok();
}

// What the cached embeddings depend on: the model's bytes, the corpus, and the options that
// change the numbers (length cut, backend and its options).
Status cache_key(const std::string& model_path, const std::vector<std::string>& corpus, const TaskOptions& o, int dim,
                 std::string* key) {
  uint64_t model_hash = 0;
  if (Status s = file_hash(model_path, &model_hash); !s) return s;
  Fnv1a corpus_hash;
  for (const std::string& line : corpus) corpus_hash.add(line);
  std::ostringstream k;
  k << "encrt search cache 1\nmodel " << std::hex << model_hash << "\ncorpus " << corpus_hash.h << std::dec
    << "\nsentences " << corpus.size() << "\ndimension " << dim << "\nmax_seq " << o.max_seq << "\ntruncate "
    << o.truncate << "\nbackend " << o.backend << "\n";
  for (const auto& [name, value] : o.backend_options) k << "option " << name << "=" << value << "\n";
  *key = k.str();
  return Status::ok();
}

bool read_cache(const std::string& path, const std::string& key, size_t rows, int dim, std::vector<float>* emb) {
  std::ifstream kf(path + ".key", std::ios::binary);
  if (!kf) return false;
  const std::string stored((std::istreambuf_iterator<char>(kf)), std::istreambuf_iterator<char>());
  if (stored != key) return false;
  npy::Float32Array a;
  if (!npy::read_float32(path, &a)) return false;
  if (a.shape.size() != 2 || a.shape[0] != static_cast<int64_t>(rows) || a.shape[1] != dim) return false;
  *emb = std::move(a.data);
  return true;
}

Status write_cache(const std::string& path, const std::string& key, size_t rows, int dim,
                   const std::vector<float>& emb) {
  if (Status s = npy::write_float32(path, {static_cast<int64_t>(rows), dim}, emb.data()); !s) return s;
  std::ofstream kf(path + ".key", std::ios::binary);
  kf << key;
  if (!kf) return Status(StatusCode::kIoError, "cannot write '" + path + ".key'");
  return Status::ok();
}
}  // namespace

int cmd_search(int argc, char** argv) {
  Args args = task_command_args({"corpus", "query", "queries", "top-k", "cache"}, {}, {{"-k", "--top-k"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1 || !args.has("corpus") ||
      args.has("query") == args.has("queries")) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt search MODEL --corpus FILE (--query TEXT | --queries FILE) [-k K] [--cache FILE.npy]\n"
                 "%s\n  %s\n"
                 "  the K (default 5) lines of --corpus nearest to each query by cosine similarity of sentence\n"
                 "  embeddings; the corpus is embedded once; --cache keeps its embeddings for later calls\n"
                 "  (recomputed when the model, the corpus or the options change)\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  int k = 5;
  if (Status s = args.get_int("top-k", 5, &k); !s) return fail(s);
  if (k < 1) return fail(invalid_argument("-k must be >= 1"));
  std::vector<std::string> corpus, queries;
  if (Status s = read_lines(args.get("corpus"), &corpus); !s) return fail(s);
  if (corpus.empty()) return fail(invalid_argument("--corpus " + args.get("corpus") + " has no lines"));
  if (args.has("query"))
    queries.push_back(args.get("query"));
  else if (Status s = read_lines(args.get("queries"), &queries); !s)
    return fail(s);
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  const std::string model_path = args.positional()[0];
  std::unique_ptr<Model> model;
  if (Status s = Model::load(model_path, &model); !s) return fail(s);
  std::unique_ptr<TextEmbedder> embedder;
  if (Status s = TextEmbedder::create(*model, options, &embedder); !s) return fail(s);

  const bool verbose = args.has("verbose");
  std::string key;
  std::vector<float> emb;
  bool cached = false;
  const std::string cache = args.get("cache");
  if (!cache.empty()) {
    if (Status s = cache_key(model_path, corpus, options, embedder->dimension(), &key); !s) return fail(s);
    cached = read_cache(cache, key, corpus.size(), embedder->dimension(), &emb);
  }
  std::unique_ptr<SemanticIndex> index;
  if (cached) {
    if (verbose) std::fprintf(stderr, "search: %zu corpus embeddings read from %s\n", corpus.size(), cache.c_str());
    if (Status s = SemanticIndex::from_embeddings(embedder.get(), corpus, std::move(emb), &index); !s) return fail(s);
  } else {
    if (Status s = SemanticIndex::create(embedder.get(), corpus, &index); !s) return fail(s);
    if (verbose) print_timings("search: corpus", embedder->last_timings());
    if (!cache.empty())
      if (Status s = write_cache(cache, key, corpus.size(), embedder->dimension(), index->embeddings()); !s)
        return fail(s);
  }

  const bool json = args.has("json");
  if (json) std::printf("{\"results\": [");
  std::vector<SearchHit> hits;
  for (size_t q = 0; q < queries.size(); ++q) {
    const auto t0 = std::chrono::steady_clock::now();
    if (Status s = index->search(queries[q], static_cast<size_t>(k), &hits); !s) return fail(s);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (json) {
      std::printf("%s\n  {\"query\": %s, \"hits\": [", q ? "," : "", json_string(queries[q]).c_str());
      for (size_t h = 0; h < hits.size(); ++h)
        std::printf("%s{\"index\": %zu, \"score\": %.7f, \"text\": %s}", h ? ", " : "", hits[h].index, hits[h].score,
                    json_string(index->sentence(hits[h].index)).c_str());
      std::printf("]}");
    } else {
      std::printf("%squery: %s\n", q ? "\n" : "", queries[q].c_str());
      std::printf("  rank  score   line  text\n");
      for (size_t h = 0; h < hits.size(); ++h)
        std::printf("  %4zu  %.4f %5zu  %s\n", h + 1, hits[h].score, hits[h].index + 1,
                    index->sentence(hits[h].index).c_str());
    }
    if (verbose) std::fprintf(stderr, "search: query %zu in %.3f ms\n", q, ms);
  }
  if (json) std::printf("\n]}\n");
  return 0;
}

}  // namespace encrt::cli
