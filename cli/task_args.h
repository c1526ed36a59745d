// What the text commands (embed, similarity, search) share: the task options (--max-batch,
// --max-seq, --no-truncate, --threads and the backend options), reading texts from arguments or
// a file, and writing JSON strings.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "encrt/status.hpp"
#include "encrt/tasks.hpp"

namespace encrt::cli {

// Option names, for Args (valued and flags), and their usage lines.
inline const char* const kTaskValued[] = {"max-batch", "max-seq", "threads", "backend", "isa", "backend-options"};
inline const char* const kTaskFlags[] = {"no-truncate", "no-graphs", "verbose", "json"};
extern const char* const kTaskUsage;

// An Args for a text command: the task options and flags (and --help), plus the command's own.
Args task_command_args(std::initializer_list<const char*> valued, std::initializer_list<const char*> flags = {},
                       std::map<std::string, std::string> aliases = {});

Status apply_task_args(const Args& args, TaskOptions* options);

// Each non-empty line of `path` ("-": standard input) is a text; a trailing '\r' is dropped.
Status read_lines(const std::string& path, std::vector<std::string>* lines);

// `s` as a JSON string literal (quotes, backslashes and control characters escaped; UTF-8 kept).
std::string json_string(const std::string& s);

// Prints the last call's timings to stderr, as --verbose asks.
void print_timings(const char* what, const TaskTimings& t);

}  // namespace encrt::cli
