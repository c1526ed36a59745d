// --padding auto|packed|padded (SessionOptions::padding), for the commands that run a session
// on a given batch (run, bench).
#pragma once

#include "cli/args.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

extern const char* const kPaddingUsage;

// Sets options.padding from --padding (absent: auto); another value is an error that lists them.
Status apply_padding_arg(const Args& args, SessionOptions* options);

}  // namespace encrt::cli
