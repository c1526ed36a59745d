// encrt ner MODEL (TEXT... | --file FILE) [--aggregation none|simple|first|average|max] [--json]:
// named entities with their labels, scores and character spans, from a token classification head.
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
  std::fprintf(stderr, "encrt ner: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_ner(int argc, char** argv) {
  Args args = task_command_args({"file", "aggregation"}, {"keep-o"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  std::vector<std::string> texts;
  if (!args.positional().empty()) texts.assign(args.positional().begin() + 1, args.positional().end());
  if (args.has("file"))
    if (Status s = read_lines(args.get("file"), &texts); !s) return fail(s);
  if (args.has("help") || args.positional().empty() || texts.empty()) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt ner MODEL (TEXT [TEXT ...] | --file FILE)\n"
                 "                 [--aggregation none|simple|first|average|max] [--keep-o]\n%s\n  %s\n"
                 "  entities from the model's token classification head, grouped as Hugging Face's\n"
                 "  token-classification pipeline groups them (default: simple); start/end are byte\n"
                 "  offsets into the text; --keep-o keeps the 'O' label's groups\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  EntityOptions eo;
  if (Status s = parse_entity_aggregation(args.get("aggregation", "simple"), &eo.aggregation); !s) return fail(s);
  if (args.has("keep-o")) eo.ignore_labels.clear();
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<EntityTagger> tagger;
  if (Status s = EntityTagger::create(*model, options, &tagger); !s) return fail(s);
  std::vector<std::vector<Entity>> entities;
  if (Status s = tagger->tag(texts, eo, &entities); !s) return fail(s);
  if (args.has("json")) {
    std::printf("{\"aggregation\": %s, \"results\": [", json_string(entity_aggregation_name(eo.aggregation)).c_str());
    for (size_t i = 0; i < texts.size(); ++i) {
      std::printf("%s\n  {\"text\": %s, \"entities\": [", i ? "," : "", json_string(texts[i]).c_str());
      for (size_t e = 0; e < entities[i].size(); ++e) {
        const Entity& x = entities[i][e];
        std::printf("%s{\"label\": %s, \"score\": %.7g, \"start\": %zu, \"end\": %zu, \"word\": %s}", e ? ", " : "",
                    json_string(x.label).c_str(), x.score, x.start, x.end, json_string(x.word).c_str());
      }
      std::printf("]}");
    }
    std::printf("\n]}\n");
  } else {
    for (size_t i = 0; i < texts.size(); ++i) {
      std::printf("%s%s\n", i ? "\n" : "", texts[i].c_str());
      if (entities[i].empty()) std::printf("  (no entities)\n");
      for (const Entity& x : entities[i])
        std::printf("  %-8s %.4f  [%zu, %zu)  %s\n", x.label.c_str(), x.score, x.start, x.end, x.word.c_str());
    }
  }
  if (args.has("verbose")) print_timings("ner", tagger->last_timings());
  return 0;
}

}  // namespace encrt::cli
