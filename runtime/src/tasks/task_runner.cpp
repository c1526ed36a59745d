#include "tasks/task_runner.h"

#include <chrono>

namespace encrt::tasks {

long long steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double ms_since_steady(long long start_ns) { return static_cast<double>(steady_now_ns() - start_ns) * 1e-6; }

Status TaskRunner::init(const Model& model, const TaskOptions& options, const char* task, const std::string& head_kind,
                        std::vector<std::string> outputs) {
  if (!head_kind.empty()) {
    if (Status s = model.head(&head_); !s)
      return Status(StatusCode::kUnsupported, std::string(task) + ": " + s.message());
    if (head_.kind != head_kind) {
      return Status(StatusCode::kUnsupported,
                    std::string(task) + " needs a " + head_kind + " head; the model's is " + head_.kind);
    }
    if (head_.num_labels() < 1)
      return Status(StatusCode::kInvalidModel, std::string(task) + ": the head has no labels");
  }
  if (options.max_batch < 1) return invalid_argument(std::string(task) + ": max_batch must be >= 1");
  const int model_max = model.config().max_seq_len;
  if (options.max_seq < 0 || options.max_seq > model_max) {
    return invalid_argument(std::string(task) + ": max_seq " + std::to_string(options.max_seq) + " outside 0.." +
                            std::to_string(model_max) + " (the model's max_seq_len; 0 = that)");
  }
  options_ = options;
  outputs_ = std::move(outputs);
  values_.assign(outputs_.size(), {});
  hidden_size_ = model.config().hidden_size;
  encode_.max_length = options.max_seq > 0 ? options.max_seq : model_max;
  encode_.truncate = options.truncate;
  encode_.truncation = options.truncation;
  if (Status s = Tokenizer::create(model, &tokenizer_); !s) return s;
  SessionOptions so;
  so.max_batch = options.max_batch;
  so.max_seq = encode_.max_length;
  so.threads = options.threads;
  so.backend = options.backend;
  so.backend_options = options.backend_options;
  return Session::create(model, so, &session_);
}

Status TaskRunner::run_chunk() {
  const long long t0 = steady_now_ns();
  timings_.tokens += batch_.real_tokens();
  if (Status s = session_->run(batch_.inputs()); !s) return s;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    OutputInfo info;
    if (Status s = session_->output(outputs_[i], &info); !s) return s;
    if (info.dtype != DType::kF32) return Status(StatusCode::kInternal, "output " + outputs_[i] + " is not f32");
    values_[i].resize(info.bytes / sizeof(float));
    if (Status s = session_->copy_output(outputs_[i], values_[i].data(), info.bytes); !s) return s;
  }
  timings_.run_ms += ms_since_steady(t0);
  ++timings_.runs;
  return Status::ok();
}

}  // namespace encrt::tasks
