// A minimal command-line parser for the encrt sub-commands: positional arguments plus
// `--name value` / `--flag` options, with unknown options reported as errors.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "encrt/status.hpp"

namespace encrt::cli {

class Args {
 public:
  // `valued` are options that take a value; `flags` are boolean. Aliases like -o map to names.
  Args(std::set<std::string> valued, std::set<std::string> flags, std::map<std::string, std::string> aliases = {})
      : valued_(std::move(valued)), flags_(std::move(flags)), aliases_(std::move(aliases)) {}

  Status parse(int argc, char** argv);  // argv[0] is the first argument after the sub-command

  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& name) const { return values_.count(name) || set_flags_.count(name); }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  Status get_int(const std::string& name, int fallback, int* out) const;
  Status get_double(const std::string& name, double fallback, double* out) const;

 private:
  std::set<std::string> valued_, flags_;
  std::map<std::string, std::string> aliases_;
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> set_flags_;
};

}  // namespace encrt::cli
