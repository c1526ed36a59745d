#include "cli/padding_arg.h"

namespace encrt::cli {

const char* const kPaddingUsage =
    "[--padding auto|packed|padded]\n"
    "  --padding: packed computes the real tokens only (mask == 1; token outputs are zeros at padding),\n"
    "             padded every position, auto (default) packed when the batch has padding and the\n"
    "             session can pack";

Status apply_padding_arg(const Args& args, SessionOptions* options) {
  const std::string v = args.get("padding", "auto");
  if (v == "auto") options->padding = Padding::kAuto;
  else if (v == "packed") options->padding = Padding::kPacked;
  else if (v == "padded") options->padding = Padding::kPadded;
  else return invalid_argument("--padding must be auto, packed or padded, not '" + v + "'");
  return Status::ok();
}

}  // namespace encrt::cli
