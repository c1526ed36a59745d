#include "cli/args.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace encrt::cli {

Status Args::parse(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (auto it = aliases_.find(a); it != aliases_.end()) a = it->second;
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2), value;
      const size_t eq = name.find('=');
      const bool inline_value = eq != std::string::npos;
      if (inline_value) value = name.substr(eq + 1), name = name.substr(0, eq);
      if (flags_.count(name)) {
        if (inline_value) return invalid_argument("option --" + name + " takes no value");
        set_flags_.insert(name);
      } else if (valued_.count(name)) {
        if (!inline_value) {
          if (i + 1 >= argc) return invalid_argument("option --" + name + " needs a value");
          value = argv[++i];
        }
        values_[name] = value;
      } else {
        return invalid_argument("unknown option --" + name);
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return invalid_argument("unknown option " + a);
    } else {
      positional_.push_back(a);
    }
  }
  return Status::ok();
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

Status Args::get_int(const std::string& name, int fallback, int* out) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    *out = fallback;
    return Status::ok();
  }
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  if (errno || end == it->second.c_str() || *end != '\0' || v < std::numeric_limits<int>::min() ||
      v > std::numeric_limits<int>::max())
    return invalid_argument("option --" + name + " expects an integer, got '" + it->second + "'");
  *out = static_cast<int>(v);
  return Status::ok();
}

Status Args::get_double(const std::string& name, double fallback, double* out) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    *out = fallback;
    return Status::ok();
  }
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0')
    return invalid_argument("option --" + name + " expects a number, got '" + it->second + "'");
  *out = v;
  return Status::ok();
}

}  // namespace encrt::cli
