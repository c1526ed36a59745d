// The options every command that creates a session shares: --backend, --isa (the CPU backend's
// kernel level) and --backend-options name=value,...
#pragma once

#include "cli/args.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

// The option names, for Args.
inline const char* const kBackendValued[] = {"backend", "isa", "backend-options"};
// One usage line for them.
extern const char* const kBackendUsage;

// Fills options.backend and options.backend_options from the parsed arguments.
Status apply_backend_args(const Args& args, SessionOptions* options);

}  // namespace encrt::cli
