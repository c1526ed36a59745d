// encrt classify MODEL (TEXT... | --file FILE) [--pair TEXT2 | --pair-file FILE2] [--top K] [--json]:
// a sequence classification head's label and scores for each text (or pair of texts).
#include <algorithm>
#include <cstdio>
#include <numeric>
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
  std::fprintf(stderr, "encrt classify: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_classify(int argc, char** argv) {
  Args args = task_command_args({"file", "pair", "pair-file", "top", "truncation"}, {});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  std::vector<std::string> texts, seconds;
  if (!args.positional().empty()) texts.assign(args.positional().begin() + 1, args.positional().end());
  if (args.has("file"))
    if (Status s = read_lines(args.get("file"), &texts); !s) return fail(s);
  if (args.has("pair")) seconds.push_back(args.get("pair"));
  if (args.has("pair-file"))
    if (Status s = read_lines(args.get("pair-file"), &seconds); !s) return fail(s);
  if (args.has("help") || args.positional().empty() || texts.empty()) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt classify MODEL (TEXT [TEXT ...] | --file FILE) [--pair TEXT2 | --pair-file FILE2]\n"
                 "                      [--top K] [--truncation longest_first|only_first|only_second]\n%s\n  %s\n"
                 "  each text's label from the model's sequence classification head, with its score and the\n"
                 "  next best (--top K, default 3); with --pair / --pair-file each text is the first of a pair\n"
                 "  ([CLS] text [SEP] pair [SEP], token types 0 and 1): one second text for all, or one per line\n",
                 kTaskUsage, kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  if (!seconds.empty() && seconds.size() != 1 && seconds.size() != texts.size())
    return fail(invalid_argument("--pair-file has " + std::to_string(seconds.size()) + " lines for " +
                                 std::to_string(texts.size()) + " texts"));
  int top = 3;
  if (Status s = args.get_int("top", 3, &top); !s) return fail(s);
  if (top < 1) return fail(invalid_argument("--top must be >= 1"));
  TaskOptions options;
  if (Status s = apply_task_args(args, &options); !s) return fail(s);
  if (args.has("truncation"))
    if (Status s = parse_truncation(args.get("truncation"), &options.truncation); !s) return fail(s);
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<TextClassifier> classifier;
  if (Status s = TextClassifier::create(*model, options, &classifier); !s) return fail(s);
  std::vector<Classification> results;
  if (seconds.empty()) {
    if (Status s = classifier->classify(texts, &results); !s) return fail(s);
  } else {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (size_t i = 0; i < texts.size(); ++i) pairs.emplace_back(texts[i], seconds[seconds.size() == 1 ? 0 : i]);
    if (Status s = classifier->classify_pairs(pairs, &results); !s) return fail(s);
  }
  const HeadInfo& head = classifier->head();
  auto ranked = [&](const Classification& c) {
    std::vector<int> order(c.scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return c.scores[static_cast<size_t>(a)] > c.scores[static_cast<size_t>(b)]; });
    order.resize(std::min(order.size(), static_cast<size_t>(top)));
    return order;
  };
  if (args.has("json")) {
    std::printf("{\"problem_type\": %s, \"score_function\": %s, \"results\": [", json_string(head.problem_type).c_str(),
                json_string(head.score_function).c_str());
    for (size_t i = 0; i < results.size(); ++i) {
      const Classification& c = results[i];
      std::printf("%s\n  {\"text\": %s, ", i ? "," : "", json_string(texts[i]).c_str());
      if (!seconds.empty()) std::printf("\"pair\": %s, ", json_string(seconds[seconds.size() == 1 ? 0 : i]).c_str());
      std::printf("\"label\": %s, \"label_id\": %d, \"score\": %.7g, \"scores\": {", json_string(c.label).c_str(),
                  c.label_id, c.score);
      for (size_t k = 0; k < c.scores.size(); ++k)
        std::printf("%s%s: %.7g", k ? ", " : "", json_string(head.labels[k]).c_str(), c.scores[k]);
      std::printf("}, \"logits\": [");
      for (size_t k = 0; k < c.logits.size(); ++k) std::printf("%s%.7g", k ? ", " : "", c.logits[k]);
      std::printf("]}");
    }
    std::printf("\n]}\n");
  } else {
    for (size_t i = 0; i < results.size(); ++i) {
      const Classification& c = results[i];
      std::string line;
      for (int k : ranked(c)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4f", c.scores[static_cast<size_t>(k)]);
        line += (line.empty() ? "" : "  ") + head.labels[static_cast<size_t>(k)] + " " + buf;
      }
      std::printf("%-40s  %s\n", line.c_str(), texts[i].c_str());
    }
  }
  if (args.has("verbose")) print_timings("classify", classifier->last_timings());
  return 0;
}

}  // namespace encrt::cli
