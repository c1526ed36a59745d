#include "cli/task_args.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include "cli/backend_args.h"

namespace encrt::cli {

const char* const kTaskUsage =
    "  [--max-batch B] [--max-seq S] [--no-truncate] [--threads T] [--json] [--verbose]\n"
    "  --max-batch: texts per run (default 16); --max-seq: tokens per text, [CLS]/[SEP] included\n"
    "  (default: the model's max_seq_len); a longer text is cut there unless --no-truncate, which\n"
    "  makes it an error; --json: machine-readable output; --verbose: timings on stderr";

Args task_command_args(std::initializer_list<const char*> valued, std::initializer_list<const char*> flags,
                       std::map<std::string, std::string> aliases) {
  std::set<std::string> v(std::begin(kTaskValued), std::end(kTaskValued));
  v.insert(valued.begin(), valued.end());
  std::set<std::string> f(std::begin(kTaskFlags), std::end(kTaskFlags));
  f.insert(flags.begin(), flags.end());
  f.insert("help");
  return Args(std::move(v), std::move(f), std::move(aliases));
}

Status apply_task_args(const Args& args, TaskOptions* options) {
  if (Status s = args.get_int("max-batch", options->max_batch, &options->max_batch); !s) return s;
  if (Status s = args.get_int("max-seq", options->max_seq, &options->max_seq); !s) return s;
  if (Status s = args.get_int("threads", options->threads, &options->threads); !s) return s;
  options->truncate = !args.has("no-truncate");
  SessionOptions session;
  if (Status s = apply_backend_args(args, &session); !s) return s;
  options->backend = session.backend;
  options->backend_options = session.backend_options;
  return Status::ok();
}

Status read_lines(const std::string& path, std::vector<std::string>* lines) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Status(StatusCode::kIoError, "cannot open '" + path + "'");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines->push_back(line);
  }
  return Status::ok();
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void print_timings(const char* what, const TaskTimings& t) {
  std::fprintf(stderr, "%s: %d tokens in %d run(s): tokenize %.3f ms, run %.3f ms\n", what, t.tokens, t.runs,
               t.tokenize_ms, t.run_ms);
}

}  // namespace encrt::cli
