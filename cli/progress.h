// Progress display for long CLI stages: a redrawn bar on a terminal, plain lines when piped.
#pragma once

#include <string>

namespace encrt::cli {

class Progress {
 public:
  explicit Progress(bool enabled);
  void update(const std::string& stage, int done, int total);
  void line(const std::string& text);  // a log line (ends any bar in progress)

 private:
  bool enabled_;
  bool tty_;
  bool bar_open_ = false;
  std::string stage_;
};

}  // namespace encrt::cli
