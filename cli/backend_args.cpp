#include "cli/backend_args.h"

#include <fstream>
#include <sstream>

namespace encrt::cli {

namespace {

// --backend-options @FILE: the options of `encrt tune --json`'s result ("options": "...") or a
// file of NAME=VALUE items separated by commas or white space.
Status read_options_file(const std::string& path, std::string* list) {
  std::ifstream in(path);
  if (!in) return io_error("--backend-options @" + path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (const size_t key = s.rfind("\"options\""); key != std::string::npos) {  // the last line's result
    const size_t open = s.find('"', s.find(':', key));
    const size_t close = open == std::string::npos ? open : s.find('"', open + 1);
    if (close == std::string::npos) return invalid_argument("--backend-options @" + path + ": \"options\" is not a string");
    s = s.substr(open + 1, close - open - 1);
  }
  list->clear();
  for (char ch : s) {
    const bool space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
    if (space && !list->empty() && list->back() != ',') list->push_back(',');
    if (!space) list->push_back(ch);
  }
  while (!list->empty() && list->back() == ',') list->pop_back();
  return Status::ok();
}

}  // namespace

const char* const kBackendUsage =
    "[--backend auto|cpu|xnnpack|cuda] [--isa LEVEL] [--backend-options NAME=VALUE,...|@FILE] [--no-graphs]\n"
    "  --backend-options @FILE: the options in FILE (encrt tune --json's result, or NAME=VALUE items)\n"
    "  --isa: the CPU backend's kernel level: scalar|avx2|avx2vnni|avx512|avx512vnni|avx512fp16|amx|\n"
    "         neon|neondot|neonfp16|neoni8mm (default: the best this CPU has)\n"
    "  --no-graphs: the cuda backend runs each op eagerly instead of replaying CUDA graphs";

Status apply_backend_args(const Args& args, SessionOptions* options) {
  options->backend = args.get("backend", "auto");
  std::string list = args.get("backend-options");
  if (!list.empty() && list[0] == '@')
    if (Status s = read_options_file(list.substr(1), &list); !s) return s;
  size_t begin = 0;
  while (begin < list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(begin, end - begin);
    if (item.empty()) {  // (",," or a trailing comma)
      begin = end + 1;
      continue;
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--backend-options: '" + item + "' is not NAME=VALUE");
    options->backend_options[item.substr(0, eq)] = item.substr(eq + 1);
    begin = end + 1;
  }
  if (args.has("isa")) options->backend_options["isa"] = args.get("isa");
  if (args.has("no-graphs")) options->backend_options["graphs"] = "off";  // the cuda backend's
  return Status::ok();
}

}  // namespace encrt::cli
