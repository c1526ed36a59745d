// encrt embed MODEL (TEXT... | --file FILE) [-o OUT.npy] [--json]: sentence embeddings (the
// model's pooling, unit length), one per text.
#include <algorithm>
#include <cstdio>
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
  std::fprintf(stderr, "encrt embed: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_embed(int argc, char** argv) {
  Args args = task_command_args({"file", "out"}, {}, {{"-o", "--out"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  const bool usage_error = args.positional().empty() || (args.positional().size() == 1) != args.has("file");
  if (args.has("help") || usage_error) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt embed MODEL (TEXT [TEXT ...] | --file FILE) [-o OUT.npy]\n%s\n"
                 "  %s\n"
                 "  prints each text's embedding (the model's pooling, scaled to unit length): the first\n"
                 "  values as a table, or all of them with --json; -o writes them as float32 [texts, dim]\n"
                 "  (FILE: one text per line, - for standard input)\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  std::vector<std::string> texts(args.positional().begin() + 1, args.positional().end());
  if (args.has("file"))
    if (Status s = read_lines(args.get("file"), &texts); !s) return fail(s);
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<TextEmbedder> embedder;
  if (Status s = TextEmbedder::create(*model, options, &embedder); !s) return fail(s);
  std::vector<float> emb;
  if (Status s = embedder->embed(texts, &emb); !s) return fail(s);
  const size_t dim = static_cast<size_t>(embedder->dimension());
  if (args.has("out")) {
    const std::vector<int64_t> shape = {static_cast<int64_t>(texts.size()), static_cast<int64_t>(dim)};
    if (Status s = npy::write_float32(args.get("out"), shape, emb.data()); !s) return fail(s);
  }
  if (args.has("json")) {
    std::printf("{\"dimension\": %zu, \"embeddings\": [", dim);
    for (size_t i = 0; i < texts.size(); ++i) {
      std::printf("%s\n  {\"text\": %s, \"embedding\": [", i ? "," : "", json_string(texts[i]).c_str());
      for (size_t d = 0; d < dim; ++d) std::printf("%s%.9g", d ? ", " : "", emb[i * dim + d]);
      std::printf("]}");
    }
    std::printf("\n]}\n");
  } else if (!args.has("out")) {
    std::printf("%-5s  %-44s  %s\n", "text", "embedding (first values)", "text");
    for (size_t i = 0; i < texts.size(); ++i) {
      std::string head;
      for (size_t d = 0; d < std::min<size_t>(4, dim); ++d) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%+.4f ", emb[i * dim + d]);
        head += buf;
      }
      std::printf("%-5zu  [%s...]  %s\n", i, head.c_str(), texts[i].c_str());
    }
  }
  if (args.has("verbose")) print_timings("embed", embedder->last_timings());
  return 0;
}

}  // namespace encrt::cli
