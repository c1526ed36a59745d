// What the C API's translation units share: the handle behind encrt_model, the per-thread last
// error, Status to encrt_status, and "name=value,..." backend options.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "encrt/encrt.h"
#include "encrt/encrt.hpp"

struct encrt_model {
  std::unique_ptr<encrt::Model> model;
  encrt::HeadInfo head;  // for the const char* the C API hands out (empty without a head)
};

namespace encrt::capi {

// Records a failure's message for encrt_last_error() on this thread and maps its code.
encrt_status to_c(const Status& s);
encrt_status null_argument(const char* what);
const char* last_error();
// "a=1,b=2" into a map; an entry without '=' or with an empty name is an error.
Status parse_backend_options(const char* text, std::map<std::string, std::string>* out);

}  // namespace encrt::capi
