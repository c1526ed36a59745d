// encrt rerank MODEL --query TEXT (PASSAGE... | --file FILE) [-k K] [--json]: passages sorted by
// a cross-encoder's relevance to the query.
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
  std::fprintf(stderr, "encrt rerank: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_rerank(int argc, char** argv) {
  Args args = task_command_args({"query", "file", "top-k", "truncation"}, {}, {{"-k", "--top-k"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  std::vector<std::string> passages;
  if (!args.positional().empty()) passages.assign(args.positional().begin() + 1, args.positional().end());
  if (args.has("file"))
    if (Status s = read_lines(args.get("file"), &passages); !s) return fail(s);
  if (args.has("help") || args.positional().empty() || !args.has("query") || passages.empty()) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt rerank MODEL --query TEXT (PASSAGE [PASSAGE ...] | --file FILE) [-k K]\n"
                 "                    [--truncation longest_first|only_first|only_second]\n%s\n  %s\n"
                 "  the passages, most relevant first, scored by the model's cross-encoder head on\n"
                 "  [CLS] query [SEP] passage [SEP]; -k shows only the best K\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  int k = static_cast<int>(passages.size());
  if (Status s = args.get_int("top-k", k, &k); !s) return fail(s);
  if (k < 1) return fail(invalid_argument("-k must be >= 1"));
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  if (args.has("truncation"))
    if (Status s = parse_truncation(args.get("truncation"), &options.truncation); !s) return fail(s);
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<Reranker> reranker;
  if (Status s = Reranker::create(*model, options, &reranker); !s) return fail(s);
  std::vector<RankedPassage> ranked;
  const std::string query = args.get("query");
  if (Status s = reranker->rank(query, passages, &ranked); !s) return fail(s);
  if (ranked.size() > static_cast<size_t>(k)) ranked.resize(static_cast<size_t>(k));
  if (args.has("json")) {
    std::printf("{\"query\": %s, \"results\": [", json_string(query).c_str());
    for (size_t i = 0; i < ranked.size(); ++i)
      std::printf("%s\n  {\"index\": %zu, \"score\": %.7g, \"logit\": %.7g, \"text\": %s}", i ? "," : "",
                  ranked[i].index, ranked[i].score, ranked[i].logit, json_string(passages[ranked[i].index]).c_str());
    std::printf("\n]}\n");
  } else {
    std::printf("query: %s\n  rank  score   passage\n", query.c_str());
    for (size_t i = 0; i < ranked.size(); ++i)
      std::printf("  %4zu  %.4f  %s\n", i + 1, ranked[i].score, passages[ranked[i].index].c_str());
  }
  if (args.has("verbose")) print_timings("rerank", reranker->last_timings());
  return 0;
}

}  // namespace encrt::cli
