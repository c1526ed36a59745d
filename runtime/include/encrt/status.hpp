// encrt: errors are values. Every fallible call returns a Status (or a Result<T>) and nothing in
// the library aborts or exits the host process.
#pragma once

#include <string>
#include <utility>

#include "encrt/export.h"

namespace encrt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller passed something unusable (null pointer, bad shape, bad id)
  kIoError,           // a file could not be opened, mapped, read or written
  kInvalidModel,      // a model file failed verification or validation
  kUnsupported,       // a valid request this build or this CPU cannot serve
  kOutOfMemory,       // an allocation or a caller-provided arena was too small
  kInternal,          // a broken invariant inside encrt (a bug: please report it)
};

ENCRT_API const char* status_code_name(StatusCode code);

class ENCRT_API Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid model: tensor 'layers.0.ffn.up.weight' has shape [3, 4], expected [1536, 384]"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status invalid_model(std::string m) { return {StatusCode::kInvalidModel, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

}  // namespace encrt
