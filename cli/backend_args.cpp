#include "cli/backend_args.h"

namespace encrt::cli {

const char* const kBackendUsage =
    "[--backend auto|cpu|xnnpack|cuda] [--isa LEVEL] [--backend-options NAME=VALUE,...] [--no-graphs]\n"
    "  --isa: the CPU backend's kernel level: scalar|avx2|avx2vnni|avx512|avx512vnni|avx512fp16|amx|\n"
    "         neon|neondot|neonfp16|neoni8mm (default: the best this CPU has)\n"
    "  --no-graphs: the cuda backend runs each op eagerly instead of replaying CUDA graphs";

Status apply_backend_args(const Args& args, SessionOptions* options) {
  options->backend = args.get("backend", "auto");
  const std::string list = args.get("backend-options");
  size_t begin = 0;
  while (begin < list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(begin, end - begin);
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
