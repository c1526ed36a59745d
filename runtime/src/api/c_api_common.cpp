#include "api/c_api_common.h"

namespace encrt::capi {

namespace {
thread_local std::string g_last_error;
}  // namespace

encrt_status to_c(const Status& s) {
  if (s.is_ok()) return ENCRT_OK;
  g_last_error = s.to_string();
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return ENCRT_INVALID_ARGUMENT;
    case StatusCode::kIoError: return ENCRT_IO_ERROR;
    case StatusCode::kInvalidModel: return ENCRT_INVALID_MODEL;
    case StatusCode::kUnsupported: return ENCRT_UNSUPPORTED;
    case StatusCode::kOutOfMemory: return ENCRT_OUT_OF_MEMORY;
    default: return ENCRT_INTERNAL;
  }
}

encrt_status null_argument(const char* what) { return to_c(invalid_argument(std::string(what) + " is NULL")); }

const char* last_error() { return g_last_error.c_str(); }

Status parse_backend_options(const char* text, std::map<std::string, std::string>* out) {
  std::string all = text;
  size_t begin = 0;
  while (begin <= all.size()) {
    size_t end = all.find(',', begin);
    if (end == std::string::npos) end = all.size();
    const std::string item = all.substr(begin, end - begin);
    if (!item.empty()) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) return invalid_argument("backend option '" + item + "' is not name=value");
      (*out)[item.substr(0, eq)] = item.substr(eq + 1);
    }
    begin = end + 1;
  }
  return Status::ok();
}

}  // namespace encrt::capi
