#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace encrt::cli {

Progress::Progress(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(const std::string& stage, int done, int total) {
  if (!enabled_ || total <= 0) return;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = done * kWidth / total;
    std::fprintf(stderr, "\r%-28s [%.*s%*s] %d/%d", stage.c_str(), filled, "==============================",
                 kWidth - filled, "", done, total);
    bar_open_ = done < total;
    if (!bar_open_) std::fputc('\n', stderr);
    std::fflush(stderr);
  } else if (done == total || stage != stage_) {
    // Piped: one line when a stage starts and one when it ends.
    std::fprintf(stderr, "%s: %d/%d\n", stage.c_str(), done, total);
  }
  stage_ = stage;
}

void Progress::line(const std::string& text) {
  if (!enabled_) return;
  if (bar_open_) std::fputc('\n', stderr), bar_open_ = false;
  std::fprintf(stderr, "%s\n", text.c_str());
}

}  // namespace encrt::cli
