// encrt similarity MODEL TEXT TEXT [TEXT ...] [--json]: the cosine similarity of the texts'
// sentence embeddings, the first text against each other one, or every pair with --matrix.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/commands.h"
#include "cli/task_args.h"
#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"

namespace encrt::cli {

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "encrt similarity: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_similarity(int argc, char** argv) {
  Args args = task_command_args({"file"}, {"matrix"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  std::vector<std::string> texts;
  if (!args.positional().empty()) texts.assign(args.positional().begin() + 1, args.positional().end());
  if (args.has("file"))
    if (Status s = read_lines(args.get("file"), &texts); !s) return fail(s);
  if (args.has("help") || args.positional().empty() || texts.size() < 2) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt similarity MODEL TEXT TEXT [TEXT ...] [--file FILE] [--matrix]\n%s\n  %s\n"
                 "  the cosine similarity of sentence embeddings: the first text against each other text,\n"
                 "  or every pair with --matrix\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<TextEmbedder> embedder;
  if (Status s = TextEmbedder::create(*model, options, &embedder); !s) return fail(s);
  std::vector<float> emb;
  if (Status s = embedder->embed(texts, &emb); !s) return fail(s);
  const size_t n = texts.size(), dim = static_cast<size_t>(embedder->dimension());
  auto cosine = [&](size_t i, size_t j) {
    double dot = 0.0;
    for (size_t d = 0; d < dim; ++d) dot += static_cast<double>(emb[i * dim + d]) * emb[j * dim + d];
    return dot;
  };
  const bool matrix = args.has("matrix");
  if (args.has("json")) {
    std::printf("{\"texts\": [");
    for (size_t i = 0; i < n; ++i) std::printf("%s%s", i ? ", " : "", json_string(texts[i]).c_str());
    if (matrix) {
      std::printf("],\n \"matrix\": [");
      for (size_t i = 0; i < n; ++i) {
        std::printf("%s\n  [", i ? "," : "");
        for (size_t j = 0; j < n; ++j) std::printf("%s%.7f", j ? ", " : "", cosine(i, j));
        std::printf("]");
      }
      std::printf("\n]}\n");
    } else {
      std::printf("],\n \"similarities\": [");
      for (size_t j = 1; j < n; ++j) std::printf("%s%.7f", j > 1 ? ", " : "", cosine(0, j));
      std::printf("]}\n");
    }
  } else if (matrix) {
    std::printf("      ");
    for (size_t j = 0; j < n; ++j) std::printf(" %7zu", j);
    std::printf("\n");
    for (size_t i = 0; i < n; ++i) {
      std::printf("[%3zu] ", i);
      for (size_t j = 0; j < n; ++j) std::printf(" %7.4f", cosine(i, j));
      std::printf("  %s\n", texts[i].c_str());
    }
  } else {
    std::printf("cosine   text (against: %s)\n", texts[0].c_str());
    for (size_t j = 1; j < n; ++j) std::printf("%7.4f  %s\n", cosine(0, j), texts[j].c_str());
  }
  if (args.has("verbose")) print_timings("similarity", embedder->last_timings());
  return 0;
}

}  // namespace encrt::cli
